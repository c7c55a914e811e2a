import { existsSync } from "node:fs";
import { physicalLines } from "../fsutil/lines.ts";
import { JOURNAL_MAX_ROW_BYTES } from "../fsutil/input.ts";
import { readJournalSync } from "../journal/reader.ts";
import { pyStr } from "../pyjson/python.ts";
import type { PyValue } from "../pyjson/types.ts";
import { agentBucketPath } from "../steps/paths.ts";
import type { RunRef } from "./discovery.ts";
import { nextTurn, TurnPacer } from "../fsutil/turn.ts";

/**
 * `replay agents [RUN]`: the agents a run spawned, from its journal
 * (`agent_spawned`, then the task and agent events that name them), each
 * with its step journal's row count. One streaming pass over the run
 * journal, one over each step journal.
 */
export type AgentOutcome = "done" | "failed" | "running";

export interface AgentSummary {
  agent_id: string;
  role: string | null;
  adapter: string | null;
  model: string | null;
  task_ids: string[];
  outcome: AgentOutcome;
  /** Why it failed (the event's `reason`), or null. */
  reason: string | null;
  /** Rows of its step journal; null when it has none (or the id cannot name one). */
  steps: number | null;
}

const text = (v: PyValue | undefined): string | null => (v === undefined || v === null ? null : pyStr(v, "None"));

export async function runAgents(sddDir: string, run: RunRef): Promise<AgentSummary[]> {
  const agents = new Map<string, AgentSummary>();
  const turns = new TurnPacer(100, 256);
  for (const item of readJournalSync(run.journal)) {
    if (turns.due()) await nextTurn();
    if (item.kind !== "row") continue;
    const row = item.row;
    const event = text(row.get("event"));
    const agentId = text(row.get("agent_id"));
    if (agentId === null) continue;
    if (event === "agent_spawned") {
      const tasks = row.get("task_ids");
      agents.set(agentId, {
        agent_id: agentId,
        role: text(row.get("role")),
        adapter: text(row.get("provider")),
        model: text(row.get("model")),
        task_ids: Array.isArray(tasks) ? tasks.map((t) => pyStr(t, "None")) : [],
        outcome: "running",
        reason: null,
        steps: null,
      });
      continue;
    }
    const a = agents.get(agentId);
    if (a === undefined) continue;
    if (event === "task_completed" && a.outcome === "running") a.outcome = "done";
    else if (event === "task_failed" || event === "agent_failed") {
      a.outcome = "failed";
      a.reason ??= text(row.get("reason"));
    }
  }
  for (const a of agents.values()) a.steps = stepCount(sddDir, a.agent_id);
  return [...agents.values()];
}

/** Non-blank lines of the agent's step journal, or null when there is none. */
function stepCount(sddDir: string, agentId: string): number | null {
  let path: string;
  try {
    path = agentBucketPath(sddDir, agentId);
  } catch {
    return null; // an id that cannot name a step journal here
  }
  if (!existsSync(path)) return null;
  let n = 0;
  for (const line of physicalLines(path, { maxLineBytes: JOURNAL_MAX_ROW_BYTES })) if (line.bytes.some((b) => b !== 0x20 && b !== 0x09 && b !== 0x0d && b !== 0x0a)) n++;
  return n;
}
