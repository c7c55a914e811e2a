import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bernstein, binPath } from "../../helpers/cli.ts";
import { cleanupTemps, startServer, tempProject, type LiveServer } from "./procs.ts";

/**
 * Task-trace replay against a live `bernstein server`; the test plays the
 * agent (claims the replay task over HTTP and completes it), so what is
 * checked is the real command talking to the real server.
 */
/** Live-server tests spawn several processes; give them room on a loaded CI machine. */
const E2E_TIMEOUT = 60_000;
const ENV = { BERNSTEIN_SERVER_URL: "", BERNSTEIN_AUTH_TOKEN: "", NO_COLOR: "1" };
const live: LiveServer[] = [];
afterAll(async () => {
  for (const s of live) await s.kill();
  cleanupTemps();
});

function traceRow(over: Record<string, unknown> = {}): string {
  return (
    JSON.stringify({
      trace_id: "0123456789abcdef",
      session_id: "S-1",
      task_ids: ["T-orig"],
      agent_role: "backend",
      model: "sonnet",
      effort: "high",
      spawn_ts: 1747000000.0,
      end_ts: null,
      steps: [{ type: "spawn", timestamp: 1747000000.0, detail: "Spawned backend agent (sonnet/high) for tasks: T-orig" }],
      outcome: "unknown",
      log_path: "",
      task_snapshots: [
        { id: "T-orig", title: "Fix login flow", description: "Make the login work.\n", role: "backend", priority: 1, scope: "small", complexity: "medium", model: null, effort: null, result_summary: "model=sonnet\nall good" },
      ],
      ...over,
    }) + "\n"
  );
}

async function project(): Promise<{ p: string; s: LiveServer }> {
  const p = tempProject("bern-task-replay-");
  mkdirSync(join(p, ".sdd", "traces"), { recursive: true });
  // Python layout: spawn copy, then the finalised copy of the same trace.
  writeFileSync(join(p, ".sdd", "traces", "T-orig.jsonl"), traceRow() + traceRow({ end_ts: 1747000100.0, outcome: "success" }));
  const s = await startServer(p);
  live.push(s);
  const orig = await s.call("POST", "/tasks", { id: "T-orig", title: "Fix login flow", role: "backend" });
  expect(orig.status).toBe(201);
  // The original ran and finished before; only the replay task is left to claim.
  const c = (await s.call("POST", "/tasks/claim", { agent_id: "original-agent" })).json;
  expect(c.task.id).toBe("T-orig");
  await s.call("POST", "/tasks/T-orig/complete", { result_summary: "model=sonnet\nall good", claim_id: c.claim_id });
  return { p, s };
}

function spawnReplay(cwd: string, args: string[]) {
  const proc = Bun.spawn([binPath(), "replay", ...args], { cwd, env: { ...process.env, ...ENV }, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  return {
    proc,
    async done() {
      const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      return { stdout, stderr, code };
    },
  };
}

/** Act as the agent: claim the next task (the replay task) once it exists. */
async function claimReplayTask(s: LiveServer): Promise<any> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const r = await s.call("POST", "/tasks/claim", { agent_id: "test-agent", limit: 1 });
    if (r.json.task) return { ...r.json.task, claim_id: r.json.claim_id };
    await Bun.sleep(50);
  }
  throw new Error("no replay task appeared");
}

describe("bernstein replay <TASK_ID> (live server)", () => {
  test("--model/--extra-context: new task submitted, original untouched, JSON with the diff", async () => {
    const { p, s } = await project();
    const before = (await s.call("GET", "/tasks/T-orig")).json;
    const run = spawnReplay(p, ["T-orig", "--model", "opus", "--extra-context", "Check the cookie path", "--timeout", "30", "--as-json"]);
    const task = await claimReplayTask(s);
    expect(task).toMatchObject({
      title: "[replay] Fix login flow",
      description: "Make the login work.\n\nReplay hint:\nCheck the cookie path",
      role: "backend",
      priority: 1,
      scope: "small",
      complexity: "medium",
      model: "opus",
      effort: "high",
    });
    await s.call("POST", `/tasks/${task.id}/status`, { claim_id: task.claim_id, status: "in_progress" });
    await s.call("POST", `/tasks/${task.id}/complete`, { claim_id: task.claim_id, result_summary: "model=opus\nall good" });
    const r = await run.done();
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      ok: true,
      task_id: "T-orig",
      replay_task_id: task.id,
      status: "done",
      original_result_summary: "model=sonnet\nall good",
      result_summary: "model=opus\nall good",
      diff: "--- original\n+++ replay\n@@ -1,2 +1,2 @@\n-model=sonnet\n+model=opus\n all good",
    });
    expect(r.stderr).toBe(""); // no progress line without a TTY
    const after = (await s.call("GET", "/tasks/T-orig")).json;
    expect(after).toEqual(before);
  }, E2E_TIMEOUT);

  test("human output: 'Replay task created', the diff lines; a failed replay exits 1", async () => {
    const { p, s } = await project();
    const run = spawnReplay(p, ["T-orig"]);
    const task = await claimReplayTask(s);
    expect(task.model).toBe("sonnet"); // the trace's model, never the string "None"
    await s.call("POST", `/tasks/${task.id}/complete`, { claim_id: task.claim_id, result_summary: "model=sonnet\nsome changes" });
    const r = await run.done();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Replay task created: ${task.id}`);
    expect(r.stdout).toContain("--- original\n+++ replay\n@@ -1,2 +1,2 @@\n model=sonnet\n-all good\n+some changes\n");

    const failing = spawnReplay(p, ["T-orig", "--as-json"]);
    const t2 = await claimReplayTask(s);
    await s.call("POST", `/tasks/${t2.id}/fail`, { claim_id: t2.claim_id, reason: "agent crashed" });
    const f = await failing.done();
    expect(f.code).toBe(1);
    expect(JSON.parse(f.stdout)).toMatchObject({ ok: false, error: "replay_failed", status: "failed", replay_task_id: t2.id });
  }, E2E_TIMEOUT);

  test("no agent picks it up: timeout → exit 1 with the replay task id; the replay task is cancelled, not left open", async () => {
    const { p, s } = await project();
    const r = await bernstein(["replay", "T-orig", "--timeout", "0.3", "--as-json"], { cwd: p, env: ENV });
    expect(r.code).toBe(1);
    const j = JSON.parse(r.stdout);
    expect(j).toMatchObject({ ok: false, error: "replay_timeout", status: "timeout", task_id: "T-orig", result_summary: null, diff: "", cancelled: true });
    expect(j.detail).toContain("it was cancelled");
    const t = (await s.call("GET", `/tasks/${j.replay_task_id}`)).json;
    expect(t).toMatchObject({ status: "cancelled", fail_reason: "replay gave up after 0.3s without a result" });
    // nothing is left for a later `run --keep-alive` to pick up
    expect((await s.call("POST", "/tasks/claim", { agent_id: "later" })).json.task).toBeNull();
    const human = await bernstein(["replay", "T-orig", "--timeout", "0.2"], { cwd: p, env: ENV });
    expect(human.code).toBe(1);
    expect(human.stdout).toContain("it was cancelled on the server");
  }, E2E_TIMEOUT);

  test("our layout (<task_id>-<ts>.json with result_summary) is read too", async () => {
    const { p, s } = await project();
    writeFileSync(
      join(p, ".sdd", "traces", "T-orig-1747000500.json"),
      traceRow({ trace_id: "feedfacefeedface", spawn_ts: 1747000500.0, end_ts: 1747000600.0, outcome: "success", result_summary: "newer run" }),
    );
    const run = spawnReplay(p, ["T-orig", "--as-json"]);
    const task = await claimReplayTask(s);
    await s.call("POST", `/tasks/${task.id}/complete`, { claim_id: task.claim_id, result_summary: "newer run" });
    const r = await run.done();
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ original_result_summary: "newer run", result_summary: "newer run", diff: "" });
    const human = spawnReplay(p, ["T-orig"]);
    const t2 = await claimReplayTask(s);
    await s.call("POST", `/tasks/${t2.id}/complete`, { claim_id: t2.claim_id, result_summary: "newer run" });
    expect((await human.done()).stdout).toContain("Replay completed with no result-summary diff.");
  }, E2E_TIMEOUT);
});

describe("bernstein replay <TASK_ID> refusals", () => {
  test("no trace → unknown_target exit 2; server down → server_unreachable exit 1; bad flags → exit 2", async () => {
    const p = tempProject("bern-task-replay-");
    // No run, agent or trace has this id: it is reported as an unknown replay word, not a missing trace.
    let r = await bernstein(["replay", "T-none", "--as-json"], { cwd: p, env: ENV });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: "unknown_target", target: "T-none" });
    mkdirSync(join(p, ".sdd", "traces"), { recursive: true });
    writeFileSync(join(p, ".sdd", "traces", "T-orig.jsonl"), traceRow());
    r = await bernstein(["replay", "T-orig", "--as-json"], { cwd: p, env: ENV });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: "server_unreachable" });
    r = await bernstein(["replay", "T-orig", "--limit", "3", "--as-json"], { cwd: p, env: ENV });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: "flag_not_applicable" });
    r = await bernstein(["replay", "T-orig", "--timeout", "-1", "--as-json"], { cwd: p, env: ENV });
    expect(r.code).toBe(2);
    writeFileSync(join(p, ".sdd", "traces", "T-bare.jsonl"), JSON.stringify({ trace_id: "x", session_id: "s", task_ids: ["T-bare"] }) + "\n");
    r = await bernstein(["replay", "T-bare", "--as-json"], { cwd: p, env: ENV });
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: "trace_without_snapshot" });
  }, E2E_TIMEOUT);
});
