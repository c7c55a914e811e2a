import { join } from "node:path";
import * as v from "valibot";
import { decodeFile, f, pyFloatSchema, pyStrListSchema, writePrettyJson, type Loaded } from "./files.ts";

/**
 * The wrap-up brief: what a session changed, what it learned and what the
 * next session should pick up. Written by `bernstein wrap-up` to
 * `<sdd>/sessions/<int(timestamp)>-wrapup.json` (Python indent-2 bytes).
 */
export interface WrapUpBrief {
  timestamp: number;
  session_id: string;
  changes_summary: string;
  learnings: string[];
  next_session_brief: string;
  git_diff_stat: string;
  completed_task_ids: string[];
}

/** `from_dict`: every field has a default; ids are coerced with `str()`. */
export const WrapUpBriefSchema = v.object({
  timestamp: v.optional(pyFloatSchema, 0),
  session_id: v.optional(v.string(), ""),
  changes_summary: v.optional(v.string(), ""),
  learnings: v.optional(v.array(v.string()), () => []),
  next_session_brief: v.optional(v.string(), ""),
  git_diff_stat: v.optional(v.string(), ""),
  completed_task_ids: v.optional(pyStrListSchema, () => []),
});

export function sessionsDir(sddDir: string): string {
  return join(sddDir, "sessions");
}

export function wrapUpPath(sddDir: string, timestamp: number): string {
  return join(sessionsDir(sddDir), `${Math.trunc(timestamp)}-wrapup.json`);
}

/** Write the brief (atomic, 0600, parents created); returns the path. */
export function saveWrapUp(sddDir: string, brief: WrapUpBrief): string {
  return writePrettyJson(wrapUpPath(sddDir, brief.timestamp), {
    timestamp: f(brief.timestamp),
    session_id: brief.session_id,
    changes_summary: brief.changes_summary,
    learnings: brief.learnings,
    next_session_brief: brief.next_session_brief,
    git_diff_stat: brief.git_diff_stat,
    completed_task_ids: brief.completed_task_ids,
  });
}

export function loadWrapUp(path: string): Loaded<WrapUpBrief> {
  return decodeFile(path, WrapUpBriefSchema);
}
