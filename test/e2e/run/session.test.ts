import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import {
  cleanupProjects,
  eventNames,
  journalEvents,
  makeProject,
  readLedger,
  readSession,
  runIds,
  runToEnd,
  spawnRun,
  storedTasks,
  waitFor,
  type Project,
} from "./fixture.ts";

afterAll(cleanupProjects);

const CHAIN = [{ id: "T1" }, { id: "T2", depends_on: ["T1"] }, { id: "T3", depends_on: ["T2"] }, { id: "T4", depends_on: ["T3"] }];

function serverInfo(p: Project): { url: string; token: string } | null {
  try {
    return JSON.parse(readFileSync(join(p.sddDir, "runtime", "server.json"), "utf8"));
  } catch {
    return null;
  }
}

async function call(p: Project, method: string, path: string, body?: unknown): Promise<any> {
  const info = serverInfo(p)!;
  const res = await fetch(info.url + path, {
    method,
    headers: { authorization: `Bearer ${info.token}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

/** No task that reached done ever started again (ledger starts vs completed_at). */
function assertNoRunAfterDone(p: Project): void {
  const tasks = storedTasks(p);
  for (const t of tasks) {
    expect(t.status).toBe("done");
    const doneNs = BigInt(Math.round(t.completed_at! * 1e6)) * 1000n;
    for (const l of readLedger(p).filter((x) => x.kind === "start" && x.task === t.id)) {
      expect(l.ns < doneNs).toBe(true);
    }
  }
}

function writeSession(p: Project, s: Record<string, unknown>): void {
  mkdirSync(join(p.sddDir, "runtime"), { recursive: true });
  writeFileSync(join(p.sddDir, "runtime", "session.json"), JSON.stringify(s, null, 2));
}

describe("sessions: stop, save and resume (compiled binary)", () => {
  test("Ctrl-C mid-run exits 130 with session.json saved; the next run resumes without re-planning or re-running done work", async () => {
    const p = makeProject({ tasks: CHAIN, agentEnv: { AGENT_SLEEP: "0.3" } });
    const proc = spawnRun(p, ["--max-agents", "1"]);
    // T1 done and T2 running
    await waitFor(() => readLedger(p).some((l) => l.kind === "start" && l.task === "T2"), 20000, "T2 to start");
    const orch = JSON.parse(readFileSync(join(p.sddDir, "runtime", "orchestrator.json"), "utf8"));
    expect(orch).toMatchObject({ pid: proc.pid, run_id: runIds(p)[0] });
    expect(orch.server_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(statSync(join(p.sddDir, "runtime", "orchestrator.json")).mode & 0o777).toBe(0o600);
    proc.kill("SIGINT");
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect(code).toBe(130);
    expect(err).toContain("Ctrl+C received - saving state...");
    void out;
    const s = readSession(p);
    expect(s.completed_task_ids).toEqual(["T1"]);
    expect([...s.pending_task_ids, ...s.open_task_ids].sort()).toEqual(["T2", "T3", "T4"]);
    expect(existsSync(join(p.sddDir, "runtime", "orchestrator.json"))).toBe(false);
    const first = journalEvents(p, runIds(p)[0]!);
    expect(first.at(-1)!.get("outcome")).toBe("interrupted");

    const r = await runToEnd(p, ["--max-agents", "1"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("resumed: 1 done previously");
    const second = journalEvents(p, runIds(p)[1]!);
    const names = eventNames(second);
    expect(names).not.toContain("plan_loaded");
    const resume = second.find((x) => x.get("event") === "session_resume")!;
    expect(resume.get("decision")).toBe("resume");
    expect(resume.get("reason")).toBe("unfinished_work");
    expect(resume.get("completed").raw).toBe("1");
    // T1 ran exactly once; T2 (killed mid-way) may run again; every task done once
    const starts = readLedger(p).filter((l) => l.kind === "start");
    expect(starts.filter((l) => l.task === "T1")).toHaveLength(1);
    expect(second.filter((x) => x.get("event") === "task_completed").map((x) => x.get("task_id"))).toEqual(["T2", "T3", "T4"]);
    assertNoRunAfterDone(p);
  });

  test("a fully drained session short-circuits planning: 'N done previously'", async () => {
    const p = makeProject();
    expect((await runToEnd(p)).code).toBe(0);
    const r = await runToEnd(p, ["--as-json"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("3 done previously");
    expect(JSON.parse(r.stdout)).toMatchObject({ outcome: "drained", done_previously: 3, agents_spawned: 0, resume: { decision: "drained" } });
    expect(readLedger(p).filter((l) => l.kind === "start")).toHaveLength(3);
    const names = eventNames(journalEvents(p, runIds(p)[1]!));
    expect(names).toEqual(["run_started", "session_resume", "run_completed"]);
  });

  const unfinished = (goal = "") => ({
    saved_at: Date.now() / 1000,
    goal,
    completed_task_ids: ["T1"],
    pending_task_ids: ["T2"],
    open_task_ids: ["T3"],
    cost_spent: 0.0,
  });

  for (const [name, setup, args, message] of [
    ["--fresh", (p: Project) => writeSession(p, unfinished()), ["--fresh"], "fresh because --fresh"],
    ["session.resume: false", (p: Project) => {
      writeSession(p, unfinished());
      writeFileSync(join(p.dir, "bernstein.yaml"), readFileSync(join(p.dir, "bernstein.yaml"), "utf8") + "session:\n  resume: false\n");
    }, [], "fresh because session.resume is false"],
    ["a stale snapshot", (p: Project) => writeSession(p, { ...unfinished(), saved_at: Date.now() / 1000 - 31 * 60 }), [], "fresh because stale"],
    ["stale_after_minutes from config", (p: Project) => {
      writeSession(p, { ...unfinished(), saved_at: Date.now() / 1000 - 3 * 60 });
      writeFileSync(join(p.dir, "bernstein.yaml"), readFileSync(join(p.dir, "bernstein.yaml"), "utf8") + "session:\n  stale_after_minutes: 2\n");
    }, [], "fresh because stale"],
    ["a changed goal", (p: Project) => writeSession(p, unfinished("old goal")), ["--goal", "new goal"], "fresh because the goal changed"],
    ["no saved session", (_p: Project) => {}, [], "fresh: no saved session"],
  ] as const) {
    test(`${name} starts fresh and re-plans`, async () => {
      const p = makeProject();
      setup(p);
      const r = await runToEnd(p, [...args]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(message);
      const rows = journalEvents(p, runIds(p)[0]!);
      expect(rows.find((x) => x.get("event") === "session_resume")!.get("decision")).toBe("fresh");
      expect(eventNames(rows)).toContain("plan_loaded");
      expect(readLedger(p).filter((l) => l.kind === "start").map((l) => l.task).sort()).toEqual(["T1", "T2", "T3"]);
    });
  }

  test("SIGTERM signals running agents at once (a container's stop): no new claims, journal finalised; open tasks left -> exit 143, run_incomplete", async () => {
    const p = makeProject({ tasks: [{ id: "S1" }, { id: "S2" }, { id: "S3" }, { id: "S4" }], agentEnv: { AGENT_SLEEP: "30" } });
    const proc = spawnRun(p, ["--max-agents", "2", "--as-json"]);
    await waitFor(() => readLedger(p).filter((l) => l.kind === "start").length === 2, 20000, "two agents");
    proc.kill("SIGTERM");
    const [out, , code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect(code).toBe(143);
    const s = JSON.parse(out);
    // work was left: the journal stays unsealed so the run can resume (issue 31)
    expect(s).toMatchObject({ ok: false, error: "run_incomplete", outcome: "stopped", stopped_by: "SIGTERM", sealed: false, tasks: { done: 0, open: 4 } });
    expect(s.detail).toContain("stopped by SIGTERM with 4 task(s) not done");
    const ledger = readLedger(p);
    // the two running agents were ended (their 30 s sleep did not hold the stop up), nothing new was claimed
    expect(ledger.filter((l) => l.kind === "start")).toHaveLength(2);
    expect(ledger.filter((l) => l.kind === "end")).toHaveLength(0);
    expect(readSession(p).open_task_ids.sort()).toEqual(["S1", "S2", "S3", "S4"]);
    const rows = journalEvents(p, runIds(p)[0]!);
    expect(rows.filter((x) => x.get("event") === "task_requeued").map((x) => x.get("reason"))).toEqual(["stopped", "stopped"]);
    expect(rows.at(-1)!.get("event")).toBe("run_completed");
    expect(rows.at(-1)!.get("outcome")).toBe("stopped");
  });

  test("POST /stop {force: true} kills agents now; their tasks go back to the queue", async () => {
    const p = makeProject({ tasks: [{ id: "K1" }], agentEnv: { AGENT_SLEEP: "30" } });
    const proc = spawnRun(p, ["--as-json"]);
    await waitFor(() => readLedger(p).length === 1 && serverInfo(p), 20000, "agent start");
    const st = await call(p, "GET", "/status");
    expect(st.json).toMatchObject({ run_id: runIds(p)[0], orchestrator: { pid: proc.pid, running_agents: 1, stopping: false } });
    const r = await call(p, "POST", "/stop", { force: true });
    expect(r.status).toBe(202);
    expect(r.json.accepted).toBe(true);
    const [out, , code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect(code).toBe(1);
    expect(JSON.parse(out)).toMatchObject({ ok: false, error: "run_incomplete", outcome: "stopped", stopped_by: "POST /stop", tasks: { open: 1, done: 0 } });
    expect(readLedger(p).filter((l) => l.kind === "end")).toHaveLength(0);
    expect(storedTasks(p)[0]).toMatchObject({ status: "open" });
    const names = eventNames(journalEvents(p, runIds(p)[0]!));
    expect(names).toContain("task_requeued");
    expect(names.at(-1)).toBe("run_completed");
  });

  test("a task cancelled by a client while its agent works: the result is discarded, the run goes on", async () => {
    const p = makeProject({ tasks: [{ id: "C1" }, { id: "C2" }], agentEnv: { AGENT_SLEEP: "0.4" } });
    const proc = spawnRun(p, ["--max-agents", "1"]);
    await waitFor(() => readLedger(p).some((l) => l.task === "C1") && serverInfo(p), 20000, "C1 start");
    const r = await call(p, "POST", "/tasks/C1/status", { status: "cancelled" });
    expect(r.json.status).toBe("cancelled");
    expect(await proc.exited).toBe(0);
    const byId = Object.fromEntries(storedTasks(p).map((t) => [t.id, t.status]));
    expect(byId).toEqual({ C1: "cancelled", C2: "done" });
    const rows = journalEvents(p, runIds(p)[0]!);
    const discarded = rows.find((x) => x.get("event") === "task_result_discarded")!;
    expect(discarded.get("task_id")).toBe("C1");
    expect(discarded.get("status")).toBe("cancelled");
  });

  test("--keep-alive picks up a task created later and routes its model to the agent", async () => {
    const p = makeProject({ tasks: [{ id: "first" }] });
    const proc = spawnRun(p, ["--keep-alive"]);
    await waitFor(() => storedTasksSafe(p).some((t) => t.id === "first" && t.status === "done") && serverInfo(p), 20000, "first task");
    const created = await call(p, "POST", "/tasks", { title: "[replay] task first", model: "replay-model", description: "again" });
    expect(created.status).toBe(201);
    const id = created.json.id;
    let task: any = null;
    for (let i = 0; i < 300 && task?.status !== "done"; i++) {
      task = (await call(p, "GET", `/tasks/${id}`)).json;
      if (task.status !== "done") await Bun.sleep(20);
    }
    expect(task).toMatchObject({ status: "done", model: "replay-model", result_summary: `did ${id} with [replay-model]` });
    const stop = await call(p, "POST", "/stop", { force: false, timeout_s: 5 });
    expect(stop.status).toBe(202);
    // Stopped with nothing left to do: the backlog drained, so the run succeeded.
    expect(await proc.exited).toBe(0);
  });

  test("SIGTERM after the backlog drained (--keep-alive) exits 0: nothing was left undone", async () => {
    const p = makeProject({ tasks: [{ id: "only" }] });
    const proc = spawnRun(p, ["--keep-alive", "--as-json"]);
    await waitFor(() => storedTasksSafe(p).some((t) => t.id === "only" && t.status === "done"), 20000, "the task");
    proc.kill("SIGTERM");
    const [out, , code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toMatchObject({ ok: true, outcome: "completed", tasks: { done: 1, open: 0 } });
  });
});

function storedTasksSafe(p: Project) {
  try {
    return storedTasks(p);
  } catch {
    return [];
  }
}

describe("an unreadable session.json never wipes the task store (compiled binary)", () => {
  const TEN = Array.from({ length: 10 }, (_, i) => ({ id: `N${i + 1}` }));

  for (const [what, damage] of [
    ["truncated", (path: string) => writeFileSync(path, readFileSync(path, "utf8").slice(0, 17))],
    ["emptied", (path: string) => writeFileSync(path, "")],
    ["deleted", (path: string) => rmSync(path)],
  ] as const) {
    test(`9 of 10 done, session.json ${what}: the next run resumes from the store and re-runs nothing done`, async () => {
      const p = makeProject({ tasks: TEN, agentEnv: { FAIL_TASKS: "N10" }, config: "max_retries: 0" });
      const first = await runToEnd(p, ["--max-agents", "2"]);
      expect(first.code).toBe(1);
      expect(storedTasks(p).filter((t) => t.status === "done")).toHaveLength(9);
      damage(join(p.sddDir, "runtime", "session.json"));

      // N10 failed for good: a re-run has nothing to do, and it is not a success
      const again = await runToEnd(p, ["--as-json"]);
      expect(again.code).toBe(1);
      const s = JSON.parse(again.stdout);
      expect(s).toMatchObject({ ok: false, error: "tasks_failed", resume: { decision: "drained" }, done_previously: 9, agents_spawned: 0, tasks: { done: 9, failed: 1 } });
      expect(s.resume.message).toContain("resumed from the task store");
      if (what !== "deleted") expect(again.stderr).toContain("unreadable");
      expect(readLedger(p).filter((l) => l.kind === "start")).toHaveLength(10);
      expect(storedTasks(p).filter((t) => t.status === "done")).toHaveLength(9);

      // --fresh is the only way to start over
      const fresh = await runToEnd(p, ["--fresh", "--as-json"]);
      expect(JSON.parse(fresh.stdout).resume).toMatchObject({ decision: "fresh", reason: "flag_fresh" });
      expect(readLedger(p).filter((l) => l.kind === "start")).toHaveLength(20);
    }, 60_000);
  }

  test("interrupted with open work, session.json corrupted: the resume runs only what was left", async () => {
    const p = makeProject({ tasks: CHAIN, agentEnv: { AGENT_SLEEP: "0.3" } });
    const proc = spawnRun(p, ["--max-agents", "1"]);
    await waitFor(() => readLedger(p).some((l) => l.kind === "start" && l.task === "T3"), 20000, "T3 to start");
    proc.kill("SIGINT");
    expect(await proc.exited).toBe(130);
    writeFileSync(join(p.sddDir, "runtime", "session.json"), "{\"saved_at\": ");
    const r = await runToEnd(p, ["--as-json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, resume: { decision: "resume", reason: "session_unreadable" }, done_previously: 2 });
    const starts = readLedger(p).filter((l) => l.kind === "start");
    expect(starts.filter((l) => l.task === "T1")).toHaveLength(1);
    expect(starts.filter((l) => l.task === "T2")).toHaveLength(1);
    assertNoRunAfterDone(p);
  }, 60_000);
});
