import * as v from "valibot";
import { errorMessage } from "../errors/index.ts";
import { findServer, TaskClient, type ServerLocation } from "../server/client.ts";
import { pidAlive } from "../fsutil/owner.ts";
import { orchestratorInfoPath } from "../server/paths.ts";
import type { ServerStatus, Task } from "../server/model.ts";
import { decodeFile } from "./files.ts";
import { loadSession, saveSession, sessionFromTasks, sessionPath, type SessionState } from "./state.ts";
import { writeStopFallback, type StopFallback } from "./stop-fallback.ts";

/**
 * The client side of `bernstein stop`: save the session from the server's
 * task list FIRST (so a stop that goes wrong still leaves a resumable
 * session), then ask the orchestrator to stop via `POST /stop`, then wait
 * for its process to exit. When the server cannot be asked, write the
 * diagnostic `session_state.json` instead.
 */

/** `<sdd>/runtime/orchestrator.json` as far as stopping needs it. */
export const OrchestratorInfoSchema = v.looseObject({
  pid: v.pipe(v.number(), v.integer(), v.minValue(1)),
  run_id: v.optional(v.nullable(v.string()), null),
  server_url: v.optional(v.nullable(v.string()), null),
});
export type OrchestratorInfo = v.InferOutput<typeof OrchestratorInfoSchema>;

export function readOrchestratorInfo(sddDir: string): OrchestratorInfo | null {
  return decodeFile(orchestratorInfoPath(sddDir), OrchestratorInfoSchema).value;
}

export interface StopOptions {
  force: boolean;
  /** Seconds the orchestrator may let running agents finish before it signals them (0: signal them at once). */
  timeoutSeconds: number;
  /** Seconds signalled agents get between SIGTERM and SIGKILL; null or absent: the run's own (`run --grace`, `stop_grace_s`). */
  graceSeconds?: number | null;
  /** Called while waiting, e.g. for a progress line. */
  onWait?: (pid: number, elapsedSeconds: number) => void;
}

export type StopReport =
  | {
      reachable: true;
      url: string;
      session_saved: boolean;
      session_path: string | null;
      /** Why session.json could not be written (the stop still went ahead). */
      session_error: string | null;
      /** Task counts of the session: the run's final save once the orchestrator exited, else the one `stop` made. */
      completed: number;
      pending: number;
      open: number;
      /** Where the counts come from: `final_session` (saved by the orchestrator on its way out) or `stop_request` (the task list when stop was asked). */
      counts_from: "final_session" | "stop_request";
      stop_accepted: boolean;
      stop_detail: string;
      force: boolean;
      timeout_s: number;
      /** The agents' SIGTERM-to-SIGKILL window the orchestrator applies (seconds); null when it did not say. */
      grace_s: number | null;
      /** The process we waited for: the orchestrator, else a standalone server. */
      pid: number | null;
      pid_role: "orchestrator" | "server" | null;
      exited: boolean | null;
      waited_s: number;
    }
  | {
      reachable: false;
      url: string | null;
      reason: string;
      fallback_path: string;
      fallback: StopFallback;
    };

/** Seconds to wait for the stopped process beyond the orchestrator's own deadline. */
const WAIT_MARGIN_S = 10;
/** The grace window assumed when the server did not report one (an older orchestrator). */
const UNKNOWN_GRACE_S = 30;

async function waitForExit(pid: number, timeoutMs: number, onWait?: (pid: number, elapsed: number) => void): Promise<boolean> {
  const started = Date.now();
  while (pidAlive(pid)) {
    const elapsed = Date.now() - started;
    if (elapsed >= timeoutMs) return false;
    onWait?.(pid, elapsed / 1000);
    await Bun.sleep(Math.min(100, timeoutMs - elapsed));
  }
  return true;
}

/** The session the stopped orchestrator saved after `savedAfter` (Unix seconds), or null when there is none newer. */
function finalSession(sddDir: string, savedAfter: number): SessionState | null {
  const loaded = loadSession(sddDir);
  if (loaded.state === null || (loaded.status !== "ok" && loaded.status !== "stale")) return null;
  return loaded.state.saved_at > savedAfter ? loaded.state : null;
}

function unreachable(sddDir: string, loc: ServerLocation | null, reason: string): StopReport {
  const { path, state } = writeStopFallback(sddDir);
  return { reachable: false, url: loc?.url ?? null, reason, fallback_path: path, fallback: state };
}

export async function stopRun(sddDir: string, options: StopOptions): Promise<StopReport> {
  const loc = findServer(sddDir);
  if (loc === null) return unreachable(sddDir, null, `no task server is running for ${sddDir}`);
  const client = new TaskClient(loc, { timeoutMs: 3000 });

  let tasks: Task[];
  try {
    tasks = await client.listTasks();
  } catch (err) {
    return unreachable(sddDir, loc, errorMessage(err));
  }
  let status: ServerStatus | null = null;
  try {
    status = await client.status();
  } catch {
    /* goal and cost are nice to keep, not required */
  }

  const state = sessionFromTasks(tasks, status?.goal ?? "", status?.cost_usd ?? 0);
  let sessionError: string | null = null;
  try {
    saveSession(sddDir, state);
  } catch (err) {
    sessionError = errorMessage(err);
  }

  let accepted = false;
  let detail = "";
  let graceS: number | null = options.graceSeconds ?? null;
  try {
    const r = await client.stop({ force: options.force, timeout_s: options.timeoutSeconds, grace_s: options.graceSeconds ?? null });
    accepted = r.accepted;
    detail = r.detail;
    graceS = typeof r.grace_s === "number" ? r.grace_s : graceS;
  } catch (err) {
    detail = errorMessage(err);
  }

  // Wait for the process doing the work: the orchestrator if one runs,
  // else the standalone server that shuts itself down on /stop. Only when it
  // is known to run on this machine: a pid reported by a server found
  // through BERNSTEIN_SERVER_URL may belong to another host.
  const orch = readOrchestratorInfo(sddDir);
  const local = loc.source === "server.json" || loc.pid !== null || (orch !== null && orch.server_url === loc.url);
  const orchPid = !local ? null : (status?.orchestrator?.pid ?? (orch && pidAlive(orch.pid) ? orch.pid : null));
  const pid = !local ? null : (orchPid ?? loc.pid ?? status?.server.pid ?? null);
  const role = orchPid !== null ? "orchestrator" : pid !== null ? "server" : null;
  const started = Date.now();
  let exited: boolean | null = null;
  if (accepted && pid !== null && pid !== process.pid) {
    // The orchestrator's own deadline (agents' time to finish, then their grace window), plus a margin to save and exit.
    const budget = options.force ? WAIT_MARGIN_S : options.timeoutSeconds + (graceS ?? UNKNOWN_GRACE_S) + WAIT_MARGIN_S;
    exited = await waitForExit(pid, budget * 1000, options.onWait);
  }
  // The counts above are stale once the run ends (an agent let finish is done by then): an orchestrator that
  // exited saved the session on its way out, later than ours; that save is the run's final state.
  const final = exited === true && role === "orchestrator" ? finalSession(sddDir, state.saved_at) : null;
  const counts = final ?? state;
  return {
    reachable: true,
    url: loc.url,
    session_saved: sessionError === null,
    session_path: sessionError === null ? sessionPath(sddDir) : null,
    session_error: sessionError,
    completed: counts.completed_task_ids.length,
    pending: counts.pending_task_ids.length,
    open: counts.open_task_ids.length,
    counts_from: final ? "final_session" : "stop_request",
    stop_accepted: accepted,
    stop_detail: detail,
    force: options.force,
    timeout_s: options.timeoutSeconds,
    grace_s: graceS,
    pid,
    pid_role: role,
    exited,
    waited_s: Math.round((Date.now() - started) / 100) / 10,
  };
}
