import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildCheckpoint, buildWrapUp, NO_COMPLETED, NO_OPEN, type TaskLike } from "../../src/session/briefs.ts";
import { gitDiffStatSince, gitHeadSha, NO_CHANGES } from "../../src/session/git.ts";

const t = (id: string, over: Partial<TaskLike> = {}): TaskLike => ({ id, title: `Title ${id}`, role: "backend", priority: 2, result_summary: null, ...over });

describe("wrap-up brief builder", () => {
  test("changes, learnings, next-session brief (priority order, top 10, '… and N more')", () => {
    const open = Array.from({ length: 12 }, (_, i) => t(`O${i}`, { priority: i === 11 ? 1 : 3, role: i % 2 ? "qa" : "backend" }));
    const b = buildWrapUp({
      done: [t("D1", { result_summary: "shipped" }), t("D2")],
      failed: [t("F1", { fail_reason: "tests red" }), t("F2")],
      open,
      sessionStart: 1747000000.9,
      gitDiffStat: NO_CHANGES,
      now: 1747000500.5,
    });
    expect(b.timestamp).toBe(1747000500.5);
    expect(b.session_id).toBe("1747000000");
    expect(b.changes_summary).toBe("- Title D1: shipped\n- Title D2");
    expect(b.learnings).toEqual(["Task 'Title F1' failed: tests red", "Task 'Title F2' failed without a recorded reason."]);
    const next = b.next_session_brief.split("\n");
    expect(next).toHaveLength(11);
    expect(next[0]).toBe("  [1] Title O11 (qa)");
    expect(next[1]).toBe("  [3] Title O0 (backend)");
    expect(next[10]).toBe("  … and 2 more");
    expect(b.completed_task_ids).toEqual(["D1", "D2"]);
  });

  test("empty session: fixed sentences, session id from now", () => {
    const b = buildWrapUp({ done: [], failed: [], open: [], sessionStart: 0, gitDiffStat: "x", now: 42.7 });
    expect(b).toMatchObject({ session_id: "42", changes_summary: NO_COMPLETED, learnings: [], next_session_brief: NO_OPEN });
  });
});

describe("checkpoint builder", () => {
  test("ids, in-flight, next steps from open titles (falling back to the id)", () => {
    const cp = buildCheckpoint({
      goal: "g",
      done: [t("D1")],
      inFlight: [t("C1"), t("P1")],
      open: [t("O1"), t("O2", { title: "" })],
      gitSha: "abc",
      costSpent: 1.5,
      now: 10,
    });
    expect(cp).toEqual({
      timestamp: 10,
      goal: "g",
      completed_task_ids: ["D1"],
      in_flight_task_ids: ["C1", "P1"],
      next_steps: ["Title O1", "O2"],
      cost_spent: 1.5,
      git_sha: "abc",
    });
  });
});

describe("git facts", () => {
  const repo = mkdtempSync(join(tmpdir(), "bernstein-git-"));
  afterAll(() => rmSync(repo, { recursive: true, force: true }));
  const git = (...args: string[]) => {
    const r = Bun.spawnSync(["git", ...args], { cwd: repo, env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" } });
    if (r.exitCode !== 0) throw new Error(r.stderr.toString());
    return r.stdout.toString().trim();
  };

  test("outside a repository: empty SHA, no changes", () => {
    expect(gitHeadSha(repo)).toBe("");
    expect(gitDiffStatSince(repo, null)).toBe(NO_CHANGES);
  });

  test("HEAD sha; diff stat of commits since the session start, else uncommitted changes", () => {
    git("init", "-q");
    writeFileSync(join(repo, "a.txt"), "one\n");
    git("add", "a.txt");
    git("commit", "-q", "-m", "first", "--date=2020-01-01T00:00:00Z");
    Bun.spawnSync(["git", "commit", "--amend", "-q", "--no-edit"], {
      cwd: repo,
      env: { ...process.env, GIT_COMMITTER_DATE: "2020-01-01T00:00:00Z", GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" },
    });
    expect(gitHeadSha(repo)).toBe(git("rev-parse", "HEAD"));
    expect(gitDiffStatSince(repo, null)).toBe(NO_CHANGES);
    writeFileSync(join(repo, "b.txt"), "two\n");
    git("add", "b.txt");
    git("commit", "-q", "-m", "second");
    // session started in 2021: only the second commit is "this session"
    const since = gitDiffStatSince(repo, Date.UTC(2021, 0, 1) / 1000);
    expect(since).toContain("b.txt");
    expect(since).not.toContain("a.txt");
    writeFileSync(join(repo, "a.txt"), "changed\n");
    expect(gitDiffStatSince(repo, null)).toContain("a.txt");
  });
});
