import { jsonDoc, type CommandDocs } from "../../../json-fields.ts";
import { paint } from "../../../render/ansi.ts";
import { Table, idColumn, measure, terminalWidth, type Column } from "../../../render/table.ts";
import { runAgents, type AgentSummary } from "../../../replay/agents.ts";
import { printJson, printLines } from "../../output.ts";
import type { ReplayContext } from "./context.ts";
import { REPLAY_TARGETS, REPLAY_VERBS } from "./verbs.ts";
import { refuseFlags } from "./flags.ts";
import { UsageError } from "../../../errors/index.ts";
import { resolveNamedRun } from "./target.ts";

const USAGE = "usage: bernstein replay agents [RUN_ID | latest] [--sdd-dir DIR] [--as-json]";

/**
 * `bernstein replay agents [RUN]`: the agent ids a run spawned (the latest
 * run when none is named), with task, adapter, outcome and step count — the
 * ids `replay <AGENT_ID>`, `export` and `publish` take.
 */
export async function runAgentsList(ctx: ReplayContext): Promise<number> {
  if (ctx.positionals.length > 1) throw new UsageError(USAGE);
  refuseFlags(ctx, REPLAY_VERBS.agents!.flags, "replay agents");
  const run = resolveNamedRun(ctx, ctx.positionals[0] ?? "latest", true);
  const agents = await runAgents(ctx.sddDir, run);
  if (ctx.json) {
    await printJson({ ok: true, run_id: run.runId, agents });
    return 0;
  }
  if (agents.length === 0) {
    await printLines(paint("dim", `Run ${run.runId} spawned no agents.`));
    return 0;
  }
  await printLines(paint("bold", `Agents of run ${run.runId}`), ...renderTable(agents));
  return 0;
}

function renderTable(agents: AgentSummary[]): string[] {
  const rows = agents.map((a) => [
    a.agent_id,
    a.task_ids.join(", ") || "-",
    a.role ?? "-",
    a.adapter ?? "-",
    a.outcome + (a.reason ? `: ${a.reason}` : ""),
    a.steps === null ? "-" : String(a.steps),
  ]);
  const col = (header: string, i: number, extra: Partial<Column> = {}): Column => ({ header, width: measure(header, rows.map((r) => r[i]!)), ...extra });
  const table = new Table(
    [
      idColumn("Agent ID", measure("", rows.map((r) => r[0]!))),
      col("Task", 1, { minWidth: 6 }),
      col("Role", 2, { minWidth: 4 }),
      col("Adapter", 3, { minWidth: 7 }),
      col("Outcome", 4, { minWidth: 7, overflow: "wrap" }),
      { ...col("Steps", 5, { align: "right" }), minWidth: measure("Steps", rows.map((r) => r[5]!)) },
    ],
    { width: terminalWidth() },
  );
  return [table.header(), ...rows.flatMap((r) => table.format(r))];
}

/** `replay agents --as-json` (docs/cli/replay.md). */
export const AGENTS_DOCS: CommandDocs = {
  exits: { 0: "listed", 3: "no such run (run_not_found), or no run at all for latest (no_runs)" },
  json: [
    jsonDoc({ example: "bernstein replay agents" }, [
      ["ok", "boolean", "Always true (a run that cannot be read is an error document)"],
      ["run_id", "string", "The run whose agents these are"],
      ["agents", "object[]", "One per agent, in spawn order: its id, task, role, adapter, outcome and step count"],
    ]),
  ],
};
