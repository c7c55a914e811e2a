import type { Task } from "../server/model.ts";
import type { Checkpoint } from "./checkpoint.ts";
import type { WrapUpBrief } from "./wrapup.ts";

/**
 * Pure builders of the checkpoint and the wrap-up brief from the server's
 * task lists (the commands fetch, these decide the wording — spec §10).
 */
export type TaskLike = Pick<Task, "id" | "title" | "role" | "priority" | "result_summary"> & Partial<Pick<Task, "fail_reason">>;

export interface CheckpointInputs {
  goal: string;
  done: TaskLike[];
  inFlight: TaskLike[];
  open: TaskLike[];
  gitSha: string;
  costSpent: number;
  now: number;
}

export function buildCheckpoint(i: CheckpointInputs): Checkpoint {
  return {
    timestamp: i.now,
    goal: i.goal,
    completed_task_ids: i.done.map((t) => t.id),
    in_flight_task_ids: i.inFlight.map((t) => t.id),
    next_steps: i.open.map((t) => t.title || t.id),
    cost_spent: i.costSpent,
    git_sha: i.gitSha,
  };
}

/** Open tasks listed in the next-session brief before "… and N more". */
export const BRIEF_TOP_N = 10;

export const NO_COMPLETED = "No tasks completed this session.";
export const NO_OPEN = "No open tasks remaining. Consider running `bernstein evolve` to generate new work.";

export interface WrapUpInputs {
  done: TaskLike[];
  failed: TaskLike[];
  open: TaskLike[];
  /** `saved_at` of session.json (null/0: unknown). */
  sessionStart: number | null;
  gitDiffStat: string;
  now: number;
}

export function buildWrapUp(i: WrapUpInputs): WrapUpBrief {
  const changes = i.done.map((t) => (t.result_summary ? `- ${t.title}: ${t.result_summary}` : `- ${t.title}`));
  const learnings = i.failed.map((t) => {
    const why = t.fail_reason || t.result_summary;
    return why ? `Task '${t.title}' failed: ${why}` : `Task '${t.title}' failed without a recorded reason.`;
  });
  // Stable sort: equal priorities keep the server's (creation) order.
  const byPriority = [...i.open].sort((a, b) => a.priority - b.priority);
  const next = byPriority.slice(0, BRIEF_TOP_N).map((t) => `  [${t.priority}] ${t.title} (${t.role})`);
  if (byPriority.length > BRIEF_TOP_N) next.push(`  … and ${byPriority.length - BRIEF_TOP_N} more`);
  const start = i.sessionStart && i.sessionStart > 0 ? i.sessionStart : null;
  return {
    timestamp: i.now,
    session_id: String(Math.trunc(start ?? i.now)),
    changes_summary: changes.length ? changes.join("\n") : NO_COMPLETED,
    learnings,
    next_session_brief: next.length ? next.join("\n") : NO_OPEN,
    git_diff_stat: i.gitDiffStat,
    completed_task_ids: i.done.map((t) => t.id),
  };
}
