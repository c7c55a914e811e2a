import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bernstein } from "../../helpers/cli.ts";
import { cleanupTemps, startLive, tempProject, waitFor, type LiveServer } from "./procs.ts";

/**
 * `stop` and task-trace replay against a live `bernstein run --keep-alive`
 * with a script agent: real orchestrator, real server, real agent processes.
 */
const E2E_TIMEOUT = 90_000;
const ENV = { BERNSTEIN_SERVER_URL: "", BERNSTEIN_AUTH_TOKEN: "", NO_COLOR: "1" };
const live: LiveServer[] = [];
afterAll(async () => {
  for (const s of live) await s.kill();
  cleanupTemps();
});

/** A project whose agent sleeps AGENT_SLEEP seconds, then reports the model it was given. */
function project(opts: { sleep: number; tasks: string[] }): string {
  const p = tempProject("bern-live-run-");
  writeFileSync(
    join(p, "agent.sh"),
    '#!/bin/sh\nsleep "$AGENT_SLEEP"\necho "working on $BERNSTEIN_TASK_ID"\necho "model=$BERNSTEIN_MODEL"\n',
  );
  chmodSync(join(p, "agent.sh"), 0o755);
  writeFileSync(
    join(p, "bernstein.yaml"),
    `agent:\n  adapter: script\n  script: ./agent.sh\n  env:\n    AGENT_SLEEP: "${opts.sleep}"\nmodels:\n  default: sonnet\nmax_agents: 1\n`,
  );
  writeFileSync(join(p, "plan.yaml"), opts.tasks.map((id) => `- id: ${id}\n  title: Task ${id}\n  description: Do ${id}.\n`).join(""));
  return p;
}

async function startRun(p: string): Promise<LiveServer> {
  const s = await startLive(p, ["run", "plan.yaml", "--keep-alive", "--port", "0"], ENV);
  live.push(s);
  return s;
}

async function taskStatus(s: LiveServer, id: string): Promise<string> {
  return (await s.call("GET", `/tasks/${id}`)).json.status;
}

async function waitStatus(s: LiveServer, id: string, wanted: string[]): Promise<void> {
  let last = "";
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    last = await taskStatus(s, id);
    if (wanted.includes(last)) return;
    await Bun.sleep(50);
  }
  throw new Error(`task ${id} stayed '${last}', wanted ${wanted.join("|")}`);
}

function readSession(p: string): any {
  return JSON.parse(readFileSync(join(p, ".sdd", "runtime", "session.json"), "utf8"));
}

describe("bernstein stop against a live 'bernstein run --keep-alive'", () => {
  test("graceful: session saved, the running agent finishes, the orchestrator exits", async () => {
    const p = project({ sleep: 2, tasks: ["G-1", "G-2"] });
    const s = await startRun(p);
    await waitStatus(s, "G-1", ["claimed", "in_progress"]);
    const r = await bernstein(["stop", "--timeout", "30", "--as-json"], { cwd: p, env: ENV, timeoutMs: 80_000 });
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ ok: true, reachable: true, session_saved: true, stop_accepted: true, force: false, timeout_s: 30, pid: s.pid, pid_role: "orchestrator", exited: true });
    // the counts of the run's final save, not of the task list when stop asked (G-1 running then, done by the end)
    expect(report).toMatchObject({ counts_from: "final_session", completed: 1, pending: 0, open: 1 });
    // the run was stopped with G-2 still open: not a success
    expect(await s.proc.exited).toBe(1);
    const out = await new Response(s.proc.stdout as ReadableStream).text();
    expect(out).toContain("done G-1"); // graceful: the running agent was let finish
    expect(out).not.toContain("on G-2"); // and nothing new was claimed after the stop
    // the orchestrator's own save on the way out supersedes the one stop made
    const session = readSession(p);
    expect(session.completed_task_ids).toEqual(["G-1"]);
    expect(session.open_task_ids).toEqual(["G-2"]);
    // and the next run resumes from it: G-1 is not run again, G-2 is
    const next = await bernstein(["run", "plan.yaml", "--port", "0", "--as-json"], { cwd: p, env: ENV, timeoutMs: 60_000 });
    expect(next.code).toBe(0);
    expect(JSON.parse(next.stdout)).toMatchObject({ ok: true, resume: { decision: "resume" }, done_previously: 1 });
    expect(next.stderr).not.toContain("on G-1");
    expect(next.stderr).toContain("done G-2");
  }, E2E_TIMEOUT);

  test("--force: ends the slow agent now; session.json written; orchestrator exits", async () => {
    const p = project({ sleep: 60, tasks: ["F-1", "F-2"] });
    const s = await startRun(p);
    await waitStatus(s, "F-1", ["claimed", "in_progress"]);
    const started = Date.now();
    const r = await bernstein(["stop", "--force", "--as-json"], { cwd: p, env: ENV, timeoutMs: 80_000 });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, force: true, stop_accepted: true, pid_role: "orchestrator", exited: true });
    // `stop --force` succeeded; the run it stopped left F-1 and F-2 undone: exit 1
    expect(await s.proc.exited).toBe(1);
    // the 60 s agent did not hold the stop up
    expect(Date.now() - started).toBeLessThan(45_000);
    const session = readSession(p);
    expect(session.completed_task_ids).toEqual([]);
    expect([...session.pending_task_ids, ...session.open_task_ids].sort()).toEqual(["F-1", "F-2"]);
    const status = await bernstein(["status", "--as-json"], { cwd: p, env: ENV });
    expect(JSON.parse(status.stdout)).toMatchObject({ server: { reachable: false }, session: { status: "ok", resumable: true } });
  }, E2E_TIMEOUT);
});

describe("bernstein wrap-up --stop against a live 'bernstein run --keep-alive'", () => {
  test("writes the brief, then stops gracefully as 'stop' does: one JSON document, session saved, orchestrator gone", async () => {
    const p = project({ sleep: 3, tasks: ["W-1", "W-2", "W-3"] });
    const s = await startRun(p);
    await waitStatus(s, "W-1", ["done"]);
    await waitStatus(s, "W-2", ["claimed", "in_progress"]);
    const r = await bernstein(["wrap-up", "--stop", "--timeout", "30", "--as-json"], { cwd: p, env: ENV, timeoutMs: 80_000 });
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(Object.keys(doc)).toEqual(["ok", "path", "timestamp", "session_id", "changes_summary", "learnings", "next_session_brief", "git_diff_stat", "completed_task_ids", "stop"]);
    const { ok, path, stop, ...brief } = doc;
    expect(ok).toBe(true);
    // the brief: taken before the stop, while W-2 was still running
    expect(path).toMatch(/^\.sdd\/sessions\/\d+-wrapup\.json$/);
    expect(JSON.parse(readFileSync(join(p, path), "utf8"))).toEqual(brief);
    expect(brief.completed_task_ids).toEqual(["W-1"]);
    expect(brief.changes_summary).toBe("- Task W-1: model=sonnet");
    expect(brief.next_session_brief).toContain("Task W-3");
    // the stop: what `bernstein stop --as-json` prints
    expect(stop).toMatchObject({ ok: true, reachable: true, session_saved: true, stop_accepted: true, force: false, timeout_s: 30, pid: s.pid, pid_role: "orchestrator", exited: true });
    // the run's final counts: W-2, let finish, is done by the time the run ends
    expect(stop).toMatchObject({ counts_from: "final_session", completed: 2, pending: 0, open: 1 });
    expect(stop.session_path).toBe(".sdd/runtime/session.json");
    await s.proc.exited;
    expect(() => process.kill(s.pid, 0)).toThrow();
    const out = await new Response(s.proc.stdout as ReadableStream).text();
    expect(out).toContain("done W-2"); // graceful: the running agent was let finish
    expect(out).not.toContain("on W-3");
    const session = readSession(p);
    expect(session.completed_task_ids).toEqual(["W-1", "W-2"]);
    expect(session.open_task_ids).toEqual(["W-3"]);
    const status = await bernstein(["status", "--as-json"], { cwd: p, env: ENV });
    expect(JSON.parse(status.stdout)).toMatchObject({ server: { reachable: false }, session: { status: "ok", resumable: true } });
  }, E2E_TIMEOUT);
});

describe("task-trace replay against a live orchestrator", () => {
  test("replay with --model: the agent's output differs by model, shown as a diff; JSON shape", async () => {
    const p = project({ sleep: 0, tasks: ["R-1"] });
    const s = await startRun(p);
    await waitStatus(s, "R-1", ["done"]);
    const original = (await s.call("GET", "/tasks/R-1")).json;
    expect(original.result_summary).toBe("model=sonnet");

    const human = await bernstein(["replay", "R-1", "--model", "opus", "--timeout", "30"], { cwd: p, env: ENV, timeoutMs: 60_000 });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^Replay task created: [0-9a-f]+ \(replaying R-1, trace [0-9a-f]{16}\)\n/);
    expect(human.stdout).toContain("--- original\n+++ replay\n@@ -1 +1 @@\n-model=sonnet\n+model=opus\n");

    const j = await bernstein(["replay", "R-1", "--model", "haiku", "--extra-context", "be brief", "--as-json"], { cwd: p, env: ENV, timeoutMs: 60_000 });
    expect(j.code).toBe(0);
    const doc = JSON.parse(j.stdout);
    expect(Object.keys(doc)).toEqual(["ok", "task_id", "replay_task_id", "status", "original_result_summary", "result_summary", "diff"]);
    expect(doc).toMatchObject({
      ok: true,
      task_id: "R-1",
      status: "done",
      original_result_summary: "model=sonnet",
      result_summary: "model=haiku",
      diff: "--- original\n+++ replay\n@@ -1 +1 @@\n-model=sonnet\n+model=haiku",
    });
    const replayTask = (await s.call("GET", `/tasks/${doc.replay_task_id}`)).json;
    expect(replayTask).toMatchObject({ title: "[replay] Task R-1", description: "Do R-1.\n\nReplay hint:\nbe brief", model: "haiku", status: "done" });
    // the original task's record is untouched
    expect((await s.call("GET", "/tasks/R-1")).json).toEqual(original);
    expect((await bernstein(["stop", "--as-json"], { cwd: p, env: ENV, timeoutMs: 60_000 })).code).toBe(0);
    await s.proc.exited;
  }, E2E_TIMEOUT);
});
