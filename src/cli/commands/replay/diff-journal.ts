import { jsonDoc, type CommandDocs } from "../../../json-fields.ts";
import { UsageError } from "../../../errors/index.ts";
import { isStdinPath } from "../../../fsutil/input.ts";
import { diffJournalInputs } from "../../../receipts/diff-fast.ts";
import { resolveJournalSource } from "../../../receipts/source.ts";
import { withInterrupts } from "../../interrupt.ts";
import { pyRepr } from "../../../pyjson/python.ts";
import type { PyValue } from "../../../pyjson/types.ts";
import { printJson, printLines } from "../../output.ts";
import type { ReplayContext } from "./context.ts";
import { REPLAY_TARGETS, REPLAY_VERBS } from "./verbs.ts";
import { refuseInapplicableFlags } from "./flags.ts";

const USAGE = "usage: bernstein replay diff-journal <LEFT> <RIGHT>   (each an agent id, a journal file or a receipt)";

/** `bernstein replay diff-journal A B`: exit 0 when the chains match, 1 at the first divergence. */
export async function runDiffJournal(ctx: ReplayContext): Promise<number> {
  refuseInapplicableFlags(ctx, "diff-journal", REPLAY_VERBS["diff-journal"]!.flags);
  if (ctx.positionals.length !== 2) throw new UsageError(USAGE);
  const [a, b] = ctx.positionals as [string, string];
  if (isStdinPath(a) && isStdinPath(b)) throw new UsageError("standard input can be only one side of diff-journal (- and /dev/stdin are the same stream)");
  // A side copied first (standard input, a remote receipt) may take long: a signal then ends it with its report.
  const d = await withInterrupts({ json: ctx.json, command: "replay diff-journal", doing: () => `comparing ${a} with ${b}` }, async () => {
    const left = await resolveJournalSource(a, ctx.sddDir);
    try {
      const right = await resolveJournalSource(b, ctx.sddDir);
      try {
        return await diffJournalInputs(left, right, { allowEmpty: Boolean(ctx.args["allow-empty"]) });
      } finally {
        right.cleanup?.();
      }
    } finally {
      left.cleanup?.();
    }
  });
  if (ctx.json) {
    await printJson({ ok: !d.diverged, ...(d.diverged ? { error: "divergence", detail: d.reason } : {}), ...d });
  } else if (!d.diverged) {
    await printLines("No divergence; chains match end-to-end.");
  } else {
    const lines = [`Divergence at step ${d.seq}: ${d.reason}`];
    for (const f of d.fields_changed) {
      // A length mismatch carries its values under "steps".
      const key = f === "length" ? "steps" : f;
      lines.push(`  ${f}:`, `    left:  ${pyRepr(d.left_values.get(key) as PyValue)}`, `    right: ${pyRepr(d.right_values.get(key) as PyValue)}`);
    }
    await printLines(...lines);
  }
  return d.diverged ? 1 : 0;
}

/** `replay diff-journal --as-json` (docs/cli/replay.md). */
export const DIFF_JOURNAL_DOCS: CommandDocs = {
  exits: { 0: "the step journals do not diverge", 1: "they diverge" },
  json: [
    jsonDoc({ example: "bernstein replay diff-journal $AGENT $AGENT2" }, [
      ["ok", "boolean", "The step journals do not diverge"],
      ["error?", "\"divergence\"", "They do"],
      ["detail?", "string", "The divergence's reason"],
      ["diverged", "boolean", "Some step differs, or one journal has more steps"],
      ["seq", "number | null", "The first divergent step"],
      ["fields_changed", "string[]", "Fields that differ there"],
      ["left_values", "object | null", "The left step's values of those fields"],
      ["right_values", "object | null", "The right step's values of those fields"],
      ["reason", "string | null", "Why it diverges, in words"],
    ]),
  ],
};
