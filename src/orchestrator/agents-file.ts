/**
 * `<sdd>/runtime/agents.json`: the agent processes this orchestrator has
 * running, rewritten atomically on every spawn and reap, removed on a clean
 * exit. Each entry names the agent's pid, which is also its process group
 * (agents are spawned detached), and the process's start time, so a pid the
 * OS gave to another process since is never killed.
 *
 * Two mechanisms keep agents from outliving a killed orchestrator:
 *  - the watchdog (watchdog.ts) kills them the moment the orchestrator dies;
 *  - the next run reaps whatever this file still lists before it re-queues
 *    their tasks (the watchdog itself may have been killed too).
 */
import { readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { writeFileAtomic } from "../fsutil/atomic.ts";
import { ensureRuntimeDir } from "../server/paths.ts";
import { processStartTime } from "../fsutil/owner.ts";

export interface AgentEntry {
  agent_id: string;
  pid: number;
  task_id: string;
  run_id: string;
  started_at: number;
  /** Field 22 of /proc/<pid>/stat (clock ticks since boot); null where there is no /proc. */
  proc_start: number | null;
}

const AgentsFileSchema = v.object({
  agents: v.array(
    v.object({
      agent_id: v.string(),
      pid: v.number(),
      task_id: v.string(),
      run_id: v.string(),
      started_at: v.number(),
      proc_start: v.optional(v.nullable(v.number()), null),
    }),
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

/** The start time of a live process (Linux /proc), as agents.json records it; null when gone or unknowable. */
export function agentStartTime(pid: number): number | null {
  const start = Number(processStartTime(pid) ?? Number.NaN);
  return Number.isFinite(start) ? start : null;
}

export type OrphanCheck = "alive" | "group_only" | "reused" | "unknown";

/**
 * What `entry.pid` is now. `alive`: the same process (start time matches).
 * `group_only`: the leader is gone; its group id cannot have been reused
 * while any member lives, so signalling the group reaches only our agent's
 * leftovers. `reused`: another process has the pid. `unknown`: no /proc
 * (macOS, BSD) or no recorded start time: we cannot tell, we do not touch it.
 */
export function checkAgent(entry: AgentEntry): OrphanCheck {
  if (entry.proc_start === null) return "unknown";
  const now = agentStartTime(entry.pid);
  if (now === null) {
    try {
      readFileSync("/proc/self/stat");
    } catch {
      return "unknown";
    }
    return "group_only";
  }
  return now === entry.proc_start ? "alive" : "reused";
}

function killGroup(pid: number): boolean {
  try {
    process.kill(-pid, "SIGKILL");
    return true;
  } catch {
    return false;
  }
}

/** Kill (SIGKILL, whole process group) the agents a dead orchestrator left behind. Returns their ids. */
export function killOrphanedAgents(sddDir: string): string[] {
  const killed: string[] = [];
  for (const a of readAgentsFile(sddDir)) {
    const state = checkAgent(a);
    if (state === "alive" && killGroup(a.pid)) killed.push(a.agent_id);
    else if (state === "group_only" && killGroup(a.pid)) killed.push(a.agent_id);
  }
  return killed;
}
