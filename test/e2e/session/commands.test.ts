import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bernstein, type RunOptions } from "../../helpers/cli.ts";
import { runPython } from "../../helpers/python.ts";
import { cleanupTemps, startServer, tempProject, waitFor, type LiveServer } from "./procs.ts";

/** Live-server tests spawn several processes; give them room on a loaded CI machine. */
const E2E_TIMEOUT = 60_000;
const ENV = { BERNSTEIN_SERVER_URL: "", BERNSTEIN_AUTH_TOKEN: "" };
const live: LiveServer[] = [];
afterAll(async () => {
  for (const s of live) await s.kill();
  cleanupTemps();
});

function cli(cwd: string, args: string[], opts: RunOptions = {}) {
  return bernstein(args, { cwd, env: { ...ENV, ...opts.env }, timeoutMs: 60_000 });
}
async function cliJson(cwd: string, args: string[]) {
  const r = await cli(cwd, [...args, "--as-json"]);
  let json: any;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    throw new Error(`not one JSON document (exit ${r.code}): ${r.stdout}\n${r.stderr}`);
  }
  return { ...r, json };
}

/** A server with tasks in several states: A done, B in progress (claimed), C and D open. */
async function serverWithTasks(project: string): Promise<LiveServer> {
  const s = await startServer(project);
  live.push(s);
  await s.call("POST", "/tasks", { id: "A", title: "Write parser", role: "backend", priority: 1 });
  await s.call("POST", "/tasks", { id: "B", title: "Write docs", role: "docs", priority: 2 });
  await s.call("POST", "/tasks", { id: "C", title: "Add tests", role: "qa", priority: 3 });
  await s.call("POST", "/tasks", { id: "D", title: "Fix bug", role: "backend", priority: 1 });
  await s.call("POST", "/tasks", { id: "E", title: "Broken idea", role: "backend" });
  const claimed = await s.call("POST", "/tasks/claim", { agent_id: "agent-1", limit: 2 });
  const ids = claimed.json.tasks.map((t: any) => t.id).sort();
  expect(ids).toEqual(["A", "D"]);
  const lease = (r: any, id: string) => r.json.claims.find((c: any) => c.task_id === id).claim_id;
  await s.call("POST", "/tasks/A/complete", { result_summary: "parser done", claim_id: lease(claimed, "A") });
  await s.call("POST", "/tasks/D/status", { status: "open", claim_id: lease(claimed, "D") }); // back to the queue
  const e = await s.call("POST", "/tasks/claim", { agent_id: "agent-1", limit: 1 });
  expect(e.json.task.id).toBe("D");
  await s.call("POST", "/tasks/D/status", { status: "in_progress", claim_id: e.json.claim_id });
  const b = await s.call("POST", "/tasks/claim", { agent_id: "agent-2", limit: 1 }); // B
  await s.call("POST", "/tasks/B/status", { status: "in_progress", claim_id: b.json.claim_id });
  await s.call("POST", "/tasks/B/status", { status: "open", claim_id: b.json.claim_id });
  const f = await s.call("POST", "/tasks/claim", { agent_id: "agent-3", limit: 2 }); // B, C? depends on priority
  for (const t of f.json.tasks) if (t.id !== "E") await s.call("POST", `/tasks/${t.id}/status`, { status: "open", claim_id: lease(f, t.id) });
  const eLease = f.json.claims.find((c: any) => c.task_id === "E");
  await s.call("POST", "/tasks/E/fail", { reason: "not feasible", ...(eLease ? { claim_id: eLease.claim_id } : {}) }).catch(() => {});
  return s;
}

function readSessionIds(project: string): string[] {
  return JSON.parse(readFileSync(join(project, ".sdd", "runtime", "session.json"), "utf8")).completed_task_ids;
}

describe("status", () => {
  test("server down: exit 0, reported as down; JSON is one object", async () => {
    const p = tempProject();
    const human = await cli(p, ["status"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("Server   down");
    expect(human.stdout).toContain("Session  none");
    const r = await cliJson(p, ["status"]);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ ok: true, server: { reachable: false, url: null }, run: null, tasks: null, session: { status: "missing", resumable: false } });
  }, E2E_TIMEOUT);

  test("server up: url, pid, run counts, tasks; then session state after a stop", async () => {
    const p = tempProject();
    const s = await serverWithTasks(p);
    const r = await cliJson(p, ["status"]);
    expect(r.code).toBe(0);
    expect(r.json.server).toEqual({ reachable: true, url: s.url, pid: s.pid, source: "server.json", error: null });
    expect(r.json.run.total).toBe(5);
    expect(r.json.run.counts.done).toBe(1);
    expect(r.json.tasks.map((t: any) => t.id)).toEqual(["A", "B", "C", "D", "E"]);
    expect(r.json.tasks[0]).toEqual({ id: "A", title: "Write parser", status: "done", role: "backend", priority: 1, model: null, assigned_agent: "agent-1" });
    const human = await cli(p, ["status", "--sdd-dir", ".sdd"]);
    expect(human.stdout).toContain(`Server   up    ${s.url} (pid ${s.pid})`);
    expect(human.stdout).toMatch(/A\s+done\s+1\s+Write parser/);
  }, E2E_TIMEOUT);

  test("a corrupt session.json is reported, not fatal", async () => {
    const p = tempProject();
    mkdirSync(join(p, ".sdd", "runtime"), { recursive: true });
    writeFileSync(join(p, ".sdd", "runtime", "session.json"), "[1, 2");
    const r = await cliJson(p, ["status"]);
    expect(r.code).toBe(0);
    expect(r.json.session.status).toBe("corrupt");
    expect(r.json.session.warning).toContain("session.json");
  }, E2E_TIMEOUT);
});

describe("checkpoint and wrap-up against a live server", () => {
  test("checkpoint --goal writes <sdd>/sessions/<ts>-checkpoint.json with the server's task ids", async () => {
    const p = tempProject();
    const s = await serverWithTasks(p);
    const tasks = (await s.call("GET", "/tasks")).json as any[];
    const byStatus = (st: string[]) => tasks.filter((t) => st.includes(t.status));
    const r = await cliJson(p, ["checkpoint", "--goal", "Ship v1 — «now»"]);
    expect(r.code).toBe(0);
    expect(r.json.path).toMatch(/^\.sdd\/sessions\/\d+-checkpoint\.json$/);
    const file = readFileSync(join(p, r.json.path), "utf8");
    const onDisk = JSON.parse(file);
    expect(onDisk).toEqual({
      timestamp: r.json.timestamp,
      goal: "Ship v1 — «now»",
      completed_task_ids: byStatus(["done"]).map((t) => t.id),
      in_flight_task_ids: [...byStatus(["claimed"]), ...byStatus(["in_progress"])].map((t) => t.id),
      next_steps: byStatus(["open"]).map((t) => t.title),
      cost_spent: 0,
      git_sha: "",
    });
    expect(Object.keys(onDisk)).toEqual(["timestamp", "goal", "completed_task_ids", "in_flight_task_ids", "next_steps", "cost_spent", "git_sha"]);
    // byte format: Python json.dumps(indent=2) of the same object
    const py = runPython("import json,sys; d=json.loads(json.load(sys.stdin)); print(json.dumps(json.dumps(d, indent=2)))", file) as string;
    expect(file).toBe(py);
    expect(file).toContain('"cost_spent": 0.0');
    expect(statSync(join(p, r.json.path)).mode & 0o777).toBe(0o600);
    const human = await cli(p, ["checkpoint"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("Checkpoint written to .sdd/sessions/");
  }, E2E_TIMEOUT);

  test("wrap-up writes <sdd>/sessions/<ts>-wrapup.json with changes, learnings and the next brief", async () => {
    const p = tempProject();
    await serverWithTasks(p);
    const r = await cliJson(p, ["wrap-up"]);
    expect(r.code).toBe(0);
    expect(r.json.path).toMatch(/^\.sdd\/sessions\/\d+-wrapup\.json$/);
    const onDisk = JSON.parse(readFileSync(join(p, r.json.path), "utf8"));
    const { ok, path, ...brief } = r.json;
    expect(onDisk).toEqual(brief);
    expect(brief.changes_summary).toBe("- Write parser: parser done");
    expect(brief.learnings).toEqual(["Task 'Broken idea' failed: not feasible"]);
    expect(brief.completed_task_ids).toEqual(["A"]);
    expect(brief.git_diff_stat).toBe("(no uncommitted changes)");
    expect(brief.session_id).toBe(String(Math.trunc(brief.timestamp)));
    const human = await cli(p, ["wrap-up"]);
    expect(human.stdout).toContain("Wrap-up brief written to");
    expect(human.stdout).toContain("Next session");
  }, E2E_TIMEOUT);

  test("both refuse with server_unreachable (exit 1) when no server runs, and write nothing", async () => {
    const p = tempProject();
    for (const cmd of ["checkpoint", "wrap-up"]) {
      const r = await cliJson(p, [cmd]);
      expect(r.code).toBe(1);
      expect(r.json).toMatchObject({ ok: false, error: "server_unreachable" });
      expect(r.json.detail).toContain("Cannot reach task server");
    }
    expect(existsSync(join(p, ".sdd", "sessions"))).toBe(false);
  }, E2E_TIMEOUT);
});

describe("wrap-up --stop", () => {
  test("standalone server: brief written, then stopped as 'stop' does (session.json saved, server gone); JSON and human", async () => {
    const p = tempProject();
    const s = await serverWithTasks(p);
    const tasks = (await s.call("GET", "/tasks")).json as any[];
    const r = await cliJson(p, ["wrap-up", "--stop", "--timeout", "5"]);
    expect(r.code).toBe(0);
    const { ok, path, stop, ...brief } = r.json;
    expect(ok).toBe(true);
    expect(Object.keys(r.json).at(-1)).toBe("stop");
    expect(JSON.parse(readFileSync(join(p, path), "utf8"))).toEqual(brief);
    expect(brief.completed_task_ids).toEqual(["A"]);
    expect(stop).toMatchObject({ ok: true, reachable: true, url: s.url, session_saved: true, stop_accepted: true, force: false, timeout_s: 5, pid: s.pid, pid_role: "server", exited: true });
    expect(await s.proc.exited).toBe(0);
    const session = JSON.parse(readFileSync(join(p, ".sdd", "runtime", "session.json"), "utf8"));
    expect(session.completed_task_ids).toEqual(["A"]);
    expect(session.open_task_ids).toEqual(tasks.filter((t) => t.status === "open").map((t) => t.id));

    const q = tempProject();
    const s2 = await serverWithTasks(q);
    const human = await cli(q, ["wrap-up", "--stop"]);
    expect(human.code).toBe(0);
    expect(human.stderr).toBe("");
    expect(human.stdout).toMatch(/^Wrap-up brief written to \.sdd\/sessions\/\d+-wrapup\.json\n/);
    expect(human.stdout).toContain("\nStop\nSession saved to .sdd/runtime/session.json (1 done, ");
    // no --timeout: agents are signalled at once (a standalone server names no grace window)
    expect(human.stdout).toContain("Graceful stop requested (agents signalled now): ");
    expect(human.stdout).toContain(`Task server (pid ${s2.pid}) exited after `);
    expect(await s2.proc.exited).toBe(0);
  }, E2E_TIMEOUT);

  test("--timeout without --stop, or a bad --timeout: exit 2 before anything is written or stopped", async () => {
    const p = tempProject();
    const s = await serverWithTasks(p);
    const alone = await cliJson(p, ["wrap-up", "--timeout", "5"]);
    expect(alone.code).toBe(2);
    expect(alone.json).toEqual({ ok: false, error: "flag_not_applicable", detail: "--timeout does not apply without --stop", flags: ["--timeout"] });
    for (const bad of ["soon", "-1", "86401", ""]) {
      const r = await cliJson(p, ["wrap-up", "--stop", `--timeout=${bad}`]);
      expect(r.code).toBe(2);
      expect(r.json).toMatchObject({ ok: false, error: "usage" });
      expect(r.json.detail).toContain("--timeout needs seconds");
    }
    const human = await cli(p, ["wrap-up", "--timeout", "5"]);
    expect(human.code).toBe(2);
    expect(human.stdout).toBe("");
    expect(human.stderr).toContain("--timeout does not apply without --stop");
    expect(human.stderr).not.toContain("    at ");
    // nothing written, nothing stopped
    expect(existsSync(join(p, ".sdd", "sessions"))).toBe(false);
    expect(existsSync(join(p, ".sdd", "runtime", "session.json"))).toBe(false);
    expect((await s.call("GET", "/status")).status).toBe(200);
  }, E2E_TIMEOUT);

  test("no server: exit 1 server_unreachable with stop: null; no brief, and no stop fallback written", async () => {
    const p = tempProject();
    const r = await cliJson(p, ["wrap-up", "--stop"]);
    expect(r.code).toBe(1);
    expect(r.json).toMatchObject({ ok: false, error: "server_unreachable", stop: null });
    expect(existsSync(join(p, ".sdd", "sessions"))).toBe(false);
    expect(existsSync(join(p, ".sdd", "runtime", "session_state.json"))).toBe(false);
  }, E2E_TIMEOUT);
});

describe("stop", () => {
  test("server down: writes the session_state.json fallback, says so, exit 1", async () => {
    const p = tempProject();
    mkdirSync(join(p, ".sdd", "backlog", "open"), { recursive: true });
    mkdirSync(join(p, ".sdd", "backlog", "claimed"), { recursive: true });
    writeFileSync(join(p, ".sdd", "backlog", "open", "1-a.yaml"), "title: a\n");
    writeFileSync(join(p, ".sdd", "backlog", "open", "2-b.yaml"), "title: b\n");
    writeFileSync(join(p, ".sdd", "backlog", "claimed", "3-c.yaml"), "title: c\n");
    const human = await cli(p, ["stop"]);
    expect(human.code).toBe(1);
    expect(human.stderr).toContain("session_state.json");
    expect(human.stderr).toContain("not a resumable session");
    expect(human.stdout).toBe("");
    const fallbackPath = join(p, ".sdd", "runtime", "session_state.json");
    const text = readFileSync(fallbackPath, "utf8");
    const fb = JSON.parse(text);
    expect(fb).toEqual({ stopped_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/), open_tasks: 2, claimed_tasks: 1 });
    expect(text).toBe(JSON.stringify(fb, null, 2)); // Python indent=2 of ASCII ints/strings
    expect(existsSync(join(p, ".sdd", "runtime", "session.json"))).toBe(false);
    const r = await cliJson(p, ["stop", "--force"]);
    expect(r.code).toBe(1);
    expect(r.json).toMatchObject({ ok: false, error: "server_unreachable", fallback_written: true, open_tasks: 2, claimed_tasks: 1 });
  }, E2E_TIMEOUT);

  test("standalone server: session.json from GET /tasks, POST /stop shuts the server down", async () => {
    const p = tempProject();
    const s = await serverWithTasks(p);
    const tasks = (await s.call("GET", "/tasks")).json as any[];
    const r = await cliJson(p, ["stop", "--timeout", "5"]);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ ok: true, reachable: true, url: s.url, session_saved: true, stop_accepted: true, force: false, timeout_s: 5, pid: s.pid, pid_role: "server", exited: true });
    expect(await s.proc.exited).toBe(0);
    const session = JSON.parse(readFileSync(join(p, ".sdd", "runtime", "session.json"), "utf8"));
    expect(session.completed_task_ids).toEqual(tasks.filter((t) => t.status === "done").map((t) => t.id));
    expect(session.pending_task_ids).toEqual(tasks.filter((t) => ["claimed", "in_progress"].includes(t.status)).map((t) => t.id));
    expect(session.open_task_ids).toEqual(tasks.filter((t) => t.status === "open").map((t) => t.id));
    expect(statSync(join(p, ".sdd", "runtime", "session.json")).mode & 0o777).toBe(0o600);
    // the saved session is what `session show` and `status` report
    const show = await cliJson(p, ["session", "show"]);
    expect(show.code).toBe(0);
    expect(show.json).toMatchObject({ ok: true, status: "ok", resumable: true, stale: false, session: { completed_task_ids: ["A"] } });
    const st = await cliJson(p, ["status"]);
    expect(st.json.session).toMatchObject({ status: "ok", resumable: true, completed: 1 });
  }, E2E_TIMEOUT);

  test("server found through BERNSTEIN_SERVER_URL/BERNSTEIN_AUTH_TOKEN: status and stop work from another directory", async () => {
    const p = tempProject();
    const s = await serverWithTasks(p);
    const elsewhere = tempProject();
    const env = { BERNSTEIN_SERVER_URL: s.url, BERNSTEIN_AUTH_TOKEN: s.token };
    const st = await cli(elsewhere, ["status", "--as-json"], { env });
    expect(JSON.parse(st.stdout)).toMatchObject({ ok: true, server: { reachable: true, url: s.url, source: "env" }, run: { total: 5 } });
    const wrong = await cli(elsewhere, ["status", "--as-json"], { env: { ...env, BERNSTEIN_AUTH_TOKEN: "wrong" } });
    expect(wrong.code).toBe(0);
    expect(JSON.parse(wrong.stdout).server).toMatchObject({ reachable: false, url: s.url });
    const r = await cli(elsewhere, ["stop", "--as-json"], { env });
    expect(r.code).toBe(0);
    // no local pid to wait for: the stop is delivered, the wait is skipped
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, stop_accepted: true, pid: null, exited: null, session_saved: true });
    expect(readSessionIds(elsewhere)).toEqual(["A"]);
    expect(await s.proc.exited).toBe(0);
  }, E2E_TIMEOUT);

  test("bad --timeout is a usage error", async () => {
    const r = await cliJson(tempProject(), ["stop", "--timeout", "soon"]);
    expect(r.code).toBe(2);
    expect(r.json.error).toBe("usage");
  }, E2E_TIMEOUT);
});

describe("session show", () => {
  function writeSession(p: string, text: string) {
    mkdirSync(join(p, ".sdd", "runtime"), { recursive: true });
    writeFileSync(join(p, ".sdd", "runtime", "session.json"), text);
  }

  test("missing → exit 1 no_session; corrupt → exit 3 session_corrupt", async () => {
    const p = tempProject();
    let r = await cliJson(p, ["session", "show"]);
    expect(r.code).toBe(1);
    expect(r.json.error).toBe("no_session");
    writeSession(p, '{"goal": "no saved_at"}');
    r = await cliJson(p, ["session", "show"]);
    expect(r.code).toBe(3);
    expect(r.json.error).toBe("session_corrupt");
    const human = await cli(p, ["session", "show"]);
    expect(human.code).toBe(3);
    expect(human.stderr).toContain("saved_at");
  }, E2E_TIMEOUT);

  test("stale sessions are shown with their staleness (exit 0); --stale-after changes the threshold", async () => {
    const p = tempProject();
    const savedAt = Date.now() / 1000 - 45 * 60;
    writeSession(
      p,
      JSON.stringify({ saved_at: savedAt, goal: "g", completed_task_ids: ["X"], pending_task_ids: [], cost_spent: 1.25 }, null, 2),
    );
    let r = await cliJson(p, ["session", "show"]);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ status: "stale", stale: true, resumable: false, session: { goal: "g", completed_task_ids: ["X"], open_task_ids: [], cost_spent: 1.25 } });
    expect(r.json.age_seconds).toBeGreaterThan(45 * 60 - 5);
    r = await cliJson(p, ["session", "show", "--stale-after", "60"]);
    expect(r.json).toMatchObject({ status: "ok", resumable: true });
    const human = await cli(p, ["session", "show"]);
    expect(human.stdout).toContain("stale");
    expect(human.stdout).toContain("completed: X");
  }, E2E_TIMEOUT);
});

describe("--help snapshots", () => {
  for (const cmd of [["stop"], ["status"], ["checkpoint"], ["wrap-up"], ["session", "show"]]) {
    test(cmd.join(" "), async () => {
      const r = await bernstein([...cmd, "--help"]);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatchSnapshot();
    });
  }
});
