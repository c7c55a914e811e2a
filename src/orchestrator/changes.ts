/**
 * Which files an attempt changed, read from the work tree (never from the
 * agent's own word): a snapshot before the attempt and one after, compared.
 *
 * In a git work tree the snapshot covers the paths `git status` reports as
 * changed or untracked (with their size and mtime, so a further edit of an
 * already-dirty file shows too); elsewhere it is every regular file under
 * the workdir with its size and mtime. `.sdd/` and `.git/` are never
 * counted. Agents that run at the same time share the work tree, so one
 * attempt's list can include a concurrent attempt's files — except under
 * `isolation: worktree`, where `branchChangedFiles` reads the attempt's own
 * branch diff instead.
 */
import { lstatSync, readdirSync } from "node:fs";
import { join, relative, sep } from "node:path";

/** path (relative, `/`-separated) → "size:mtimeMs", or "-" when absent. */
export type WorkdirSnapshot = Map<string, string>;

/** A walk of a non-git workdir stops after this many files (a huge tree is not a project agents edit). */
export const MAX_SNAPSHOT_FILES = 20000;

const IGNORED = new Set([".sdd", ".git"]);

function signature(path: string): string {
  try {
    const st = lstatSync(path);
    return `${st.size}:${st.mtimeMs}`;
  } catch {
    return "-";
  }
}

function gitDirtyPaths(workdir: string): string[] | null {
  try {
    const r = Bun.spawnSync(["git", "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--", ".", ":(exclude).sdd"], { cwd: workdir, stdout: "pipe", stderr: "ignore", stdin: "ignore" });
    if (r.exitCode !== 0) return null;
    const prefix = Bun.spawnSync(["git", "rev-parse", "--show-prefix"], { cwd: workdir, stdout: "pipe", stderr: "ignore", stdin: "ignore" });
    const pre = prefix.exitCode === 0 ? prefix.stdout.toString().trim() : "";
    return r.stdout
      .toString()
      .split("\0")
      .filter((e) => e.length > 3)
      .map((e) => e.slice(3))
      .map((p) => (pre && p.startsWith(pre) ? p.slice(pre.length) : p));
  } catch {
    return null;
  }
}

function walk(workdir: string, out: WorkdirSnapshot): void {
  const stack = [workdir];
  while (stack.length && out.size < MAX_SNAPSHOT_FILES) {
    const dir = stack.pop()!;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.isDirectory()) {
        if (!(dir === workdir && IGNORED.has(e.name))) stack.push(p);
      } else if (e.isFile() || e.isSymbolicLink()) {
        out.set(relative(workdir, p).split(sep).join("/"), signature(p));
        if (out.size >= MAX_SNAPSHOT_FILES) return;
      }
    }
  }
}

const ignored = (p: string): boolean => IGNORED.has(p.split("/")[0]!);

/** The work tree's state now (see the module comment). */
export function snapshotWorkdir(workdir: string): WorkdirSnapshot {
  const out: WorkdirSnapshot = new Map();
  const dirty = gitDirtyPaths(workdir);
  if (dirty === null) {
    walk(workdir, out);
    return out;
  }
  for (const p of dirty) if (!ignored(p)) out.set(p, signature(join(workdir, p)));
  return out;
}

/**
 * Paths whose state differs between the two snapshots, sorted. A path in
 * only one snapshot is compared with its state on disk now (in git mode a
 * file can be dirty before and clean after, i.e. reverted or committed).
 */
export function changedFiles(before: WorkdirSnapshot, after: WorkdirSnapshot, workdir: string): string[] {
  const out: string[] = [];
  for (const p of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(p);
    const b = after.get(p) ?? signature(join(workdir, p));
    if (a === undefined || a !== b) out.push(p);
  }
  return out.sort();
}

/**
 * Under `isolation: worktree`: the files an attempt changed are its branch's
 * diff from the commit it started on (`base..head`, run in the attempt's
 * work tree), relative to the project folder like the snapshots' paths.
 * Only this attempt's commits count, never a concurrent agent's files.
 */
export function branchChangedFiles(worktreeCwd: string, base: string, head: string): string[] {
  if (base === head) return [];
  try {
    const r = Bun.spawnSync(["git", "diff", "--name-only", "-z", "--no-renames", base, head], { cwd: worktreeCwd, stdout: "pipe", stderr: "ignore", stdin: "ignore" });
    if (r.exitCode !== 0) return [];
    const prefix = Bun.spawnSync(["git", "rev-parse", "--show-prefix"], { cwd: worktreeCwd, stdout: "pipe", stderr: "ignore", stdin: "ignore" });
    const pre = prefix.exitCode === 0 ? prefix.stdout.toString().trim() : "";
    return r.stdout
      .toString()
      .split("\0")
      .filter(Boolean)
      .map((p) => (pre && p.startsWith(pre) ? p.slice(pre.length) : p))
      .filter((p) => !ignored(p))
      .sort();
  } catch {
    return [];
  }
}
