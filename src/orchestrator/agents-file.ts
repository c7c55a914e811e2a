/**
 * `<sdd>/runtime/agents.json`: the agent processes this orchestrator has
 * running, rewritten atomically on every spawn and reap. After a crash
 * (`kill -9` of the orchestrator) the next run reads it and stops the
 * orphans before it re-queues their tasks, so an abandoned agent can never
 * finish a task the resumed run is already redoing.
 */
import { readFileSync, unlinkSync } from "node:fs";
import { ensureRuntimeDir } from "../server/paths.ts";
import { join } from "node:path";
import * as v from "valibot";
import { writeFileAtomic } from "../fsutil/atomic.ts";

export interface AgentEntry {
  agent_id: string;
  pid: number;
  task_id: string;
  run_id: string;
  started_at: number;
}

const AgentsFileSchema = v.object({
  agents: v.array(
    v.object({ agent_id: v.string(), pid: v.number(), task_id: v.string(), run_id: v.string(), started_at: v.number() }),
  ),
});

export function agentsFilePath(sddDir: string): string {
  return join(sddDir, "runtime", "agents.json");
}

export function writeAgentsFile(sddDir: string, agents: AgentEntry[]): void {
  ensureRuntimeDir(sddDir);
  writeFileAtomic(agentsFilePath(sddDir), JSON.stringify({ agents }, null, 2) + "\n", { mode: 0o600 });
}

export function removeAgentsFile(sddDir: string): void {
  try {
    unlinkSync(agentsFilePath(sddDir));
  } catch {
    /* already gone */
  }
}

export function readAgentsFile(sddDir: string): AgentEntry[] {
  try {
    const r = v.safeParse(AgentsFileSchema, JSON.parse(readFileSync(agentsFilePath(sddDir), "utf8")));
    return r.success ? r.output.agents : [];
  } catch {
    return [];
  }
}

/**
 * Is `pid` still the agent we started? On Linux its environment names the
 * agent id; elsewhere we cannot tell a reused pid apart, so we do not touch it.
 */
export function isOurAgent(entry: AgentEntry): boolean {
  try {
    const env = readFileSync(`/proc/${entry.pid}/environ`);
    return env.includes(Buffer.from(`BERNSTEIN_AGENT_ID=${entry.agent_id}\0`));
  } catch {
    return false;
  }
}

/** Kill (SIGKILL, whole process group) the agents a dead orchestrator left behind. Returns their ids. */
export function killOrphanedAgents(sddDir: string): string[] {
  const killed: string[] = [];
  for (const a of readAgentsFile(sddDir)) {
    if (!isOurAgent(a)) continue;
    try {
      process.kill(-a.pid, "SIGKILL");
    } catch {
      try {
        process.kill(a.pid, "SIGKILL");
      } catch {
        continue;
      }
    }
    killed.push(a.agent_id);
  }
  return killed;
}
