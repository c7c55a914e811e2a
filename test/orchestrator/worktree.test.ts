/**
 * src/orchestrator/worktree.ts against real git repositories: worktree
 * naming, commits (never `.sdd`), merges (fast-forward, merge commit, no
 * changes, conflict that leaves the project as it was), the leftover
 * reaper, and branchChangedFiles (changes.ts) for a project in a subfolder.
 * No git identity is configured for the code under test.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { branchChangedFiles } from "../../src/orchestrator/changes.ts";
import { branchMerged, commitWorktree, continueWorktree, createWorktree, findRepo, mergeWorktree, reapLeftoverWorktrees, refSafe, removeWorktree, worktreesRoot } from "../../src/orchestrator/worktree.ts";
import { git } from "../helpers/git.ts";

const made: string[] = [];
const saved = { GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL, GIT_CONFIG_NOSYSTEM: process.env.GIT_CONFIG_NOSYSTEM };
beforeAll(() => {
  // No user.name / user.email anywhere: the module must supply its own identity.
  process.env.GIT_CONFIG_GLOBAL = "/dev/null";
  process.env.GIT_CONFIG_NOSYSTEM = "1";
});
afterAll(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  for (const d of made) rmSync(d, { recursive: true, force: true });
});


/** A repository with one commit (`base.txt`); the project folder is `sub` when given. */
function repo(sub = ""): { top: string; project: string; sdd: string } {
  const top = mkdtempSync(join(tmpdir(), "bern-wt-unit-"));
  made.push(top);
  git(top, "init", "-q", "-b", "main");
  const project = sub ? join(top, sub) : top;
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, "base.txt"), "base\n");
  git(top, "add", "-A");
  git(top, "commit", "-qm", "base");
  return { top, project, sdd: join(project, ".sdd") };
}

describe("findRepo", () => {
  test("a folder outside git is null; an unborn repository has no HEAD; a subfolder has its prefix; an untracked folder is not in HEAD", () => {
    const plain = mkdtempSync(join(tmpdir(), "bern-wt-plain-"));
    made.push(plain);
    expect(findRepo(plain)).toBeNull();
    git(plain, "init", "-q");
    expect(findRepo(plain)).toMatchObject({ hasHead: false, inHead: false, prefix: "" });
    const r = repo("pkg/app");
    expect(findRepo(r.project)).toEqual({ top: r.top, prefix: "pkg/app/", hasHead: true, inHead: true });
    expect(findRepo(r.top)).toMatchObject({ prefix: "", inHead: true });
    // a folder the last commit does not hold (untracked or ignored): a worktree would not contain it
    mkdirSync(join(r.top, "scratch", "ws"), { recursive: true });
    expect(findRepo(join(r.top, "scratch", "ws"))).toEqual({ top: r.top, prefix: "scratch/ws/", hasHead: true, inHead: false });
  });
});

describe("refSafe", () => {
  test("task ids become valid branch components", () => {
    expect(refSafe("T1")).toBe("T1");
    expect(refSafe("..x..y.lock")).toBe("x.y-lock");
    expect(refSafe("a b:c")).toBe("a-b-c");
    expect(refSafe("...")).toBe("task");
    for (const id of ["..x..y.lock", "a b:c", "-lead", "x."]) {
      expect(Bun.spawnSync(["git", "check-ref-format", `refs/heads/bernstein/r/${refSafe(id)}`]).exitCode).toBe(0);
    }
  });
});

describe("worktrees, commits and merges", () => {
  test("a worktree per attempt on bernstein/<run>/<task>, -2 for a second attempt; the project folder's counterpart is the cwd", () => {
    const r = repo("sub");
    const g = findRepo(r.project)!;
    const a = createWorktree(g, r.sdd, "run1", "T1");
    expect(a.branch).toBe("bernstein/run1/T1");
    expect(a.path).toBe(join(worktreesRoot(r.sdd), "run1", "T1"));
    expect(a.cwd).toBe(join(a.path, "sub/"));
    expect(readFileSync(join(a.cwd, "base.txt"), "utf8")).toBe("base\n");
    const b = createWorktree(g, r.sdd, "run1", "T1");
    expect(b.branch).toBe("bernstein/run1/T1-2");
    expect(b.base).toBe(a.base);
  });

  test("commit: nothing changed keeps the base; changes are committed without .sdd and listed relative to the project folder", () => {
    const r = repo("sub");
    const g = findRepo(r.project)!;
    const wt = createWorktree(g, r.sdd, "run1", "T1");
    expect(commitWorktree(wt, "nothing")).toBe(wt.base);
    writeFileSync(join(wt.cwd, "new.txt"), "new\n");
    writeFileSync(join(wt.path, "outside.txt"), "top\n");
    mkdirSync(join(wt.cwd, ".sdd"));
    writeFileSync(join(wt.cwd, ".sdd", "state.json"), "{}");
    const head = commitWorktree(wt, "work");
    expect(head).not.toBe(wt.base);
    expect(git(wt.path, "show", "--name-only", "--format=", head).split("\n").filter(Boolean).sort()).toEqual(["outside.txt", "sub/new.txt"]);
    expect(git(wt.path, "log", "-1", "--format=%an <%ae>", head).trim()).toBe("bernstein <bernstein@localhost>");
    expect(branchChangedFiles(wt.cwd, wt.base, head)).toEqual(["new.txt", "outside.txt"]);
    expect(branchChangedFiles(wt.cwd, wt.base, wt.base)).toEqual([]);
  });

  test("merge: fast-forward, then a merge commit (even with merge.ff=only configured), then nothing to merge; the merged branch can go", () => {
    const r = repo();
    git(r.top, "config", "merge.ff", "only");
    const g = findRepo(r.project)!;
    const a = createWorktree(g, r.sdd, "run1", "A");
    const b = createWorktree(g, r.sdd, "run1", "B");
    const c = createWorktree(g, r.sdd, "run1", "C");
    writeFileSync(join(a.cwd, "a.txt"), "a\n");
    writeFileSync(join(b.cwd, "b.txt"), "b\n");
    commitWorktree(a, "a");
    commitWorktree(b, "b");
    commitWorktree(c, "c");
    const ma = mergeWorktree(g, a, "merge a");
    expect(ma).toEqual({ ok: true, mode: "fast_forward", commit: git(r.top, "rev-parse", "refs/heads/bernstein/run1/A").trim() });
    const mb = mergeWorktree(g, b, "merge b");
    expect(mb).toMatchObject({ ok: true, mode: "merge_commit" });
    expect(git(r.top, "rev-parse", "HEAD").trim()).toBe((mb as { commit: string }).commit);
    expect(git(r.top, "log", "-1", "--format=%s%n%P").split("\n")[1]!.split(" ")).toHaveLength(2);
    expect(mergeWorktree(g, c, "merge c")).toMatchObject({ ok: true, mode: "no_changes" });
    expect(readFileSync(join(r.top, "a.txt"), "utf8") + readFileSync(join(r.top, "b.txt"), "utf8")).toBe("a\nb\n");
    expect(branchMerged(g, a.branch)).toBe(true);
    for (const wt of [a, b, c]) removeWorktree(g, wt, true);
    expect(git(r.top, "branch", "--list", "bernstein/*")).toBe("");
    expect(existsSync(worktreesRoot(r.sdd))).toBe(false);
  });

  test("a conflict is reported with its files and aborted: the project's HEAD, index and files are as before; the branch stays", () => {
    const r = repo();
    const g = findRepo(r.project)!;
    const a = createWorktree(g, r.sdd, "run1", "A");
    const b = createWorktree(g, r.sdd, "run1", "B");
    writeFileSync(join(a.cwd, "base.txt"), "from a\n");
    writeFileSync(join(b.cwd, "base.txt"), "from b\n");
    commitWorktree(a, "a");
    commitWorktree(b, "b");
    expect(mergeWorktree(g, a, "merge a")).toMatchObject({ ok: true, mode: "fast_forward" });
    const head = git(r.top, "rev-parse", "HEAD");
    const m = mergeWorktree(g, b, "merge b");
    expect(m).toMatchObject({ ok: false, conflicts: ["base.txt"] });
    expect(git(r.top, "rev-parse", "HEAD")).toBe(head);
    expect(git(r.top, "status", "--porcelain", "--untracked-files=no")).toBe("");
    expect(readFileSync(join(r.top, "base.txt"), "utf8")).toBe("from a\n");
    removeWorktree(g, b, false);
    expect(git(r.top, "rev-parse", "bernstein/run1/B").trim()).not.toBe("");
  });

  test("local changes in the project that the merge would overwrite: refused with git's reason, nothing changed", () => {
    const r = repo();
    const g = findRepo(r.project)!;
    const a = createWorktree(g, r.sdd, "run1", "A");
    writeFileSync(join(a.cwd, "base.txt"), "from a\n");
    commitWorktree(a, "a");
    writeFileSync(join(r.top, "base.txt"), "edited by hand\n");
    const m = mergeWorktree(g, a, "merge a");
    expect(m.ok).toBe(false);
    expect((m as { message: string }).message).toContain("base.txt");
    expect(readFileSync(join(r.top, "base.txt"), "utf8")).toBe("edited by hand\n");
  });
});

describe("continueWorktree (a resumed attempt on its stopped predecessor's kept branch)", () => {
  test("a checkout of the kept branch under this run, with the task's original base; the branch gone, moved or checked out elsewhere is refused with its reason", () => {
    const r = repo("sub");
    const g = findRepo(r.project)!;
    const first = createWorktree(g, r.sdd, "run1", "T1");
    writeFileSync(join(first.cwd, "a.txt"), "a\n");
    const head = commitWorktree(first, "stopped");
    removeWorktree(g, first, false);
    // a path outside .sdd/worktrees is never used
    const kept = { branch: first.branch, head, base: first.base, path: join(r.top, "elsewhere") };
    // the project moved on meanwhile: the base stays the task's own
    writeFileSync(join(r.project, "other.txt"), "o\n");
    git(r.top, "add", "-A");
    git(r.top, "commit", "-qm", "other");
    const on = continueWorktree(g, r.sdd, "run2", "T1", kept);
    if (!("worktree" in on)) throw new Error(on.detail);
    expect(on.worktree).toEqual({ path: join(worktreesRoot(r.sdd), "run2", "T1"), cwd: join(worktreesRoot(r.sdd), "run2", "T1", "sub/"), branch: first.branch, base: first.base });
    expect(readFileSync(join(on.worktree.cwd, "a.txt"), "utf8")).toBe("a\n");
    writeFileSync(join(on.worktree.cwd, "b.txt"), "b\n");
    const after = commitWorktree(on.worktree, "resumed");
    expect(branchChangedFiles(on.worktree.cwd, on.worktree.base, after)).toEqual(["a.txt", "b.txt"]);
    // checked out in a worktree already: git refuses a second checkout
    const twice = continueWorktree(g, r.sdd, "run3", "T1", { ...kept, head: after });
    expect(twice).toMatchObject({ refused: "branch_unavailable" });
    expect(existsSync(join(worktreesRoot(r.sdd), "run3"))).toBe(false);
    removeWorktree(g, on.worktree, false);
    // a branch reset below the head the session left
    git(r.top, "branch", "-f", first.branch, first.base);
    expect(continueWorktree(g, r.sdd, "run3", "T1", { ...kept, head: after })).toMatchObject({ refused: "branch_moved" });
    // the stopped attempt's own path, when free, is where the resumed worktree goes (CLIs that key sessions by folder find theirs)
    git(r.top, "branch", "-f", first.branch, after);
    const again = continueWorktree(g, r.sdd, "run3", "T1", { ...kept, head: after, path: first.path });
    if (!("worktree" in again)) throw new Error(again.detail);
    expect(again.worktree.path).toBe(first.path);
    removeWorktree(g, again.worktree, false);
    git(r.top, "branch", "-D", first.branch);
    expect(continueWorktree(g, r.sdd, "run3", "T1", kept)).toMatchObject({ refused: "branch_gone", detail: expect.stringContaining(first.branch) });
    expect(existsSync(join(r.top, "elsewhere"))).toBe(false);
  });
});

describe("reapLeftoverWorktrees", () => {
  test("nothing to reap without a worktrees folder", () => {
    const r = repo();
    expect(reapLeftoverWorktrees(findRepo(r.project)!, r.sdd)).toEqual({ removed: [], kept: [] });
  });

  test("a killed run's worktrees: uncommitted work is committed and its branch kept, an untouched one's branch goes, stray folders go", () => {
    const r = repo();
    const g = findRepo(r.project)!;
    const busy = createWorktree(g, r.sdd, "old", "A");
    const idle = createWorktree(g, r.sdd, "old", "B");
    writeFileSync(join(busy.cwd, "half.txt"), "half\n");
    const stray = join(worktreesRoot(r.sdd), "older", "X");
    mkdirSync(stray, { recursive: true });
    writeFileSync(join(stray, "f"), "");
    const out = reapLeftoverWorktrees(g, r.sdd);
    expect(out).toEqual({ removed: [busy.path, idle.path, stray].sort(), kept: ["bernstein/old/A"] });
    expect(git(r.top, "show", "bernstein/old/A:half.txt")).toBe("half\n");
    expect(git(r.top, "branch", "--list", "bernstein/old/B")).toBe("");
    expect(git(r.top, "worktree", "list", "--porcelain").match(/^worktree /gm)).toHaveLength(1);
    expect(existsSync(worktreesRoot(r.sdd))).toBe(false);
  });
});
