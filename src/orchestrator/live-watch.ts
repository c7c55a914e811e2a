/**
 * `bernstein status --watch`: the running agents of the run in this state
 * directory, read from `runtime/agents.json` and each agent's `live.json`
 * (live-stream.ts), polled until the run ends or the caller aborts. Each
 * change is handed to `onChange` once; what is shown is the caller's
 * business.
 */
import { readFileSync } from "node:fs";
import { pidAlive } from "../fsutil/owner.ts";
import { orchestratorInfoPath } from "../server/paths.ts";
import { readLiveAgents, type LiveAgentState } from "./live-stream.ts";
import { sleepUnlessAborted } from "../replay/follow.ts";

/** How often the files are read. */
export const WATCH_POLL_MS = 250;

export interface LiveRunSnapshot {
  /** The run in progress (orchestrator.json), or null when none is. */
  run_id: string | null;
  running: boolean;
  agents: LiveAgentState[];
  /** Sums over the running agents (unknown costs left out; `cost_known` says whether any was). */
  tokens: { input: number; cached_input: number; output: number };
  cost_usd: number;
  cost_known: boolean;
}

/** The orchestrator of a run in progress here: its pid and run id, when orchestrator.json names a live process. */
export function runningOrchestrator(sddDir: string): { pid: number; run_id: string } | null {
  try {
    const o = JSON.parse(readFileSync(orchestratorInfoPath(sddDir), "utf8")) as { pid?: unknown; run_id?: unknown };
    if (typeof o.pid !== "number" || typeof o.run_id !== "string") return null;
    return pidAlive(o.pid) ? { pid: o.pid, run_id: o.run_id } : null;
  } catch {
    return null;
  }
}

export function liveRunSnapshot(sddDir: string): LiveRunSnapshot {
  const orch = runningOrchestrator(sddDir);
  const agents = orch ? readLiveAgents(sddDir).filter((a) => a.run_id === orch.run_id) : [];
  const tokens = { input: 0, cached_input: 0, output: 0 };
  let cost = 0;
  let known = true;
  for (const a of agents) {
    if (a.tokens) {
      tokens.input += a.tokens.input;
      tokens.cached_input += a.tokens.cached_input;
      tokens.output += a.tokens.output;
    }
    if (a.cost_usd === null) known = false;
    else cost += a.cost_usd;
  }
  return { run_id: orch?.run_id ?? null, running: orch !== null, agents, tokens, cost_usd: cost, cost_known: known };
}

/** The snapshot without its clock fields: two snapshots that differ only in time are one state. */
function stateKey(s: LiveRunSnapshot): string {
  return JSON.stringify({ ...s, agents: s.agents.map(({ updated_at: _, ...rest }) => rest) });
}

/**
 * Call `onChange` with the first snapshot and then with every changed one,
 * until no run is in progress (that last snapshot included) or `signal`
 * aborts. Resolves with how it ended.
 */
export async function watchLiveRun(sddDir: string, onChange: (s: LiveRunSnapshot) => Promise<void> | void, signal: AbortSignal): Promise<"run_ended" | "interrupted"> {
  let last = "";
  for (;;) {
    if (signal.aborted) return "interrupted";
    const snap = liveRunSnapshot(sddDir);
    const key = stateKey(snap);
    if (key !== last) {
      last = key;
      await onChange(snap);
    }
    if (!snap.running) return "run_ended";
    await sleepUnlessAborted(WATCH_POLL_MS, signal);
  }
}
