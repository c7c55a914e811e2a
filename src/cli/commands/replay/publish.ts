import { jsonDoc, type CommandDocs } from "../../../json-fields.ts";
import { join } from "node:path";
import { UsageError } from "../../../errors/index.ts";
import { publishReceipt, redactionPolicy } from "../../../receipts/index.ts";
import { validateAgentId } from "../../../steps/paths.ts";
import { withInterrupts } from "../../interrupt.ts";
import { repeated } from "../../tlog-flags.ts";
import { log } from "../../log.ts";
import { printJson, printLines } from "../../output.ts";
import { ReceiptToStdout } from "../../receipt-stdout.ts";
import { receiptInterrupt, sendingTo } from "./export.ts";
import type { ReplayContext } from "./context.ts";
import { REPLAY_TARGETS, REPLAY_VERBS } from "./verbs.ts";
import { pyBool, refuseInapplicableFlags } from "./flags.ts";

const USAGE = "usage: bernstein replay publish <AGENT_ID> [OUT | -] --yes-i-want-to-publish [--redact FIELD]... [--force] [--sign KEY]";

/** `bernstein replay publish <AGENT_ID> [OUT] --yes-i-want-to-publish` */
export async function runPublish(ctx: ReplayContext): Promise<number> {
  // The confirmation is checked before anything is read or validated.
  if (!ctx.args["yes-i-want-to-publish"]) {
    throw new UsageError(
      "Refusing to publish: pass --yes-i-want-to-publish to confirm. Local-only is the default; publish is the only path that writes outside .sdd/runtime/.",
      "confirmation_required",
    );
  }
  refuseInapplicableFlags(ctx, "publish", REPLAY_VERBS.publish!.flags);
  const [agentId, out, ...extra] = ctx.positionals;
  if (agentId === undefined || extra.length > 0) throw new UsageError(USAGE);
  validateAgentId(agentId);
  // --redact is repeatable (read from the raw words: the parser keeps only the last) and each value may be comma-separated.
  const redact = repeated(ctx.rawArgs, "redact").flatMap((v) => v.split(",")).map((s) => s.trim()).filter(Boolean);
  redactionPolicy(redact);
  const stdout = out === "-" ? new ReceiptToStdout(ctx.json, "replay publish") : null;
  const output = out ?? join(ctx.sddDir, "runtime", "receipts", `${agentId}.published.tar`);
  const r = await withInterrupts(receiptInterrupt(ctx.json, "replay publish", agentId, output, stdout), () =>
    sendingTo(stdout, () =>
      publishReceipt({ sddDir: ctx.sddDir, agentId, out: stdout?.path ?? output, signingKeyPath: ctx.args.sign, redact, force: ctx.args.force === true || stdout !== null, defaultOut: out === undefined }),
    ),
  );
  for (const w of r.warnings) log.warn(w);
  if (stdout) return 0;
  if (ctx.json) {
    await printJson({
      ok: true,
      agent_id: agentId,
      output,
      original_head_hash: r.original_head_hash,
      head_hash: r.head_hash,
      steps: r.steps,
      signed: r.signed,
      warnings: r.warnings,
    });
  } else {
    await printLines(
      `Published redacted receipt -> ${output}`,
      `  original_head:  ${r.original_head_hash}`,
      `  redacted_head:  ${r.head_hash}`,
      `  steps:          ${r.steps}`,
      `  signed:         ${pyBool(r.signed)}`,
      `The published receipt verifies against the redacted head (${r.head_hash.slice(0, 16)}...), not the original head of the local journal.`,
    );
  }
  return 0;
}

/** `replay publish --as-json` (docs/cli/replay.md). */
export const PUBLISH_DOCS: CommandDocs = {
  exits: { 0: "written", 2: "refused: no --yes-i-want-to-publish (confirmation_required), or the output exists without --force", 3: "no step journal for this agent" },
  json: [
    jsonDoc({ example: "bernstein replay publish $AGENT published.tar --yes-i-want-to-publish --force" }, [
      ["ok", "true", "The redacted receipt was written"],
      ["agent_id", "string", "The agent whose step journal it holds"],
      ["output", "string", "Where it was written"],
      ["original_head_hash", "string", "The local step journal's head"],
      ["head_hash", "string", "The redacted chain's head: what the published receipt verifies against"],
      ["steps", "number", "Steps in it"],
      ["signed", "boolean", "Signed with --sign"],
      ["warnings", "string[]", "What the redaction could not vouch for"],
    ]),
  ],
};
