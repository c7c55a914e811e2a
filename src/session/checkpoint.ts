import { join } from "node:path";
import * as v from "valibot";
import { decodeFile, f, pyFloatSchema, pyStrListSchema, writePrettyJson, type Loaded } from "./files.ts";
import { sessionsDir } from "./wrapup.ts";

/**
 * A mid-session checkpoint (Python `PartialState`, alias `CheckpointState`):
 * enough to tell a later session where this one stood. Written by
 * `bernstein checkpoint` to `<sdd>/sessions/<int(timestamp)>-checkpoint.json`.
 */
export interface Checkpoint {
  timestamp: number;
  goal: string;
  completed_task_ids: string[];
  in_flight_task_ids: string[];
  next_steps: string[];
  cost_spent: number;
  git_sha: string;
}

export const CheckpointSchema = v.object({
  timestamp: v.optional(pyFloatSchema, 0),
  goal: v.optional(v.string(), ""),
  completed_task_ids: v.optional(pyStrListSchema, () => []),
  in_flight_task_ids: v.optional(pyStrListSchema, () => []),
  next_steps: v.optional(v.array(v.string()), () => []),
  cost_spent: v.optional(pyFloatSchema, 0),
  git_sha: v.optional(v.string(), ""),
});

export function checkpointPath(sddDir: string, timestamp: number): string {
  return join(sessionsDir(sddDir), `${Math.trunc(timestamp)}-checkpoint.json`);
}

/** Write the checkpoint (atomic, 0600, parents created); returns the path. */
export function saveCheckpoint(sddDir: string, cp: Checkpoint): string {
  return writePrettyJson(checkpointPath(sddDir, cp.timestamp), {
    timestamp: f(cp.timestamp),
    goal: cp.goal,
    completed_task_ids: cp.completed_task_ids,
    in_flight_task_ids: cp.in_flight_task_ids,
    next_steps: cp.next_steps,
    cost_spent: f(cp.cost_spent),
    git_sha: cp.git_sha,
  });
}

export function loadCheckpoint(path: string): Loaded<Checkpoint> {
  return decodeFile(path, CheckpointSchema);
}
