/**
 * One git work tree per agent attempt (`isolation: worktree`, the default
 * in a git work tree): each attempt gets `git worktree add` on a branch
 * `bernstein/<run>/<task>` under `<sdd>/worktrees/<run>/`, the agent works
 * there, and when it is reaped its changes are committed on that branch,
 * merged into the project's current branch (a success) or kept on the branch
 * for inspection (a failure), and the work tree is removed. Work trees a
 * killed run left behind are removed by the next run (`reapLeftoverWorktrees`).
 *
 * Everything here is plain `git` run synchronously in the project's own
 * repository; the orchestrator calls it from one place at a time, so merges
 * are serialized.
 */
import { existsSync, readdirSync, realpathSync, rmdirSync, rmSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

export const ISOLATION_MODES = ["worktree", "none"] as const;
export type IsolationMode = (typeof ISOLATION_MODES)[number];

/** The project's repository: the top of its work tree and the project folder's place in it. */
export interface GitRepo {
  top: string;
  /** The project folder relative to `top`, `/`-terminated ("" at the top), as `git rev-parse --show-prefix` says. */
  prefix: string;
}

/** One attempt's work tree. */
export interface Worktree {
  /** The work tree's root. */
  path: string;
  /** Where the agent runs: the project folder's counterpart inside the work tree. */
  cwd: string;
  branch: string;
  /** The commit the branch started from (the project's HEAD at spawn). */
  base: string;
}

export type MergeResult =
  | { ok: true; mode: "fast_forward" | "merge_commit" | "no_changes"; commit: string }
  | { ok: false; conflicts: string[]; message: string };

interface GitOut {
  code: number;
  stdout: string;
  stderr: string;
}

/** Our own commits and merges: never signed, no hooks, and an identity when the repository has none. */
const COMMIT_CONFIG = ["-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null"];

function git(cwd: string, args: string[], env?: Record<string, string>): GitOut {
  try {
    const r = Bun.spawnSync(["git", ...args], {
      cwd,
      stdout: "pipe",
      stderr: "pipe",
      stdin: "ignore",
      env: { ...process.env, GIT_TERMINAL_PROMPT: "0", ...env },
    });
    return { code: r.exitCode ?? -1, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
  } catch (err) {
    return { code: -1, stdout: "", stderr: String(err) };
  }
}

function must(cwd: string, args: string[], env?: Record<string, string>): string {
  const r = git(cwd, args, env);
  if (r.code !== 0) throw new Error(`git ${args.filter((a) => !a.startsWith("commit.gpgsign") && !a.startsWith("core.hooksPath") && a !== "-c").join(" ")}: ${(r.stderr || r.stdout).trim().split("\n").slice(-3).join(" ")}`);
  return r.stdout;
}

/** Author and committer for our commits when git has no user.name / user.email configured. */
function identityEnv(cwd: string): Record<string, string> {
  const env: Record<string, string> = {};
  if (git(cwd, ["config", "user.name"]).code !== 0 && !process.env.GIT_AUTHOR_NAME) {
    env.GIT_AUTHOR_NAME = env.GIT_COMMITTER_NAME = "bernstein";
  }
  if (git(cwd, ["config", "user.email"]).code !== 0 && !process.env.GIT_AUTHOR_EMAIL) {
    env.GIT_AUTHOR_EMAIL = env.GIT_COMMITTER_EMAIL = "bernstein@localhost";
  }
  return env;
}

/**
 * Whether `dir` or a folder above it holds a git marker: a `.git` file (a
 * linked worktree, a submodule) or a `.git` folder with a HEAD. An empty
 * `.git` folder is none: codex's workspace-write sandbox leaves one in
 * /tmp, and git itself does not take it for a repository.
 */
export function gitMarkerAbove(dir: string): boolean {
  for (let d = resolve(dir); ; d = dirname(d)) {
    const marker = join(d, ".git");
    const st = statSync(marker, { throwIfNoEntry: false });
    if (st && (st.isFile() || existsSync(join(marker, "HEAD")))) return true;
    if (dirname(d) === d) return false;
  }
}

/** Whether `dir` may be in a repository (a cheap test before asking git; GIT_DIR set means ask). */
function mayBeInRepo(dir: string): boolean {
  return process.env.GIT_DIR ? true : gitMarkerAbove(dir);
}

/**
 * The repository `workdir` is in, null outside one; `hasHead` false while
 * it has no commit yet; `inHead` false when the folder is not part of HEAD
 * (untracked or ignored, e.g. a scratch folder inside a checkout), so a
 * worktree would not even contain it.
 */
export function findRepo(workdir: string): (GitRepo & { hasHead: boolean; inHead: boolean }) | null {
  if (!mayBeInRepo(workdir)) return null;
  const r = git(workdir, ["rev-parse", "--is-inside-work-tree", "--show-toplevel", "--show-prefix"]);
  if (r.code !== 0) return null;
  const [inside, top, rawPrefix] = r.stdout.split("\n");
  if (inside !== "true" || !top) return null;
  const prefix = rawPrefix ?? "";
  const hasHead = git(workdir, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]).code === 0;
  const inHead = hasHead && (prefix === "" || git(top, ["ls-tree", "-d", "--name-only", "HEAD", "--", prefix.replace(/\/$/, "")]).stdout.trim() !== "");
  return { top, prefix, hasHead, inHead };
}

/** A branch name component from a task id: what git accepts in a ref, never empty. */
export function refSafe(id: string): string {
  const s = id
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/\.{2,}/g, ".")
    .replace(/^[.-]+|[.-]+$/g, "")
    .replace(/\.lock$/i, "-lock")
    .slice(0, 80);
  return s || "task";
}

export function worktreesRoot(sddDir: string): string {
  return join(resolve(sddDir), "worktrees");
}

/** The commit a branch points at, null when there is no such branch. */
export function branchHead(repo: GitRepo, branch: string): string | null {
  const r = git(repo.top, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`]);
  return r.code === 0 ? r.stdout.trim() : null;
}

function branchExists(top: string, branch: string): boolean {
  return git(top, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`]).code === 0;
}

/**
 * A new work tree for one attempt, on a new branch from the project's HEAD:
 * `bernstein/<run>/<task>`, or `…/<task>-<n>` when an earlier attempt of
 * this run kept that name.
 */
export function createWorktree(repo: GitRepo, sddDir: string, runId: string, taskId: string): Worktree {
  const base = must(repo.top, ["rev-parse", "--verify", "HEAD^{commit}"]).trim();
  const stem = refSafe(taskId);
  let name = stem;
  for (let n = 2; branchExists(repo.top, `bernstein/${runId}/${name}`) || existsSync(join(worktreesRoot(sddDir), runId, name)); n++) name = `${stem}-${n}`;
  const branch = `bernstein/${runId}/${name}`;
  const path = join(worktreesRoot(sddDir), runId, name);
  must(repo.top, ["worktree", "add", "--quiet", "-b", branch, path, base]);
  return { path, cwd: repo.prefix ? join(path, repo.prefix) : path, branch, base };
}

/** Why a kept branch cannot be continued (see continueWorktree). */
export type ContinueRefusal = "branch_gone" | "branch_moved" | "branch_unavailable";

/**
 * A work tree for an attempt that continues a stopped one: a checkout of
 * the stopped attempt's kept `branch` (no new branch), under this run's
 * `<sdd>/worktrees/<run>/`. The branch must still hold `head`, the commit
 * the stopped attempt left: otherwise (deleted, reset, rewritten) the
 * session's view of its files would be wrong and a refusal says why. The
 * work tree's `base` is the task's original base, so the task's changes
 * (and its one merge) cover every attempt's work.
 */
export function continueWorktree(
  repo: GitRepo,
  sddDir: string,
  runId: string,
  taskId: string,
  kept: { branch: string; head: string; base: string; path?: string | null },
): { worktree: Worktree } | { refused: ContinueRefusal; detail: string } {
  const tip = branchHead(repo, kept.branch);
  if (tip === null) return { refused: "branch_gone", detail: `branch ${kept.branch} with the stopped attempt's work no longer exists` };
  if (tip !== kept.head && git(repo.top, ["merge-base", "--is-ancestor", kept.head, tip]).code !== 0) {
    return { refused: "branch_moved", detail: `branch ${kept.branch} is at ${tip.slice(0, 12)}, which does not contain ${kept.head.slice(0, 12)}, where the stopped attempt left it` };
  }
  // The stopped attempt's own path when it is free: CLIs that keep sessions per project folder (gemini) find theirs there.
  let path = kept.path && ownWorktreePath(sddDir, kept.path) && !existsSync(kept.path) ? resolve(kept.path) : null;
  if (path === null) {
    const stem = refSafe(taskId);
    let name = stem;
    for (let n = 2; existsSync(join(worktreesRoot(sddDir), runId, name)); n++) name = `${stem}-${n}`;
    path = join(worktreesRoot(sddDir), runId, name);
  }
  const r = git(repo.top, ["worktree", "add", "--quiet", path, kept.branch]);
  if (r.code !== 0) {
    rmSync(path, { recursive: true, force: true });
    removeEmptyDirs(join(path, ".."));
    removeEmptyDirs(join(path, "..", ".."));
    return { refused: "branch_unavailable", detail: `git worktree add ${kept.branch}: ${(r.stderr || r.stdout).trim().split("\n").slice(-2).join(" ")}` };
  }
  // The task's changes run from its original base; were that no longer below the tip, from where the tip left HEAD's history.
  const base = git(repo.top, ["merge-base", "--is-ancestor", kept.base, tip]).code === 0 ? kept.base : git(repo.top, ["merge-base", tip, "HEAD"]).stdout.trim() || tip;
  return { worktree: { path, cwd: repo.prefix ? join(path, repo.prefix) : path, branch: kept.branch, base } };
}

/** Whether `path` is an attempt's worktree place, `<sdd>/worktrees/<run>/<name>`. */
function ownWorktreePath(sddDir: string, path: string): boolean {
  const rel = relative(worktreesRoot(sddDir), resolve(path)).split(sep);
  return rel.length === 2 && rel.every((c) => c !== "" && c !== "." && c !== "..");
}

/** Commit whatever the agent left in its work tree on its branch; the branch head after (the base when nothing changed). */
export function commitWorktree(wt: Worktree, message: string): string {
  if (existsSync(wt.path)) {
    // Never a state directory (an agent's own `.sdd`): the project's state is not project content.
    const sdd = relative(wt.path, join(wt.cwd, ".sdd")).split(sep).join("/");
    must(wt.path, ["add", "--all", "--", ".", `:(exclude)${sdd}`]);
    if (git(wt.path, ["diff", "--cached", "--quiet"]).code === 1) {
      must(wt.path, [...COMMIT_CONFIG, "commit", "--quiet", "--no-verify", "-m", message], identityEnv(wt.path));
    }
  }
  return must(wt.path, ["rev-parse", "--verify", `refs/heads/${wt.branch}`]).trim();
}

/**
 * Merge the attempt's branch into the project's current branch (in the
 * project's own work tree): a fast-forward when the project has not moved,
 * else a merge commit. A conflict (or local changes the merge would
 * overwrite) aborts the merge and leaves the project as it was.
 */
export function mergeWorktree(repo: GitRepo, wt: Worktree, message: string): MergeResult {
  const head = must(repo.top, ["rev-parse", "--verify", `refs/heads/${wt.branch}`]).trim();
  const current = must(repo.top, ["rev-parse", "--verify", "HEAD^{commit}"]).trim();
  if (git(repo.top, ["merge-base", "--is-ancestor", head, current]).code === 0) return { ok: true, mode: "no_changes", commit: current };
  const ff = git(repo.top, ["merge-base", "--is-ancestor", current, head]).code === 0;
  const r = git(repo.top, [...COMMIT_CONFIG, "merge", "--ff", "--no-edit", "--no-verify", "--quiet", "-m", message, wt.branch], identityEnv(repo.top));
  if (r.code === 0) return { ok: true, mode: ff ? "fast_forward" : "merge_commit", commit: must(repo.top, ["rev-parse", "HEAD"]).trim() };
  const conflicts = git(repo.top, ["diff", "--name-only", "-z", "--diff-filter=U"]).stdout.split("\0").filter(Boolean).sort();
  if (git(repo.top, ["rev-parse", "--verify", "--quiet", "MERGE_HEAD"]).code === 0) git(repo.top, ["merge", "--abort"]);
  const said = (r.stderr + "\n" + r.stdout)
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("Auto-merging") && !l.startsWith("hint:"));
  return { ok: false, conflicts, message: said.slice(0, 3).join(" ") || `git merge exited ${r.code}` };
}

/** Remove an attempt's work tree; its branch goes too with `dropBranch` (merged or empty), else it is kept. */
export function removeWorktree(repo: GitRepo, wt: Worktree, dropBranch: boolean): void {
  if (git(repo.top, ["worktree", "remove", "--force", "--force", wt.path]).code !== 0) {
    rmSync(wt.path, { recursive: true, force: true });
    git(repo.top, ["worktree", "prune"]);
  }
  if (dropBranch) git(repo.top, ["branch", "-D", "--quiet", wt.branch]);
  removeEmptyDirs(join(wt.path, ".."));
  removeEmptyDirs(join(wt.path, "..", ".."));
}

function removeEmptyDirs(dir: string): void {
  try {
    if (readdirSync(dir).length === 0) rmdirSync(dir);
  } catch {
    /* gone or not empty */
  }
}

/** Whether `branch` holds nothing the project's HEAD does not (merged or never moved). */
export function branchMerged(repo: GitRepo, branch: string): boolean {
  return git(repo.top, ["merge-base", "--is-ancestor", `refs/heads/${branch}`, "HEAD"]).code === 0;
}

function realOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * Work trees under `<sdd>/worktrees/` that no live attempt owns (a run
 * killed with `kill -9`): their uncommitted work is committed on their
 * branch, the work tree is removed, and the branch is kept when it holds
 * work the project's HEAD does not. Returns the removed paths and the kept branches.
 */
export function reapLeftoverWorktrees(repo: GitRepo, sddDir: string): { removed: string[]; kept: string[] } {
  const root = worktreesRoot(sddDir);
  const removed: string[] = [];
  const kept: string[] = [];
  if (!existsSync(root)) return { removed, kept };
  const realRoot = realOr(root) + sep;
  const list = git(repo.top, ["worktree", "list", "--porcelain", "-z"]);
  if (list.code === 0) {
    let path: string | null = null;
    let branch: string | null = null;
    const flush = (): void => {
      if (path !== null && (realOr(path) + sep).startsWith(realRoot) && realOr(path) + sep !== realRoot) {
        if (branch) {
          const wt: Worktree = { path, cwd: path, branch, base: "" };
          try {
            commitWorktree(wt, "bernstein: work left in a worktree by a run that did not end cleanly");
          } catch {
            /* keep what is committed */
          }
          const drop = branchMerged(repo, branch);
          removeWorktree(repo, wt, drop);
          if (!drop) kept.push(branch);
        } else {
          removeWorktree(repo, { path, cwd: path, branch: "", base: "" }, false);
        }
        removed.push(path);
      }
      path = branch = null;
    };
    for (const field of list.stdout.split("\0")) {
      if (field === "") flush();
      else if (field.startsWith("worktree ")) path = field.slice("worktree ".length);
      else if (field.startsWith("branch refs/heads/")) branch = field.slice("branch refs/heads/".length);
    }
    flush();
  }
  // Folders git no longer knows (a work tree whose metadata was pruned).
  for (const run of safeList(root)) {
    for (const name of safeList(join(root, run))) {
      const p = join(root, run, name);
      rmSync(p, { recursive: true, force: true });
      if (!removed.includes(p)) removed.push(p);
    }
    removeEmptyDirs(join(root, run));
  }
  git(repo.top, ["worktree", "prune"]);
  removeEmptyDirs(root);
  return { removed: removed.sort(), kept: kept.sort() };
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
