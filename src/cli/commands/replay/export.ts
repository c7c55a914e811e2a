import { jsonDoc, type CommandDocs } from "../../../json-fields.ts";
import { join } from "node:path";
import { UsageError } from "../../../errors/index.ts";
import { exportReceipt } from "../../../receipts/index.ts";
import { validateAgentId } from "../../../steps/paths.ts";
import { withInterrupts, type InterruptOptions } from "../../interrupt.ts";
import { printJson, printLines } from "../../output.ts";
import { ReceiptToStdout } from "../../receipt-stdout.ts";
import type { ReplayContext } from "./context.ts";
import { REPLAY_TARGETS, REPLAY_VERBS } from "./verbs.ts";
import { pyBool, refuseInapplicableFlags } from "./flags.ts";

export const EXPORT_USAGE = "usage: bernstein replay export <AGENT_ID> [OUT | -] [--force] [--sign KEY]";

/** `bernstein replay export <AGENT_ID> [OUT | -] [--sign KEY]` (`-`: the receipt on stdout, nothing else there) */
export async function runExport(ctx: ReplayContext): Promise<number> {
  refuseInapplicableFlags(ctx, "export", REPLAY_VERBS.export!.flags);
  const [agentId, out, ...extra] = ctx.positionals;
  if (agentId === undefined || extra.length > 0) throw new UsageError(EXPORT_USAGE);
  validateAgentId(agentId);
  const stdout = out === "-" ? new ReceiptToStdout(ctx.json, "replay export") : null;
  const output = out ?? join(ctx.sddDir, "runtime", "receipts", `${agentId}.tar`);
  const r = await withInterrupts(receiptInterrupt(ctx.json, "replay export", agentId, output, stdout), () =>
    sendingTo(stdout, () =>
      exportReceipt({ sddDir: ctx.sddDir, agentId, out: stdout?.path ?? output, signingKeyPath: ctx.args.sign, force: ctx.args.force === true || stdout !== null, defaultOut: out === undefined }),
    ),
  );
  if (stdout) return 0;
  if (ctx.json) {
    await printJson({ ok: true, agent_id: agentId, output, head_hash: r.head_hash, steps: r.steps, signed: r.signed });
  } else {
    await printLines(
      `Exported receipt -> ${output}`,
      `  head_hash: ${r.head_hash}`,
      `  steps:     ${r.steps}`,
      `  signed:    ${pyBool(r.signed)}`,
    );
  }
  return 0;
}

/** The interrupt guard of export and publish: the receipt was not written (its temp file, and for `-` its temp directory, is removed). */
export function receiptInterrupt(json: boolean, command: string, agentId: string, output: string, stdout: ReceiptToStdout | null = null): InterruptOptions {
  return { json, command, facts: () => ({ agent_id: agentId, output, written: false }), doing: () => `writing ${output}`, cleanup: () => stdout?.remove() };
}

/** Make the receipt; for `-`, then copy it to stdout. The temp directory is removed either way. */
export async function sendingTo<T>(stdout: ReceiptToStdout | null, make: () => Promise<T>): Promise<T> {
  try {
    const r = await make();
    await stdout?.send();
    return r;
  } finally {
    stdout?.remove();
  }
}

/** `replay export --as-json` (docs/cli/replay.md). */
export const EXPORT_DOCS: CommandDocs = {
  exits: { 0: "written", 2: "refused: the output exists and --force was not given (output_exists)", 3: "no step journal for this agent (agent_journal_missing)" },
  json: [
    jsonDoc({ example: "bernstein replay export $AGENT receipt.tar --force" }, [
      ["ok", "true", "The receipt was written"],
      ["agent_id", "string", "The agent whose step journal it holds"],
      ["output", "string", "Where it was written"],
      ["head_hash", "string", "The step journal's head: what `replay verify --head` checks"],
      ["steps", "number", "Steps in it"],
      ["signed", "boolean", "Signed with --sign"],
    ]),
  ],
};
