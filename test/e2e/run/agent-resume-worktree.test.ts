/**
 * Agent-level fast resume under worktree isolation (issue 32), through the
 * compiled binary in a git project with a stand-in `claude` on PATH that
 * really writes files: a fresh session writes a.txt, starts a second tool
 * call (b.txt) and works until it is stopped; a session continued with
 * `--resume <id>` notes what its work tree holds, then writes b.txt. Every
 * write is appended to `$CALLS/writes`, so a file written twice shows.
 * The resumed attempt must work on a checkout of the stopped attempt's kept
 * branch (a.txt there, not rewritten), and the task ends in one merge of
 * both files; a branch that is gone, or a run without worktrees, falls
 * back to a fresh attempt with the reason journaled.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bernstein } from "../../helpers/cli.ts";
import { cleanupProjects, journalEvents, makeProject, runIds, runToEnd, spawnRun, waitFor, type Project } from "./fixture.ts";
import { git } from "../../helpers/git.ts";

afterAll(cleanupProjects);

const STAND_IN = `#!/bin/sh
n=$(date +%s%N)
for a in "$@"; do printf '%s\\0' "$a"; done > "$CALLS/$n.argv"
cat > "$CALLS/$n.prompt"
pwd > "$CALLS/$n.cwd"
init='{"type":"system","subtype":"init","session_id":"s-123"}'
use2='{"type":"assistant","message":{"id":"m2","content":[{"type":"tool_use","id":"t2","name":"Write","input":{"file_path":"b.txt"}}],"usage":{"input_tokens":10,"output_tokens":5}},"session_id":"s-123"}'
res2='{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":"ok"}]},"session_id":"s-123"}'
case " $* " in
  *" --resume "*)
    ls > "$CALLS/$n.saw"
    printf '%s\\n' "$init"
    if [ -z "$RESUME_IDLE" ]; then
      echo "b by the session" > b.txt; echo b.txt >> "$CALLS/writes"
      printf '%s\\n' "$use2" "$res2"
    fi
    printf '%s\\n' '{"type":"result","subtype":"success","is_error":false,"result":"RESULT: finished in the same session","total_cost_usd":0.01,"session_id":"s-123"}'
    exit 0;;
esac
echo "a by the session" > a.txt; echo a.txt >> "$CALLS/writes"
printf '%s\\n' "$init" \\
  '{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"a.txt"}}],"usage":{"input_tokens":10,"output_tokens":5}},"session_id":"s-123"}' \\
  '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]},"session_id":"s-123"}' \\
  "$use2"
[ -n "$NEVER_STOP" ] || { touch "$CALLS/working"; exec sleep 60; }
echo "b by the session" > b.txt; echo b.txt >> "$CALLS/writes"
printf '%s\\n' "$res2" '{"type":"result","subtype":"success","is_error":false,"result":"RESULT: done fresh","total_cost_usd":0.02,"session_id":"s-123"}'
`;

/** The test's own git commands carry an identity; the runs under test get none. */

interface Setup {
  p: Project;
  calls: string;
  env: Record<string, string>;
}

/** A git project (one commit) whose one task X1 runs on the stand-in claude. */
function setup(): Setup {
  const p = makeProject({ tasks: [{ id: "X1" }] });
  const bin = join(p.dir, "bin");
  const calls = join(p.dir, "calls");
  mkdirSync(bin);
  mkdirSync(calls);
  writeFileSync(join(bin, "claude"), STAND_IN);
  chmodSync(join(bin, "claude"), 0o755);
  writeFileSync(join(p.dir, "bernstein.yaml"), `agent:\n  adapter: claude\n  timeout_s: 90\nmax_retries: 0\nstop_grace_s: 2\n`);
  writeFileSync(join(p.dir, ".gitignore"), "bin/\ncalls/\nledger.txt\n");
  git(p.dir, "init", "-q", "-b", "main");
  git(p.dir, "add", "-A");
  git(p.dir, "commit", "-qm", "base");
  return { p, calls, env: { PATH: `${bin}:${process.env.PATH}`, CALLS: calls } };
}

/** Each stand-in invocation in order: argv, prompt, where it ran and (resumed) what its tree held. */
function invocations(s: Setup): { argv: string[]; prompt: string; cwd: string; saw: string[] | null }[] {
  return readdirSync(s.calls)
    .filter((f) => f.endsWith(".argv"))
    .sort()
    .map((f) => {
      const at = (ext: string) => join(s.calls, f.replace(/\.argv$/, ext));
      return {
        argv: readFileSync(join(s.calls, f), "utf8").split("\0").slice(0, -1),
        prompt: readFileSync(at(".prompt"), "utf8"),
        cwd: readFileSync(at(".cwd"), "utf8").trim(),
        saw: existsSync(at(".saw")) ? readFileSync(at(".saw"), "utf8").split("\n").filter(Boolean) : null,
      };
    });
}

const writes = (s: Setup): string[] => readFileSync(join(s.calls, "writes"), "utf8").split("\n").filter(Boolean);

/** Start a run and wait until the stand-in is in its second tool call (a.txt written, b.txt not yet). */
async function startAndWait(s: Setup) {
  const proc = spawnRun(s.p, [], s.env);
  await waitFor(() => existsSync(join(s.calls, "working")), 30_000, "the stand-in to start its second tool call");
  return proc;
}

async function runAndStop(s: Setup): Promise<void> {
  const proc = await startAndWait(s);
  const stop = await bernstein(["stop"], { cwd: s.p.dir, env: s.env });
  expect(stop.code).toBe(0);
  expect(await proc.exited).toBe(1);
}

function branches(p: Project): string[] {
  return git(p.dir, "for-each-ref", "--format=%(refname:short)", "refs/heads/bernstein/").split("\n").filter(Boolean).sort();
}

function noWorktreeLeft(p: Project): void {
  expect(git(p.dir, "worktree", "list", "--porcelain").split("\n").filter((l) => l.startsWith("worktree "))).toEqual([`worktree ${git(p.dir, "rev-parse", "--show-toplevel").trim()}`]);
  const root = join(p.sddDir, "worktrees");
  expect(existsSync(root) ? readdirSync(root) : []).toEqual([]);
}

const ev = (rows: Map<string, any>[], name: string) => rows.filter((r) => r.get("event") === name);
const resumePoint = (p: Project) => JSON.parse(readFileSync(join(p.sddDir, "runtime", "resume", "X1", "resume.json"), "utf8"));

/** The resumed run of a stopped or killed attempt: same session, on the kept branch, one merge of both files. */
function expectContinuedOnBranch(s: Setup, run1: string, run2: string, head: string): void {
  const branch = `bernstein/${run1}/X1`;
  const calls = invocations(s);
  expect(calls.length).toBe(2);
  expect(calls[1]!.argv.slice(0, 3)).toEqual(["-p", "--resume", "s-123"]);
  expect(calls[1]!.prompt).toContain("1 tool call completed");
  // the resumed session worked in a checkout of the kept branch, made where the stopped one was (CLIs that key sessions
  // by folder find theirs), and it held what the session wrote before the stop
  expect(calls[1]!.cwd).toBe(join(s.p.sddDir, "worktrees", run1, "X1"));
  expect(calls[0]!.cwd).toBe(calls[1]!.cwd);
  expect(calls[1]!.saw).toContain("a.txt");
  expect(calls[1]!.saw).not.toContain("b.txt");
  // a.txt was written once, by the first attempt
  expect(writes(s)).toEqual(["a.txt", "b.txt"]);
  const rows = journalEvents(s.p, run2);
  expect(ev(rows, "task_resumed").map((x) => x.get("session_id"))).toEqual(["s-123"]);
  const wt = ev(rows, "task_worktree");
  expect(wt.map((x) => [x.get("branch"), x.get("continues")])).toEqual([[branch, head]]);
  expect(ev(rows, "task_resume_fallback")).toEqual([]);
  // one task, one merge, with the work of both attempts
  const merged = ev(rows, "task_merged");
  expect(merged.map((x) => [x.get("task_id"), x.get("branch"), x.get("files")])).toEqual([["X1", branch, ["a.txt", "b.txt"]]]);
  expect(readFileSync(join(s.p.dir, "a.txt"), "utf8")).toBe("a by the session\n");
  expect(readFileSync(join(s.p.dir, "b.txt"), "utf8")).toBe("b by the session\n");
  expect(git(s.p.dir, "status", "--porcelain", "--untracked-files=all")).toBe("");
  expect(branches(s.p)).toEqual([]);
  noWorktreeLeft(s.p);
  expect(existsSync(join(s.p.sddDir, "runtime", "resume", "X1"))).toBe(false);
}

describe("agent resume under worktree isolation (stand-in claude, git project)", () => {
  test("stopped in its second tool call, the task resumes in the same session on its kept branch: a.txt is there and not rewritten; one merge holds both files; no worktree left", async () => {
    const s = setup();
    await runAndStop(s);
    const [run1] = runIds(s.p);
    const branch = `bernstein/${run1}/X1`;
    // the stop committed a.txt on the kept branch, and the resume point names the branch and its head
    expect(branches(s.p)).toEqual([branch]);
    expect(git(s.p.dir, "show", `${branch}:a.txt`)).toBe("a by the session\n");
    const head = git(s.p.dir, "rev-parse", branch).trim();
    const point = resumePoint(s.p);
    expect(point).toMatchObject({ session_id: "s-123", branch, head, base: git(s.p.dir, "rev-parse", "main").trim(), worktree: join(s.p.sddDir, "worktrees", run1!, "X1") });
    noWorktreeLeft(s.p);

    const r = await runToEnd(s.p, ["--as-json"], s.env);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ outcome: "completed", tasks: { done: 1 } });
    const run2 = runIds(s.p).find((x) => x !== run1)!;
    expectContinuedOnBranch(s, run1!, run2, head);
  }, 90_000);

  test("an orchestrator killed with kill -9 in the second tool call: the next run reaps the worktree (a.txt committed on the kept branch) and resumes the session on that branch", async () => {
    const s = setup();
    const proc = await startAndWait(s);
    proc.kill("SIGKILL");
    await proc.exited;
    const [run1] = runIds(s.p);
    const r = await runToEnd(s.p, ["--as-json"], s.env);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ outcome: "completed", tasks: { done: 1 } });
    const run2 = runIds(s.p).find((x) => x !== run1)!;
    const rows = journalEvents(s.p, run2);
    const reaped = ev(rows, "worktrees_reaped");
    expect(reaped.map((x) => x.get("branches_kept"))).toEqual([[`bernstein/${run1}/X1`]]);
    // the reap came first: the requeued task's resume point found the branch with a.txt on it
    const names = rows.map((x) => x.get("event"));
    expect(names.indexOf("worktrees_reaped")).toBeLessThan(names.indexOf("task_requeued"));
    const head = ev(rows, "task_worktree")[0]!.get("continues");
    expect(typeof head).toBe("string");
    expect(git(s.p.dir, "show", `${head}:a.txt`)).toBe("a by the session\n");
    expectContinuedOnBranch(s, run1!, run2, head);
  }, 90_000);

  test("a resumed session that only finishes (no new write) passes verify: changed on what it wrote before the stop", async () => {
    const s = setup();
    await runAndStop(s);
    const [run1] = runIds(s.p);
    const r = await runToEnd(s.p, ["--as-json"], { ...s.env, RESUME_IDLE: "1" });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ outcome: "completed", tasks: { done: 1, failed: 0 } });
    const run2 = runIds(s.p).find((x) => x !== run1)!;
    const merged = ev(journalEvents(s.p, run2), "task_merged");
    expect(merged.map((x) => x.get("files"))).toEqual([["a.txt"]]);
    expect(writes(s)).toEqual(["a.txt"]);
    noWorktreeLeft(s.p);
  }, 90_000);

  test("the kept branch deleted before the resume: a fresh attempt from HEAD, task_resume_fallback branch_gone", async () => {
    const s = setup();
    await runAndStop(s);
    const [run1] = runIds(s.p);
    git(s.p.dir, "branch", "-D", `bernstein/${run1}/X1`);
    const r = await runToEnd(s.p, ["--as-json"], { ...s.env, NEVER_STOP: "1" });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ outcome: "completed", tasks: { done: 1, failed: 0 } });
    const run2 = runIds(s.p).find((x) => x !== run1)!;
    const rows = journalEvents(s.p, run2);
    const fallback = ev(rows, "task_resume_fallback");
    expect(fallback.map((x) => [x.get("reason"), x.get("session_id")])).toEqual([["branch_gone", "s-123"]]);
    expect(fallback[0]!.get("detail")).toContain(`bernstein/${run1}/X1`);
    expect(ev(rows, "task_resumed")).toEqual([]);
    const calls = invocations(s);
    expect(calls.map((c) => c.argv.includes("--resume"))).toEqual([false, false]);
    expect(calls[1]!.prompt).not.toStartWith("You were stopped");
    // the fresh attempt got its own branch from HEAD and merged its own work
    expect(ev(rows, "task_worktree").map((x) => [x.get("branch"), x.get("continues")])).toEqual([[`bernstein/${run2}/X1`, undefined]]);
    expect(ev(rows, "task_merged").map((x) => x.get("files"))).toEqual([["a.txt", "b.txt"]]);
    expect(branches(s.p)).toEqual([]);
    noWorktreeLeft(s.p);
    const table = await bernstein(["replay", "latest"], { cwd: s.p.dir, env: { NO_COLOR: "1" } });
    expect(table.stdout).toContain("fresh: branch_gone");
  }, 90_000);

  test("resumed in a run with isolation: none: the session's work is on a branch this run cannot give it, so a fresh attempt (isolation_off); the branch is kept", async () => {
    const s = setup();
    await runAndStop(s);
    const [run1] = runIds(s.p);
    writeFileSync(join(s.p.dir, "bernstein.yaml"), readFileSync(join(s.p.dir, "bernstein.yaml"), "utf8") + "isolation: none\n");
    const r = await runToEnd(s.p, ["--as-json"], { ...s.env, NEVER_STOP: "1" });
    expect(r.code).toBe(0);
    const run2 = runIds(s.p).find((x) => x !== run1)!;
    const rows = journalEvents(s.p, run2);
    expect(ev(rows, "task_resume_fallback").map((x) => x.get("reason"))).toEqual(["isolation_off"]);
    expect(invocations(s)[1]!.argv).not.toContain("--resume");
    expect(invocations(s)[1]!.cwd).toBe(s.p.dir);
    // the stopped attempt's work is not lost: its branch stays for inspection
    expect(branches(s.p)).toEqual([`bernstein/${run1}/X1`]);
  }, 90_000);
});
