import { join } from "node:path";
import { UsageError } from "../../../errors.ts";
import { exportReceipt } from "../../../receipts/index.ts";
import { validateAgentId } from "../../../steps/paths.ts";
import { printJson, printLines } from "../../output.ts";
import type { ReplayContext } from "./context.ts";

/** Replay flags that only some verbs accept; the rest are refused by name. */
const VERB_FLAGS = ["limit", "verify", "from-step", "seal", "threads", "links-only", "head", "public-key", "sign", "redact", "model", "extra-context", "timeout"] as const;

/**
 * `replay` declares the union of its verbs' flags; a flag given to a verb it
 * does not apply to is an error (exit 2, `flag_not_applicable`), never
 * silently ignored (a misplaced `--head` must not "verify" without a head).
 */
export function refuseInapplicableFlags(ctx: ReplayContext, verb: string, allowed: readonly string[]): void {
  const args = ctx.args as Record<string, unknown>;
  for (const f of VERB_FLAGS) {
    if (allowed.includes(f)) continue;
    const v = args[f];
    if (v !== undefined && v !== false) {
      throw new UsageError(`--${f} does not apply to 'bernstein replay ${verb}'`, "flag_not_applicable");
    }
  }
}

/** Python-style booleans in prose, as the reference prints them. */
export const pyBool = (b: boolean): string => (b ? "True" : "False");

export const EXPORT_USAGE = "usage: bernstein replay export <AGENT_ID> [OUT] [--sign KEY]";

/** `bernstein replay export <AGENT_ID> [OUT] [--sign KEY]` */
export async function runExport(ctx: ReplayContext): Promise<number> {
  refuseInapplicableFlags(ctx, "export", ["sign"]);
  const [agentId, out, ...extra] = ctx.positionals;
  if (agentId === undefined || extra.length > 0) throw new UsageError(EXPORT_USAGE);
  validateAgentId(agentId);
  const output = out ?? join(ctx.sddDir, "runtime", "receipts", `${agentId}.tar`);
  const r = await exportReceipt({ sddDir: ctx.sddDir, agentId, out: output, signingKeyPath: ctx.args.sign });
  if (ctx.json) {
    await printJson({ agent_id: agentId, output, head_hash: r.head_hash, steps: r.steps, signed: r.signed });
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
