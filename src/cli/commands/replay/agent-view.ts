import { NegativeError, UsageError } from "../../../errors/index.ts";
import { renderJson } from "../../../render/json.ts";
import { refuseNonStepJournal } from "../../../steps/reader.ts";
import { AGENT_COLUMNS, AGENT_HEADER, AGENT_TABLE_WIDTH, agentTableBytes, narrowAgentTable, type AgentLayout } from "../../../replay/agent-table.ts";
import { verifyAgentJournal } from "../../../steps/verify.ts";
import { agentVerdictJson, emptyAgentJson } from "../../../steps/verdict.ts";
import { paint } from "../../../render/ansi.ts";
import { terminalWidth, wrapCells } from "../../../render/table.ts";
import { printLines, writeStdout, writeStdoutBytes, writeStdoutBytesSync } from "../../output.ts";
import { writeAgentEntriesJson } from "../../../replay/agent-json.ts";
import { SpanRecords } from "../../../steps/records.ts";
import type { ReplayContext } from "./context.ts";
import { REPLAY_TARGETS, REPLAY_VERBS } from "./verbs.ts";
import { refuseInapplicableFlags } from "./flags.ts";

function parseLimit(raw: string | undefined): number | null {
  if (raw === undefined) return null;
  if (!/^\d+$/.test(raw)) throw new UsageError(`--limit must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

/**
 * `bernstein replay <AGENT_ID>` (§3.6): the agent's steps after verifying
 * the chain against its own last entry. Reached from the replay target
 * dispatcher when `<sdd>/runtime/journal/<AGENT_ID>` exists.
 */
export async function runAgentView(ctx: ReplayContext): Promise<number> {
  refuseInapplicableFlags(ctx, "<AGENT_ID>", REPLAY_TARGETS.AGENT_ID!.flags);
  const [agentId] = ctx.positionals;
  if (agentId === undefined) throw new UsageError("usage: bernstein replay <AGENT_ID> [--limit N]");
  const limit = parseLimit(ctx.args.limit);
  // --as-json: the verifying pass leaves span records, so the render pass need not scan the rows again
  const records = ctx.json ? new SpanRecords(limit) : null;
  try {
    return await showAgent(ctx, agentId, limit, records);
  } finally {
    records?.close();
  }
}

async function showAgent(ctx: ReplayContext, agentId: string, limit: number | null, records: SpanRecords | null): Promise<number> {
  const v = await verifyAgentJournal(ctx.sddDir, agentId, records);
  if (v.entries === 0) {
    // No step read: empty (refused unless --allow-empty) or no step journal at all (refused).
    refuseNonStepJournal(v.bucket, agentId, ctx.args["allow-empty"] === true);
    if (ctx.json) await writeStdout(renderJson(emptyAgentJson(agentId)) + "\n");
    else await printLines(`Journal for ${agentId} is empty`);
    return 0;
  }
  if (!v.ok) {
    throw new NegativeError("chain_verification_failed", `Chain verification failed for ${agentId}: ${v.errors.join("; ")}`, {
      agent_id: agentId,
      head_hash: v.head_hash,
      steps: v.steps,
      errors: v.errors,
    });
  }
  const bucket = v.bucket;

  if (ctx.json) {
    // Streamed: the document is the same as rendering it whole, without holding every entry.
    const head = renderJson(agentVerdictJson(v));
    await writeStdout(head.slice(0, -2) + ',\n  "entries": [');
    const n = await writeAgentEntriesJson(bucket, limit, { write: writeStdoutBytes, writeSync: writeStdoutBytesSync }, undefined, records);
    await writeStdout(n === 0 ? "]\n}\n" : "\n  ]\n}\n");
    return 0;
  }

  // The verifying pass's garbage is collected before the table's pass starts, so the two do not add up.
  Bun.gc(true);
  await printLines(`Replay for ${agentId}`, `head_hash: ${v.head_hash}`, `steps: ${v.steps}`, "");
  // Python's fixed layout where it fits; a narrower terminal folds model and tool below each row.
  const narrow = terminalWidth() < AGENT_TABLE_WIDTH ? narrowAgentTable(terminalWidth()) : null;
  await printLines(narrow ? narrow.header() : paint("bold", AGENT_HEADER.map((h, i) => h.padEnd(AGENT_COLUMNS[i]!)).join(" ").trimEnd()));
  // One write per read chunk, not per row; the rows the codec's index answers are written from their bytes.
  const layout: AgentLayout = narrow ? { table: narrow } : { fixed: AGENT_COLUMNS };
  const lines = narrow ? (cells: string[]) => narrow.format(cells).join("\n") : (cells: string[]) => cells.map((c, i) => c.padEnd(AGENT_COLUMNS[i]!)).join(" ").trimEnd();
  for await (const bytes of agentTableBytes(bucket, limit, layout, lines)) await writeStdoutBytes(bytes);
  const hint = `Use 'bernstein replay export ${agentId}' to produce an offline-verifiable receipt.`;
  await printLines("", ...(narrow ? wrapCells(hint, terminalWidth()) : [hint]));
  return 0;
}
