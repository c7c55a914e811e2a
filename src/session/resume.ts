/**
 * Whether `bernstein run` resumes the saved session or starts fresh. The
 * order of the checks is the order of precedence: an explicit `--fresh`,
 * then `session.resume: false`, then the snapshot itself (missing, corrupt,
 * stale), then a changed goal (an empty saved goal, as Python writes
 * it, is unknown and never "changed"). A snapshot with unfinished work always
 * resumes; only a fully drained one short-circuits planning.
 */
import { runsRoot } from "../journal/paths.ts";
import { discoverRuns } from "../replay/discovery.ts";
import { ListCache } from "../replay/list-cache.ts";
import { orderByStart } from "../replay/start-order.ts";
import { formatAge, hasUnfinishedWork, loadSession, type SessionState } from "./state.ts";

export type ResumeAction = "resume" | "drained" | "fresh";

/** Machine-readable reasons (recorded in the run journal's `session_resume`). */
export type ResumeReason =
  | "unfinished_work"
  | "drained"
  | "flag_fresh"
  | "resume_disabled"
  | "no_session"
  | "corrupt"
  | "stale"
  | "goal_changed";

export type ResumeDecision = {
  action: ResumeAction;
  reason: ResumeReason | string;
  /** One line for the terminal, e.g. `fresh because --fresh`. */
  message: string;
  /** The snapshot resumed from (null when fresh). */
  state: SessionState | null;
};

export function decideResume(o: {
  sddDir: string;
  goal: string;
  fresh: boolean;
  resumeEnabled: boolean;
  staleAfterMinutes: number;
  now?: number;
}): ResumeDecision {
  if (o.fresh) return { action: "fresh", reason: "flag_fresh", message: "fresh because --fresh", state: null };
  if (!o.resumeEnabled) {
    return { action: "fresh", reason: "resume_disabled", message: "fresh because session.resume is false", state: null };
  }
  const now = o.now ?? Date.now() / 1000;
  const loaded = loadSession(o.sddDir, { staleAfterMinutes: o.staleAfterMinutes, now });
  switch (loaded.status) {
    case "missing":
      return { action: "fresh", reason: "no_session", message: "fresh: no saved session", state: null };
    case "corrupt":
      return {
        action: "fresh",
        reason: "corrupt",
        message: `fresh: the saved session is unreadable (${loaded.warning ?? "corrupt"})`,
        state: null,
      };
    case "stale": {
      const age = loaded.state ? now - loaded.state.saved_at : 0;
      return {
        action: "fresh",
        reason: "stale",
        message: `fresh because stale (saved ${formatAge(age)} ago; session.stale_after_minutes is ${o.staleAfterMinutes})`,
        state: null,
      };
    }
  }
  const state = loaded.state!;
  // Python writes goal "" in every session and never compares goals: "" means "not recorded", compatible with any goal.
  if (state.goal !== "" && state.goal !== o.goal) {
    return { action: "fresh", reason: "goal_changed", message: "fresh because the goal changed", state: null };
  }
  const done = state.completed_task_ids.length;
  if (hasUnfinishedWork(state)) {
    return {
      action: "resume",
      reason: "unfinished_work",
      message: `resumed: ${done} done previously, ${state.pending_task_ids.length} pending, ${state.open_task_ids.length} open`,
      state,
    };
  }
  return { action: "drained", reason: "drained", message: `resumed: ${done} done previously, nothing left to do`, state };
}

/**
 * A resume whose task store is empty (a session written by Python, whose
 * orchestrator deletes its task store at start-up, or a removed tasks.db):
 * as upstream, the work comes from the backlog, here the plan file's
 * tasks, and the saved ids decide what is skipped. A task saved as
 * completed is not created again, and a dependency on it counts as met.
 * Pending and open ids need nothing: their tasks are created like any other.
 */
export function resumeBacklog<T extends { id?: string | null; depends_on?: string[] }>(tasks: readonly T[], state: SessionState): { tasks: T[]; skipped: string[] } {
  const done = new Set(state.completed_task_ids);
  const kept: T[] = [];
  const skipped: string[] = [];
  for (const t of tasks) {
    if (t.id && done.has(t.id)) {
      skipped.push(t.id);
      continue;
    }
    kept.push(t.depends_on ? { ...t, depends_on: t.depends_on.filter((d) => !done.has(d)) } : t);
  }
  return { tasks: kept, skipped };
}

/**
 * The run a resumed run continues: the run `latest` names before the new
 * run is created (null when there is none, or the runs cannot be read:
 * naming the predecessor never stops a run from starting). The `replay
 * list` cache is read, never written: a run leaves the runs folder as it found it.
 */
export function previousRunId(sddDir: string): string | null {
  try {
    const { ordered } = orderByStart(discoverRuns(sddDir).runs, ListCache.load(runsRoot(sddDir)));
    return ordered[0]?.run.runId ?? null;
  } catch {
    return null;
  }
}

/** The id of a saved session, as the wrap-up brief names it: its `saved_at`, whole seconds. */
export function sessionId(savedAt: number): string | null {
  return Number.isFinite(savedAt) && savedAt > 0 ? String(Math.trunc(savedAt)) : null;
}
