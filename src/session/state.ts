/**
 * `<sdd>/runtime/session.json`: the snapshot of a run's task states that
 * lets `bernstein run` resume instead of re-planning (spec §9.1).
 *
 * Bytes: Python `json.dumps(obj, indent=2)` (ASCII escapes, no trailing
 * newline), keys in the order of `SessionState`, `saved_at`/`cost_spent` with
 * Python float spelling. Written atomically (temp file + fsync + rename,
 * mode 0600): a kill at any instant leaves the old file or the new one.
 * `open_task_ids` is our addition; Python's loader ignores unknown keys and
 * we read files without it as "no open ids".
 */
import { join } from "node:path";
import * as v from "valibot";
import { decodeFile, pyFloatSchema, pyStrListSchema, writePrettyJson } from "./files.ts";
import { dumps } from "../pyjson/encode.ts";
import { pyFloat } from "../pyjson/types.ts";

export interface SessionState {
  /** Unix seconds (float) of the save. */
  saved_at: number;
  goal: string;
  /** Tasks that reached `done`. */
  completed_task_ids: string[];
  /** Tasks claimed or in progress when the snapshot was taken. */
  pending_task_ids: string[];
  /** Tasks queued and not yet claimed. */
  open_task_ids: string[];
  /** USD spent so far in this session (float). */
  cost_spent: number;
}

export type SessionLoadStatus = "ok" | "missing" | "corrupt" | "stale";

export interface SessionLoad {
  /** The snapshot; also set when `stale` (for display: never resume from it). */
  state: SessionState | null;
  status: SessionLoadStatus;
  /** Why nothing usable was loaded (corrupt or stale). */
  warning?: string;
}

export const DEFAULT_STALE_AFTER_MINUTES = 30;

/** Python's `SessionState.from_dict`: `saved_at` required, the rest defaulted. */
export const SessionStateSchema = v.object({
  saved_at: pyFloatSchema,
  goal: v.optional(v.pipe(v.union([v.string(), v.null()]), v.transform((g) => g ?? "")), ""),
  completed_task_ids: v.optional(pyStrListSchema, () => []),
  pending_task_ids: v.optional(pyStrListSchema, () => []),
  open_task_ids: v.optional(pyStrListSchema, () => []),
  cost_spent: v.optional(pyFloatSchema, 0),
});

export function sessionPath(sddDir: string): string {
  return join(sddDir, "runtime", "session.json");
}

function ordered(s: SessionState) {
  return {
    saved_at: pyFloat(s.saved_at),
    goal: s.goal,
    completed_task_ids: [...s.completed_task_ids],
    pending_task_ids: [...s.pending_task_ids],
    open_task_ids: [...s.open_task_ids],
    cost_spent: pyFloat(s.cost_spent),
  };
}

/** The exact file bytes for a state. */
export function sessionText(s: SessionState): string {
  return dumps(ordered(s), { indent: 2 });
}

/** Write session.json atomically (mode 0600), creating `<sdd>/runtime/`. */
export function saveSession(sddDir: string, s: SessionState): void {
  writePrettyJson(sessionPath(sddDir), ordered(s));
}

/**
 * Load session.json. Missing → `missing`; unreadable, not an object, or
 * without a usable `saved_at` → `corrupt` (with a warning, never a throw);
 * older than `staleAfterMinutes` (strictly) → `stale`.
 */
export function loadSession(sddDir: string, opts: { staleAfterMinutes?: number; now?: number } = {}): SessionLoad {
  const path = sessionPath(sddDir);
  const r = decodeFile(path, SessionStateSchema);
  if (r.status !== "ok" || r.value === null) {
    return { state: null, status: r.status === "ok" ? "corrupt" : r.status, warning: r.warning };
  }
  const state: SessionState = r.value;
  if (!Number.isFinite(state.saved_at)) {
    return { state: null, status: "corrupt", warning: `${path}: saved_at is not a finite number` };
  }
  const staleAfter = opts.staleAfterMinutes ?? DEFAULT_STALE_AFTER_MINUTES;
  const now = opts.now ?? Date.now() / 1000;
  const age = now - state.saved_at;
  if (age > staleAfter * 60) {
    return {
      state,
      status: "stale",
      warning: `${path}: saved ${formatAge(age)} ago, older than ${staleAfter} minute(s)`,
    };
  }
  return { state, status: "ok" };
}

export function formatAge(seconds: number): string {
  if (seconds < 120) return `${Math.round(seconds)} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds / 3600)} h`;
}

/**
 * A snapshot from server task records: `done` → completed (not `closed`,
 * like Python), `claimed`/`in_progress` → pending, `open` → open. Other
 * statuses (failed, cancelled, ...) are in none of the lists. Server order is kept.
 */
export function sessionFromTasks(
  tasks: readonly { id: string; status: string }[],
  goal: string,
  costSpent: number,
  now: number = Date.now() / 1000,
): SessionState {
  const completed: string[] = [];
  const pending: string[] = [];
  const open: string[] = [];
  for (const t of tasks) {
    const id = String(t.id);
    if (t.status === "done") completed.push(id);
    else if (t.status === "claimed" || t.status === "in_progress") pending.push(id);
    else if (t.status === "open") open.push(id);
  }
  return { saved_at: now, goal, completed_task_ids: completed, pending_task_ids: pending, open_task_ids: open, cost_spent: costSpent };
}

/** True when the snapshot still has work to do (never a completed run). */
export function hasUnfinishedWork(s: SessionState): boolean {
  return s.pending_task_ids.length > 0 || s.open_task_ids.length > 0;
}
