/**
 * One git worktree per agent attempt (issue 32, `isolation: worktree`),
 * through the compiled binary with script agents in a git repository:
 * parallel agents editing one file each work in their own worktree; merges
 * land in claim order, so which one wins does not depend on which agent
 * finished first; a conflict fails the task (`merge_conflict`) and keeps
 * its branch; no worktree is left after the run, after `bernstein stop`,
 * or after `kill -9` plus the next run. Outside git, nothing changes (the
 * rest of test/e2e/run runs outside git).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { binPath } from "../../helpers/cli.ts";
import { cleanupProjects, journalEvents, makeProject, runIds, runToEnd, spawnRun, storedTasks, waitFor, type Project } from "./fixture.ts";
import { git } from "../../helpers/git.ts";

afterAll(cleanupProjects);

const E2E_TIMEOUT = 60_000;

/** The test's own git commands carry an identity; the runs under test get none (the binary supplies one when git has none). */

/**
 * An agent that records where it runs (`$CWD_LOG/<task>`), sleeps
 * `SLEEP_<task>` seconds, writes `$OUT_<task>` (default same.txt) with
 * "written by <task>", then waits while the file `$HOLD` exists; the tasks
 * in `$FAIL_TASKS` exit 1 after writing. With `$SEE`, it first notes
 * whether that file is in its work tree (`seen-by-<task>.txt`).
 */
const AGENT = `#!/bin/sh
cat > /dev/null
pwd > "$CWD_LOG/$BERNSTEIN_TASK_ID"
eval "s=\\\${SLEEP_$BERNSTEIN_TASK_ID:-0}"
eval "out=\\\${OUT_$BERNSTEIN_TASK_ID:-same.txt}"
if [ -n "$SEE" ] && [ -f "$SEE" ]; then echo "saw $SEE" > "seen-by-$BERNSTEIN_TASK_ID.txt"; fi
sleep "$s"
echo "written by $BERNSTEIN_TASK_ID" > "$out"
while [ -n "$HOLD" ] && [ -f "$HOLD" ]; do sleep 0.05; done
for t in $FAIL_TASKS; do
  if [ "$t" = "$BERNSTEIN_TASK_ID" ]; then echo "cannot do $t" >&2; exit 1; fi
done
echo "{\\"result_summary\\": \\"wrote $out\\", \\"cost_usd\\": 0.01}"
`;

interface Repo extends Project {
  cwdLog: string;
}

function repoProject(tasks: { id: string; depends_on?: string[] }[], env: Record<string, string>, config = ""): Repo {
  const p = makeProject({ tasks, agentEnv: env, config: `max_retries: 0\n${config}` });
  writeFileSync(join(p.dir, "agent.sh"), AGENT);
  chmodSync(join(p.dir, "agent.sh"), 0o755);
  const cwdLog = join(p.dir, "cwd-log");
  mkdirSync(cwdLog);
  // The agent's own env (CWD_LOG) comes from bernstein.yaml: rewrite it with the log folder.
  writeFileSync(join(p.dir, "bernstein.yaml"), readFileSync(join(p.dir, "bernstein.yaml"), "utf8").replace("  env:\n", `  env:\n    CWD_LOG: ${JSON.stringify(cwdLog)}\n`));
  writeFileSync(join(p.dir, ".gitignore"), "cwd-log/\nledger.txt\n");
  git(p.dir, "init", "-q", "-b", "main");
  git(p.dir, "add", "-A");
  git(p.dir, "commit", "-qm", "base");
  return { ...p, cwdLog };
}

function cwdOf(p: Repo, task: string): string {
  return readFileSync(join(p.cwdLog, task), "utf8").trim();
}

/** Worktrees git knows besides the project's own. */
function extraWorktrees(p: Project): string[] {
  return git(p.dir, "worktree", "list", "--porcelain")
    .split("\n")
    .filter((l) => l.startsWith("worktree "))
    .map((l) => l.slice("worktree ".length))
    .slice(1);
}

function branches(p: Project): string[] {
  return git(p.dir, "for-each-ref", "--format=%(refname:short)", "refs/heads/bernstein/").split("\n").filter(Boolean).sort();
}

const ev = (rows: Map<string, any>[], name: string) => rows.filter((r) => r.get("event") === name);

/** No worktree registered, no folder under .sdd/worktrees, and the project's tracked files untouched by anyone but a merge. */
function noWorktreeLeft(p: Project): void {
  expect(extraWorktrees(p)).toEqual([]);
  const root = join(p.sddDir, "worktrees");
  expect(existsSync(root) ? readdirSync(root) : []).toEqual([]);
}

describe("isolation: worktree (a git repository)", () => {
  test(
    "three agents writing same.txt in parallel each work in their own worktree; the first in claim order is merged, the others fail with merge_conflict and keep their branch, whichever finishes first",
    async () => {
      const outcomes: string[] = [];
      // A finishes last, then first: the merge order is the claim order (A, B, C) either way.
      for (const sleeps of [{ SLEEP_A: "1.2", SLEEP_B: "0.6", SLEEP_C: "0" }, { SLEEP_A: "0", SLEEP_B: "0.6", SLEEP_C: "1.2" }]) {
        const p = repoProject([{ id: "A" }, { id: "B" }, { id: "C" }], sleeps);
        const r = await runToEnd(p, ["--max-agents", "3", "--as-json"]);
        expect(r.code).toBe(1);
        const [run] = runIds(p);
        const doc = JSON.parse(r.stdout);
        expect(doc).toMatchObject({ outcome: "failed", tasks: { done: 1, failed: 2 } });
        expect(doc.failures).toEqual([
          { task_id: "B", signals: ["merge_conflict"] },
          { task_id: "C", signals: ["merge_conflict"] },
        ]);
        // each agent ran in its own worktree, on its own branch
        const cwds = ["A", "B", "C"].map((t) => cwdOf(p, t));
        expect(new Set(cwds).size).toBe(3);
        for (const t of ["A", "B", "C"]) expect(cwdOf(p, t)).toBe(join(p.sddDir, "worktrees", run!, t));
        const rows = journalEvents(p, run!);
        expect(ev(rows, "task_worktree").map((x) => [x.get("task_id"), x.get("branch")])).toEqual(["A", "B", "C"].map((t) => [t, `bernstein/${run}/${t}`]));
        // the merge result is journaled: A fast-forwarded, B and C conflict on same.txt
        const merged = ev(rows, "task_merged");
        expect(merged.map((x) => [x.get("task_id"), x.get("merge"), x.get("files")])).toEqual([["A", "fast_forward", ["same.txt"]]]);
        expect(merged[0]!.get("commit")).toBe(git(p.dir, "rev-parse", "HEAD").trim());
        expect(ev(rows, "task_merge_conflict").map((x) => [x.get("task_id"), x.get("conflicts"), x.get("branch")])).toEqual([
          ["B", ["same.txt"], `bernstein/${run}/B`],
          ["C", ["same.txt"], `bernstein/${run}/C`],
        ]);
        const failed = ev(rows, "task_failed").map((x) => [x.get("task_id"), x.get("reason")]);
        expect(failed).toEqual([
          ["B", `merge_conflict: same.txt (branch bernstein/${run}/B kept)`],
          ["C", `merge_conflict: same.txt (branch bernstein/${run}/C kept)`],
        ]);
        const t = Object.fromEntries(storedTasks(p).map((x) => [x.id, x]));
        expect(t.A!.status).toBe("done");
        expect(t.B!.fail_reason).toBe(`merge_conflict: same.txt (branch bernstein/${run}/B kept)`);
        // the project holds A's file, committed; B's and C's work is on their kept branches
        expect(readFileSync(join(p.dir, "same.txt"), "utf8")).toBe("written by A\n");
        expect(git(p.dir, "status", "--porcelain", "--untracked-files=all")).toBe("");
        expect(branches(p)).toEqual([`bernstein/${run}/B`, `bernstein/${run}/C`]);
        expect(git(p.dir, "show", `bernstein/${run}/C:same.txt`)).toBe("written by C\n");
        noWorktreeLeft(p);
        // the run table names the kept branch
        const table = Bun.spawnSync([binPath(), "replay", run!], { cwd: p.dir, env: { ...process.env, NO_COLOR: "1", COLUMNS: "200" }, stdout: "pipe" });
        expect(table.stdout.toString()).toContain(`(branch bernstein/${run}/C kept)`);
        outcomes.push(JSON.stringify([failed.map(([id]) => id), readFileSync(join(p.dir, "same.txt"), "utf8")]));
      }
      expect(outcomes[0]).toBe(outcomes[1]!);
    },
    E2E_TIMEOUT,
  );

  test(
    "agents writing different files: a fast-forward, then merge commits; a dependent task starts from the merged work; each trace lists its own branch's files",
    async () => {
      const p = repoProject(
        [{ id: "A" }, { id: "B" }, { id: "C" }, { id: "D", depends_on: ["A"] }],
        { OUT_A: "a.txt", OUT_B: "b.txt", OUT_C: "c.txt", OUT_D: "d.txt", SLEEP_A: "0.3", SEE: "a.txt" },
      );
      const r = await runToEnd(p, ["--max-agents", "3"]);
      expect(r.code).toBe(0);
      const [run] = runIds(p);
      const rows = journalEvents(p, run!);
      // merged in claim order: A fast-forwards, B and C (started from the old HEAD) need merge commits;
      // D's mode depends on whether B and C had landed before D was claimed
      const modes = ev(rows, "task_merged").map((x) => [x.get("task_id"), x.get("merge")]);
      expect(modes.slice(0, 3)).toEqual([
        ["A", "fast_forward"],
        ["B", "merge_commit"],
        ["C", "merge_commit"],
      ]);
      expect(modes[3]![0]).toBe("D");
      for (const f of ["a.txt", "b.txt", "c.txt", "d.txt"]) expect(existsSync(join(p.dir, f))).toBe(true);
      // D was claimed after A was merged: its worktree had a.txt
      expect(readFileSync(join(p.dir, "seen-by-D.txt"), "utf8")).toBe("saw a.txt\n");
      // A's worktree started before anyone merged: it saw no a.txt of its own making before writing it
      expect(existsSync(join(p.dir, "seen-by-B.txt"))).toBe(false);
      const merges = ev(rows, "task_merged");
      expect(merges.map((x) => x.get("files"))).toEqual([["a.txt"], ["b.txt"], ["c.txt"], ["d.txt", "seen-by-D.txt"]]);
      const traces = readdirSync(join(p.sddDir, "traces")).filter((n) => /^B-.*\.json$/.test(n));
      expect(traces).toHaveLength(1);
      expect(JSON.parse(readFileSync(join(p.sddDir, "traces", traces[0]!), "utf8")).files_changed).toEqual(["b.txt"]);
      expect(branches(p)).toEqual([]);
      noWorktreeLeft(p);
    },
    E2E_TIMEOUT,
  );

  test(
    "a failed attempt keeps its branch with its work, named in task_failed; nothing is merged",
    async () => {
      const p = repoProject([{ id: "F" }], { FAIL_TASKS: "F", OUT_F: "half.txt" });
      const r = await runToEnd(p, []);
      expect(r.code).toBe(1);
      const [run] = runIds(p);
      const rows = journalEvents(p, run!);
      const failed = ev(rows, "task_failed")[0]!;
      expect(failed.get("reason")).toStartWith(`exit_code:1 (branch bernstein/${run}/F kept)`);
      expect(failed.get("branch")).toBe(`bernstein/${run}/F`);
      expect(ev(rows, "task_branch_kept").map((x) => [x.get("task_id"), x.get("outcome")])).toEqual([["F", "failed"]]);
      expect(ev(rows, "task_merged")).toEqual([]);
      expect(existsSync(join(p.dir, "half.txt"))).toBe(false);
      expect(git(p.dir, "show", `bernstein/${run}/F:half.txt`)).toBe("written by F\n");
      noWorktreeLeft(p);
    },
    E2E_TIMEOUT,
  );

  test(
    "bernstein stop while three agents work: their worktrees are removed, their work stays on their branches",
    async () => {
      const hold = join(tmpHold(), "hold");
      const p = repoProject([{ id: "A" }, { id: "B" }, { id: "C" }], { HOLD: hold });
      const proc = spawnRun(p, ["--max-agents", "3"]);
      await waitFor(() => ["A", "B", "C"].every((t) => existsSync(join(p.cwdLog, t))), 20_000, "three agents to start");
      await waitFor(() => ["A", "B", "C"].every((t) => existsSync(join(cwdOf(p, t), "same.txt"))), 10_000, "the agents to write");
      expect(extraWorktrees(p)).toHaveLength(3);
      // async: a spawnSync here would leave the finished run a zombie that `stop` still sees running
      const stop = Bun.spawn([binPath(), "stop", "--timeout", "0"], { cwd: p.dir, env: { ...process.env, NO_COLOR: "1" }, stdout: "pipe", stderr: "pipe" });
      expect(await stop.exited).toBe(0);
      await proc.exited;
      const [run] = runIds(p);
      noWorktreeLeft(p);
      const rows = journalEvents(p, run!);
      expect(ev(rows, "task_requeued").map((x) => x.get("reason"))).toEqual(["stopped", "stopped", "stopped"]);
      expect(ev(rows, "task_merged")).toEqual([]);
      expect(existsSync(join(p.dir, "same.txt"))).toBe(false);
      // what the agents had written is committed on their kept branches, never lost
      expect(branches(p)).toEqual(["A", "B", "C"].map((t) => `bernstein/${run}/${t}`));
      for (const t of ["A", "B", "C"]) expect(git(p.dir, "show", `bernstein/${run}/${t}:same.txt`)).toBe(`written by ${t}\n`);
      expect(ev(rows, "task_branch_kept").map((x) => [x.get("task_id"), x.get("outcome")])).toEqual([["A", "killed"], ["B", "killed"], ["C", "killed"]]);
      rmSync(hold, { force: true });
    },
    E2E_TIMEOUT,
  );

  test(
    "kill -9 of the run: its worktrees stay until the next run reaps them (journaled), then that run completes and leaves none",
    async () => {
      const hold = join(tmpHold(), "hold");
      const p = repoProject([{ id: "A" }, { id: "B" }], { OUT_A: "a.txt", OUT_B: "b.txt", HOLD: hold });
      const proc = spawnRun(p, ["--max-agents", "2"]);
      await waitFor(() => ["A", "B"].every((t) => existsSync(join(p.cwdLog, t))), 20_000, "two agents to start");
      await waitFor(() => ["A", "B"].every((t) => existsSync(join(p.dir, ".sdd", "worktrees", runIds(p)[0]!, t, `${t.toLowerCase()}.txt`))), 10_000, "the agents to write");
      proc.kill("SIGKILL");
      await proc.exited;
      const [killed] = runIds(p);
      expect(extraWorktrees(p).length).toBe(2);
      rmSync(hold, { force: true });
      const r = await runToEnd(p, ["--max-agents", "2"]);
      expect(r.code).toBe(0);
      const second = runIds(p).find((x) => x !== killed)!;
      const rows = journalEvents(p, second);
      const reaped = ev(rows, "worktrees_reaped");
      expect(reaped).toHaveLength(1);
      expect(reaped[0]!.get("paths")).toEqual(["A", "B"].map((t) => join(p.sddDir, "worktrees", killed!, t)));
      // the killed agents' writes were committed on their branches before the worktrees went
      expect(reaped[0]!.get("branches_kept")).toEqual([`bernstein/${killed}/A`, `bernstein/${killed}/B`]);
      expect(git(p.dir, "show", `bernstein/${killed}/A:a.txt`)).toBe("written by A\n");
      expect(ev(rows, "task_merged").map((x) => x.get("task_id")).sort()).toEqual(["A", "B"]);
      expect(readFileSync(join(p.dir, "a.txt"), "utf8")).toBe("written by A\n");
      noWorktreeLeft(p);
    },
    E2E_TIMEOUT,
  );

  test(
    "kill -9, then a run with isolation: none: the leftover worktrees are still reaped",
    async () => {
      const hold = join(tmpHold(), "hold");
      const p = repoProject([{ id: "A" }], { HOLD: hold });
      const proc = spawnRun(p, []);
      await waitFor(() => existsSync(join(p.cwdLog, "A")), 20_000, "the agent to start");
      proc.kill("SIGKILL");
      await proc.exited;
      expect(extraWorktrees(p)).toHaveLength(1);
      rmSync(hold, { force: true });
      writeFileSync(join(p.dir, "bernstein.yaml"), readFileSync(join(p.dir, "bernstein.yaml"), "utf8") + "isolation: none\n");
      const r = await runToEnd(p, []);
      expect(r.code).toBe(0);
      const rows = journalEvents(p, runIds(p).at(-1)!);
      expect(ev(rows, "worktrees_reaped")).toHaveLength(1);
      expect(ev(rows, "task_worktree")).toEqual([]);
      expect(cwdOf(p, "A")).toBe(p.dir);
      noWorktreeLeft(p);
    },
    E2E_TIMEOUT,
  );

  test(
    "isolation: none in a git repository: agents work in the project folder, no worktree, no branch, no merge",
    async () => {
      const p = repoProject([{ id: "A" }], {}, "isolation: none\n");
      const r = await runToEnd(p, []);
      expect(r.code).toBe(0);
      expect(cwdOf(p, "A")).toBe(p.dir);
      const rows = journalEvents(p, runIds(p)[0]!);
      expect(ev(rows, "task_worktree")).toEqual([]);
      expect(ev(rows, "task_merged")).toEqual([]);
      expect(git(p.dir, "status", "--porcelain")).toBe("?? same.txt\n");
      expect(existsSync(join(p.sddDir, "worktrees"))).toBe(false);
    },
    E2E_TIMEOUT,
  );

  test(
    "isolation: worktree outside a git repository is refused before anything is written (exit 2, isolation_unavailable)",
    async () => {
      const p = makeProject({ tasks: [{ id: "A" }], config: "isolation: worktree\n" });
      const r = await runToEnd(p, ["--as-json"]);
      expect(r.code).toBe(2);
      const doc = JSON.parse(r.stdout);
      expect(doc).toMatchObject({ ok: false, error: "isolation_unavailable" });
      expect(doc.detail).toContain("not in one");
      expect(r.stderr).not.toContain("    at ");
      expect(existsSync(join(p.sddDir, "runs"))).toBe(false);
    },
    E2E_TIMEOUT,
  );

  test(
    "a project folder the repository does not hold (an ignored scratch workspace inside a checkout) runs as outside git",
    async () => {
      const p = makeProject({ tasks: [{ id: "A" }] });
      writeFileSync(join(p.dir, ".gitignore"), "ws/\nledger.txt\n");
      git(p.dir, "init", "-q");
      git(p.dir, "add", "-A");
      git(p.dir, "commit", "-qm", "base");
      const ws = join(p.dir, "ws");
      mkdirSync(ws);
      for (const f of ["bernstein.yaml", "plan.yaml", "agent.sh"]) writeFileSync(join(ws, f), readFileSync(join(p.dir, f)));
      chmodSync(join(ws, "agent.sh"), 0o755);
      const proc = Bun.spawn([binPath(), "run", "plan.yaml", "--port", "0"], { cwd: ws, env: { ...process.env, NO_COLOR: "1" }, stdout: "pipe", stderr: "pipe" });
      const [, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      expect(code).toBe(0);
      expect(stderr).toBe("");
      const [run] = readdirSync(join(ws, ".sdd", "runs"));
      const rows = readFileSync(join(ws, ".sdd", "runs", run!, "journal.jsonl"), "utf8");
      expect(rows).not.toContain('"task_worktree"');
      expect(extraWorktrees(p)).toEqual([]);
      expect(existsSync(join(ws, ".sdd", "worktrees"))).toBe(false);
    },
    E2E_TIMEOUT,
  );

  test(
    "a repository without a commit: agents share the project folder, with a warning",
    async () => {
      const p = makeProject({ tasks: [{ id: "A" }] });
      git(p.dir, "init", "-q");
      const r = await runToEnd(p, []);
      expect(r.code).toBe(0);
      expect(r.stderr).toContain("has no commit yet");
      expect(existsSync(join(p.sddDir, "worktrees"))).toBe(false);
    },
    E2E_TIMEOUT,
  );
});

const holds: string[] = [];
afterAll(() => {
  for (const d of holds) rmSync(d, { recursive: true, force: true });
});

/** A folder for a hold file that keeps agents busy while it exists. */
function tmpHold(): string {
  const d = Bun.spawnSync(["mktemp", "-d"], { stdout: "pipe" }).stdout.toString().trim();
  holds.push(d);
  writeFileSync(join(d, "hold"), "");
  return d;
}
