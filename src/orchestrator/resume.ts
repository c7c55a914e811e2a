/**
 * Agent-level fast resume: a task whose attempt was stopped (or killed)
 * after its CLI reported a session id is continued in that session by the
 * next attempt — the CLI's own headless resume with a short continuation
 * prompt — instead of being redone from scratch.
 *
 * A stopped attempt leaves a *resume point* in
 * `.sdd/runtime/resume/<task>/`: `resume.json` (the session id, the agent
 * whose step journal the resumed attempt appends to, the steps already
 * done) and `homes/`, the generated CLI homes of the attempt (codex's
 * CODEX_HOME and gemini's HOME hold the session itself), kept out of the
 * attempt directory that is removed at reap. The next attempt at the task
 * takes the point: it resumes when it can, and otherwise starts fresh with
 * the reason (see ResumeFallback) journaled.
 *
 * Under worktree isolation the stopped attempt's work was committed on its
 * branch, which is kept: the point names it (`branch`, its `head` at the
 * stop, and the `base` the task's first attempt started from), and the
 * resumed attempt's worktree is a checkout of that branch, so the files the
 * session wrote before the stop are there. A branch that is gone, moved
 * elsewhere or cannot be checked out means a fresh attempt instead.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { writeFileAtomic } from "../fsutil/atomic.ts";
import { ensurePrivateDir, PRIVATE_FILE_MODE } from "../server/paths.ts";
import type { Task } from "../server/model.ts";

export interface ResumePoint {
  task_id: string;
  /** The agent whose step journal the resumed attempt continues (and whose id it takes). */
  agent_id: string;
  adapter: string;
  session_id: string;
  /** The run that stopped the attempt. */
  run_id: string;
  /** Tool calls already done in the session (all its attempts so far), in order. */
  steps_done: string[];
  model: string | null;
  stopped_at: number;
  /**
   * Under worktree isolation: the kept branch holding what the session wrote
   * (null when it wrote nothing, so there is nothing to continue on).
   * Absent for a point saved without isolation.
   */
  branch?: string | null;
  /** The branch's head at the stop: the resumed attempt continues from exactly this. */
  head?: string | null;
  /** The commit the task's first attempt branched from: the task's changes are `base..head`. */
  base?: string | null;
  /** Where the stopped attempt's worktree was: the resumed one is made there again when it can be (some CLIs key sessions by folder). */
  worktree?: string | null;
}

/** Why a task with a resume point starts fresh instead. */
export type ResumeFallback =
  | "fresh_agents" // `run --fresh-agents` or `resume_agents: false`
  | "adapter_cannot_resume" // aider, command, script
  | "adapter_changed" // the role's adapter is another than the one that stopped
  | "resume_point_unreadable"
  | "session_gone" // the CLI could not find the session
  | "resume_failed" // the resumed CLI failed before doing anything
  | "branch_gone" // the kept branch with the session's work was deleted
  | "branch_moved" // the kept branch no longer holds the head the session left
  | "branch_unavailable" // the kept branch could not be checked out (e.g. checked out elsewhere)
  | "isolation_off"; // the session's work is on a branch, and this run gives agents no worktree

/** Generated CLI homes of an attempt directory that hold a CLI's sessions (adapters.ts writes them). */
const SESSION_HOMES = ["codex-home", "home"];

export function resumeRoot(sddDir: string): string {
  return join(sddDir, "runtime", "resume");
}

/** A directory name for a task id: the id itself when it is a plain name, else its SHA-256. */
function taskDirName(taskId: string): string {
  return /^[A-Za-z0-9_.-]{1,100}$/.test(taskId) && taskId !== "." && taskId !== ".." ? taskId : createHash("sha256").update(taskId, "utf8").digest("hex");
}

function pointDir(sddDir: string, taskId: string): string {
  return join(resumeRoot(sddDir), taskDirName(taskId));
}

/**
 * Save the resume point of a stopped attempt and move its session homes out
 * of `attemptDir` (which is removed at reap). `previous` is the point the
 * attempt itself resumed from: its steps come first.
 */
export function saveResumePoint(sddDir: string, point: ResumePoint, attemptDir: string): void {
  const dir = pointDir(sddDir, point.task_id);
  ensurePrivateDir(resumeRoot(sddDir));
  ensurePrivateDir(dir);
  const homes = join(dir, "homes");
  for (const name of SESSION_HOMES) {
    const from = join(attemptDir, name);
    if (!existsSync(from)) continue;
    mkdirSync(homes, { recursive: true, mode: 0o700 });
    rmSync(join(homes, name), { recursive: true, force: true });
    renameSync(from, join(homes, name));
  }
  writeFileAtomic(join(dir, "resume.json"), JSON.stringify(point, null, 2) + "\n", { mode: PRIVATE_FILE_MODE });
}

export type TakenPoint = { point: ResumePoint } | { unreadable: string } | null;

/** The resume point of a task, if there is one. */
export function readResumePoint(sddDir: string, taskId: string): TakenPoint {
  const file = join(pointDir(sddDir, taskId), "resume.json");
  if (!existsSync(file)) return null;
  try {
    const p = JSON.parse(readFileSync(file, "utf8")) as Partial<ResumePoint>;
    const ok =
      p.task_id === taskId &&
      typeof p.agent_id === "string" &&
      /^[A-Za-z0-9_.-]+$/.test(p.agent_id) &&
      typeof p.adapter === "string" &&
      typeof p.session_id === "string" &&
      p.session_id.length > 0 &&
      Array.isArray(p.steps_done) &&
      optionalName(p.branch) &&
      optionalName(p.head) &&
      optionalName(p.base) &&
      (p.worktree === undefined || p.worktree === null || typeof p.worktree === "string") &&
      (typeof p.branch !== "string" || (typeof p.head === "string" && typeof p.base === "string"));
    if (!ok) return { unreadable: `${file}: not a resume point of task ${taskId}` };
    return { point: { run_id: "", model: null, stopped_at: 0, ...p } as ResumePoint };
  } catch (err) {
    return { unreadable: `${file}: ${(err as Error).message}` };
  }
}

function optionalName(x: unknown): boolean {
  return x === undefined || x === null || (typeof x === "string" && x.length > 0 && !x.startsWith("-"));
}

/** Move the point's session homes into the new attempt's directory (the adapter then writes its config into them again). */
export function restoreSessionHomes(sddDir: string, taskId: string, attemptDir: string): void {
  const homes = join(pointDir(sddDir, taskId), "homes");
  if (!existsSync(homes)) return;
  for (const name of readdirSync(homes)) {
    if (!SESSION_HOMES.includes(name)) continue;
    rmSync(join(attemptDir, name), { recursive: true, force: true });
    renameSync(join(homes, name), join(attemptDir, name));
  }
}

/** The file in an attempt directory naming the attempt's worktree branch (read back after a kill -9). */
const WORKTREE_NOTE = "worktree.json";

/** Note in the attempt directory which branch the attempt works on, and from which base. */
export function noteAttemptWorktree(attemptDir: string, wt: { branch: string; base: string; path: string }): void {
  writeFileAtomic(join(attemptDir, WORKTREE_NOTE), JSON.stringify({ branch: wt.branch, base: wt.base, path: wt.path }) + "\n", { mode: PRIVATE_FILE_MODE });
}

/** The branch, base and worktree path a dead attempt worked on, or null (no isolation, or an unreadable note). */
export function attemptWorktreeNote(attemptDir: string): { branch: string; base: string; path: string | null } | null {
  try {
    const n = JSON.parse(readFileSync(join(attemptDir, WORKTREE_NOTE), "utf8")) as { branch?: unknown; base?: unknown; path?: unknown };
    return optionalName(n.branch) && typeof n.branch === "string" && optionalName(n.base) && typeof n.base === "string"
      ? { branch: n.branch, base: n.base, path: typeof n.path === "string" ? n.path : null }
      : null;
  } catch {
    return null;
  }
}

export function dropResumePoint(sddDir: string, taskId: string): void {
  rmSync(pointDir(sddDir, taskId), { recursive: true, force: true });
}

/** Every resume point (a fresh run's tasks are new: none of them continues a session). */
export function clearResumePoints(sddDir: string): void {
  rmSync(resumeRoot(sddDir), { recursive: true, force: true });
}

/**
 * Whether a task with a resume point resumes: the point must be readable,
 * resuming enabled, and the adapter that runs the task now the one that
 * stopped, able to resume.
 */
export function resumeDecision(
  taken: TakenPoint,
  opts: { enabled: boolean; adapter: string; canResume: boolean },
): { resume: ResumePoint } | { fallback: ResumeFallback; point: ResumePoint | null; detail: string } | null {
  if (taken === null) return null;
  if ("unreadable" in taken) return { fallback: "resume_point_unreadable", point: null, detail: taken.unreadable };
  const p = taken.point;
  if (!opts.enabled) return { fallback: "fresh_agents", point: p, detail: "agent resume is off (run --fresh-agents, or resume_agents: false)" };
  if (opts.adapter !== p.adapter) return { fallback: "adapter_changed", point: p, detail: `the session was ${p.adapter}'s; the task now runs on ${opts.adapter}` };
  if (!opts.canResume) return { fallback: "adapter_cannot_resume", point: p, detail: `the ${opts.adapter} adapter cannot continue a CLI session` };
  return { resume: p };
}

/**
 * What a resumed attempt that failed says about its session: the CLI's
 * "no conversation found" (claude), "no rollout found" (codex) or "invalid
 * session identifier" (gemini) is `session_gone`; a CLI that failed
 * without a single tool call otherwise could not continue it
 * (`resume_failed`) — unless a provider failure (a rate limit, a 5xx, the
 * network, a key) explains it, which is retried as usual. Null: not a resume failure.
 */
export function resumeFailure(result: { outcome: string; toolCalls: unknown[]; failureClass: string | null }, text: string): ResumeFallback | null {
  if (result.outcome !== "failed" || result.toolCalls.length > 0) return null;
  if (/no (conversation|session|saved session|rollout)\b[^\n]*\bfound|invalid session identifier|session not found/i.test(text)) return "session_gone";
  return result.failureClass === null ? "resume_failed" : null;
}

/** The prompt a resumed session gets: short, the session holds the task and the work so far. */
export function continuationPrompt(task: Task, point: ResumePoint): string {
  const n = point.steps_done.length;
  return [
    `You were stopped while working on task ${task.id}: ${task.title}.`,
    `This is the same session: the conversation above shows what you already did (${n} tool call${n === 1 ? "" : "s"} completed).`,
    "Continue from where you stopped. Do not repeat steps that already completed; check the files only if you must.",
    "",
    'When you are done, end your output with one line that summarises what you did, prefixed with "RESULT: ".',
  ].join("\n");
}
