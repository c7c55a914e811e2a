import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bernstein, ROOT } from "../../helpers/cli.ts";
import { readServerJson, startServer } from "./serverProc.ts";
import { TaskClient } from "../../../src/server/client.ts";
import { ServerRequestError, ServerUnreachableError } from "../../../src/server/errors.ts";

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "bern-server-"));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("bernstein server (compiled binary)", () => {
  test("--help", async () => {
    const r = await bernstein(["server", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatchSnapshot();
  });

  test("--port 0 writes the real URL and a 0600 server.json; clean shutdown removes it", async () => {
    const dir = tempDir();
    const s = await startServer(dir);
    const infoPath = join(s.sddDir, "runtime", "server.json");
    expect(statSync(infoPath).mode & 0o777).toBe(0o600);
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(s.url.endsWith(":0")).toBe(false);
    expect((await s.call("GET", "/health")).json).toEqual({ status: "ok" });
    expect(await s.stop()).toBe(0);
    expect(existsSync(infoPath)).toBe(false);
    expect(await new Response(s.proc.stdout as ReadableStream).text()).toContain(`listening on ${s.url}`);
  });

  test("auth: no token and a wrong token are 401, the token never appears in output", async () => {
    const dir = tempDir();
    const s = await startServer(dir, [], { BERNSTEIN_AUTH_TOKEN: "tok-from-env-123" });
    expect(s.token).toBe("tok-from-env-123");
    const none = await fetch(s.url + "/health");
    expect(none.status).toBe(401);
    const wrong = await fetch(s.url + "/tasks", { headers: { authorization: "Bearer nope" } });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as any).detail).toContain("invalid bearer token");
    s.proc.kill("SIGTERM");
    await s.proc.exited;
    const out = (await new Response(s.proc.stdout as ReadableStream).text()) + (await new Response(s.proc.stderr as ReadableStream).text());
    expect(out).not.toContain("tok-from-env-123");
  });

  test("task endpoints: create, list, paging, get, claim, complete, fail, transitions, bad input", async () => {
    const dir = tempDir();
    const s = await startServer(dir);
    try {
      const a = await s.call("POST", "/tasks", { id: "A", title: "first", role: "backend", priority: 1 });
      expect(a.status).toBe(201);
      expect(a.json).toMatchObject({ id: "A", title: "first", role: "backend", priority: 1, status: "open", scope: "medium", complexity: "medium", model: null });
      const b = await s.call("POST", "/tasks", { title: "second", depends_on: ["A"], model: "opus" });
      expect(b.status).toBe(201);
      expect(b.json.id).toMatch(/^[0-9a-f]{12}$/);

      // validation
      expect((await s.call("POST", "/tasks", { title: "x", bogus: 1 })).json.detail).toContain("unknown field 'bogus'");
      expect((await s.call("POST", "/tasks", { title: "x".repeat(501) })).status).toBe(422);
      expect((await s.call("POST", "/tasks", { title: "x", description: "d".repeat(100_001) })).status).toBe(422);
      expect((await s.call("POST", "/tasks", { title: "x", depends_on: ["missing"] })).json.detail).toContain("unknown task 'missing'");
      expect((await s.call("POST", "/tasks", "{not json")).status).toBe(400);
      expect((await s.call("POST", "/tasks", "[1,2]")).status).toBe(422);
      const big = await s.call("POST", "/tasks", JSON.stringify({ title: "x", description: "y".repeat(1024 * 1024) }));
      expect(big.status).toBe(413);
      expect(big.json.detail).toContain("exceeds the limit");
      expect((await s.call("POST", "/tasks", { id: "A", title: "dup" })).status).toBe(409);

      // lists
      const list = await s.call("GET", "/tasks");
      expect(list.json.map((t: any) => t.id)).toEqual(["A", b.json.id]);
      const page = await s.call("GET", "/tasks?limit=1&offset=1");
      expect(page.json).toMatchObject({ total: 2, limit: 1, offset: 1 });
      expect(page.json.tasks.map((t: any) => t.id)).toEqual([b.json.id]);
      expect((await s.call("GET", "/tasks?status=bogus")).status).toBe(422);
      const nf = await s.call("GET", "/tasks/nope");
      expect(nf.status).toBe(404);
      expect(nf.json.detail).toBe("Task 'nope' not found");

      // claim respects depends_on: only A is ready
      const c1 = await s.call("POST", "/tasks/claim", { agent_id: "ag-1", limit: 5 });
      expect(c1.json.tasks.map((t: any) => t.id)).toEqual(["A"]);
      expect(c1.json.task).toMatchObject({ id: "A", status: "claimed", assigned_agent: "ag-1", attempts: 1 });
      expect((await s.call("POST", "/tasks/claim", {})).json).toEqual({ task: null, tasks: [], claim_id: null, lease_expires_at: null, lease_s: 300, claims: [] });
      expect(c1.json.claim_id).toMatch(/^[0-9a-f]{32}$/);
      expect(c1.json.lease_expires_at - Date.now() / 1000).toBeGreaterThan(290);

      // illegal transition names the allowed targets
      const bad = await s.call("POST", `/tasks/${b.json.id}/status`, { status: "done" });
      expect(bad.status).toBe(409);
      expect(bad.json.allowed).toEqual(["claimed", "waiting_for_subtasks", "cancelled", "failed"]);
      expect(bad.json.detail).toContain("allowed from 'open'");

      expect((await s.call("POST", "/tasks/A/status", { status: "in_progress", claim_id: c1.json.claim_id })).json.status).toBe("in_progress");
      const done = await s.call("POST", "/tasks/A/complete", { result_summary: "ok", cost_usd: 0.25, claim_id: c1.json.claim_id });
      expect(done.json).toMatchObject({ status: "done", result_summary: "ok", cost_usd: 0.25 });
      expect((await s.call("POST", "/tasks/A/complete", {})).status).toBe(409);

      const c2 = await s.call("POST", "/tasks/claim", { agent_id: "ag-2" });
      expect(c2.json.task.id).toBe(b.json.id);
      const failed = await s.call("POST", `/tasks/${b.json.id}/fail`, { reason: "boom", claim_id: c2.json.claim_id });
      expect(failed.json).toMatchObject({ status: "failed", fail_reason: "boom" });

      const st = await s.call("GET", "/status");
      expect(st.json).toMatchObject({ total: 2, cost_usd: 0.25, goal: "", run_id: null });
      expect(st.json.counts).toMatchObject({ done: 1, failed: 1, open: 0 });

      expect((await s.call("GET", "/nowhere")).status).toBe(404);
      expect((await s.call("DELETE", "/tasks")).status).toBe(405);
      // still serving after all the bad input
      expect((await s.call("GET", "/health")).status).toBe(200);
    } finally {
      await s.stop();
    }
  });

  test("a second server on the same state dir is refused (exit 2)", async () => {
    const dir = tempDir();
    const s = await startServer(dir);
    try {
      const r = await bernstein(["server", "--port", "0", "--sdd-dir", s.sddDir, "--as-json"], { cwd: dir });
      expect(r.code).toBe(2);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: "server_running" });
    } finally {
      await s.stop();
    }
  });

  test("bad --port is a usage error", async () => {
    const r = await bernstein(["server", "--port", "99999"], { cwd: tempDir() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--port");
  });

  test("POST /shutdown answers, then the server exits 0 and removes server.json", async () => {
    const dir = tempDir();
    const s = await startServer(dir);
    const r = await s.call("POST", "/shutdown");
    expect(r.status).toBe(202);
    expect(r.json.accepted).toBe(true);
    expect(await s.proc.exited).toBe(0);
    expect(readServerJson(s.sddDir)).toBeNull();
  });

  test("kill -9 mid-run and restart on the same db: nothing is lost", async () => {
    const dir = tempDir();
    const s = await startServer(dir);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await s.call("POST", "/tasks", { id: `T${i}`, title: `task ${i}` })).json.id);
    await s.call("POST", "/tasks/claim", { agent_id: "a", limit: 5 });
    await s.call("POST", "/tasks/T0/complete", { result_summary: "zero", cost_usd: 1.5 });
    await s.call("POST", "/tasks/T1/fail", { reason: "nope" });
    const before = (await s.call("GET", "/tasks")).json;
    s.proc.kill("SIGKILL");
    await s.proc.exited;
    // the stale server.json and lock of the dead process do not block the restart
    const s2 = await startServer(dir);
    try {
      const after = (await s2.call("GET", "/tasks")).json;
      expect(after).toEqual(before);
      expect(after.map((t: any) => t.id)).toEqual(ids);
      const claimed = await s2.call("POST", "/tasks/claim", { agent_id: "b", limit: 100 });
      expect(claimed.json.tasks.map((t: any) => t.id)).toEqual(ids.slice(5));
    } finally {
      await s2.stop();
    }
  });

  test("200 concurrent claims from 4 client processes: no task is claimed twice", async () => {
    const dir = tempDir();
    const s = await startServer(dir);
    try {
      const n = 150;
      for (let i = 0; i < n; i += 50) {
        await Promise.all(Array.from({ length: 50 }, (_, k) => s.call("POST", "/tasks", { id: `C${i + k}`, title: `c${i + k}` })));
      }
      const script = `
        const [url, token, who] = process.argv.slice(-3);
        const res = await Promise.all(Array.from({ length: 50 }, (_, i) =>
          fetch(url + "/tasks/claim", { method: "POST", headers: { authorization: "Bearer " + token }, body: JSON.stringify({ agent_id: who + "-" + i }) })
            .then((r) => r.json())));
        console.log(JSON.stringify(res.map((r) => r.task && r.task.id)));`;
      const procs = [0, 1, 2, 3].map((c) =>
        Bun.spawn([process.execPath, "-e", script, s.url, s.token, `client${c}`], { stdout: "pipe", stderr: "inherit", cwd: ROOT }),
      );
      const outs = await Promise.all(procs.map(async (p) => JSON.parse(await new Response(p.stdout).text()) as (string | null)[]));
      const all = outs.flat();
      expect(all).toHaveLength(200);
      const got = all.filter((x): x is string => x !== null);
      expect(got).toHaveLength(n);
      expect(new Set(got).size).toBe(n);
      expect(all.filter((x) => x === null)).toHaveLength(200 - n);
      const tasks = (await s.call("GET", "/tasks?status=claimed")).json;
      expect(tasks).toHaveLength(n);
      expect(tasks.every((t: any) => t.attempts === 1)).toBe(true);
    } finally {
      await s.stop();
    }
  });

  test("TaskClient (the CLI's HTTP client) against the compiled server", async () => {
    const dir = tempDir();
    const s = await startServer(dir);
    const c = TaskClient.forSddDir(s.sddDir);
    expect(c.url).toBe(s.url);
    expect(await c.health()).toEqual({ status: "ok" });
    const t = await c.createTask({ title: "via client", model: "m1" });
    expect(t).toMatchObject({ title: "via client", model: "m1", status: "open" });
    expect((await c.listTasks()).map((x) => x.id)).toEqual([t.id]);
    expect(await c.listTasks({ status: "done" })).toEqual([]);
    expect(await c.listTasksPage({ limit: 10 })).toMatchObject({ total: 1, limit: 10, offset: 0 });
    expect(await c.getTask("missing")).toBeNull();
    const claim = await c.claim({ agent_id: "x" });
    expect(claim.task!.id).toBe(t.id);
    let err: unknown;
    try {
      await c.setStatus(t.id, "planned", undefined, claim.claim_id!);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ServerRequestError);
    expect((err as ServerRequestError).code).toBe("illegal_transition");
    expect((err as ServerRequestError).httpStatus).toBe(409);
    expect((err as ServerRequestError).facts.allowed).toContain("in_progress");
    await expect(c.complete(t.id, { result_summary: "r" })).rejects.toMatchObject({ code: "claim_mismatch", httpStatus: 409 });
    expect((await c.heartbeat(t.id, claim.claim_id!)).claim_id).toBe(claim.claim_id!);
    expect((await c.complete(t.id, { result_summary: "r", cost_usd: 0.5, claim_id: claim.claim_id })).status).toBe("done");
    expect((await c.status()).counts.done).toBe(1);
    const bad = new TaskClient({ url: s.url, token: "wrong" });
    await expect(bad.health()).rejects.toMatchObject({ code: "unauthorized", httpStatus: 401 });
    const stop = await c.stop({ force: false, timeout_s: 1 });
    expect(stop.accepted).toBe(true);
    expect(await s.proc.exited).toBe(0);
    await expect(new TaskClient({ url: s.url, token: s.token }, { timeoutMs: 1000 }).health()).rejects.toBeInstanceOf(ServerUnreachableError);
  });
});

/** POST a body of `size` bytes with Python's urllib `tries` times; the status (or the OS error) of each. */
async function pythonPosts(url: string, token: string, size: number, tries: number, auth = `Bearer ${token}`): Promise<{ outcomes: string[]; details: string[] }> {
  const script = `
import json, sys, urllib.request, urllib.error
url, auth, size, tries = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
body = b'{"title": "' + b'x' * size + b'"}'
out, details = [], []
for _ in range(tries):
    req = urllib.request.Request(url + "/tasks", data=body, method="POST", headers={"Authorization": auth, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            out.append(str(r.status))
    except urllib.error.HTTPError as e:
        out.append(str(e.code))
        details.append(json.loads(e.read().decode())["error"])
    except OSError as e:
        out.append(type(e).__name__ + ":" + str(e))
print(json.dumps({"outcomes": out, "details": details}))
`;
  const p = Bun.spawn(["python3", "-c", script, url, auth, String(size), String(tries)], { stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  if ((await p.exited) !== 0) throw new Error(`python3 failed: ${err}`);
  return JSON.parse(out);
}

describe("hostile requests are answered, not reset (compiled server)", () => {
  test("oversize bodies: Python's urllib gets the 413 document every time (40 tries, 1.5 MiB and 6 MiB)", async () => {
    const s = await startServer(tempDir());
    try {
      for (const size of [1.5 * 1024 * 1024, 6 * 1024 * 1024]) {
        const r = await pythonPosts(s.url, s.token, size, size > 2 * 1024 * 1024 ? 10 : 40);
        expect(r.outcomes.filter((o) => o !== "413")).toEqual([]);
        expect(new Set(r.details)).toEqual(new Set(["body_too_large"]));
      }
      // a wrong token with a large body: the 401 arrives too
      const bad = await pythonPosts(s.url, s.token, 512 * 1024, 10, "Bearer wrong");
      expect(bad.outcomes.filter((o) => o !== "401")).toEqual([]);
      // and the server still serves afterwards
      expect((await s.call("GET", "/health")).status).toBe(200);
    } finally {
      await s.stop();
    }
  }, 60_000);

  test("'Bearer <token> x' is a malformed header (not a missing one); invalid UTF-8 bodies are refused with 400", async () => {
    const s = await startServer(tempDir());
    try {
      const malformed = await fetch(s.url + "/health", { headers: { authorization: `Bearer ${s.token} x` } });
      expect(malformed.status).toBe(401);
      expect(((await malformed.json()) as any).detail).toContain("malformed Authorization header");
      const basic = await fetch(s.url + "/health", { headers: { authorization: "Basic abc" } });
      expect(((await basic.json()) as any).detail).toContain("malformed");
      const missing = await fetch(s.url + "/health");
      expect(((await missing.json()) as any).detail).toContain("missing 'Authorization: Bearer <token>' header");

      const bytes = new Uint8Array([...new TextEncoder().encode('{"title": "caf'), 0xe9, ...new TextEncoder().encode('"}')]);
      const res = await fetch(s.url + "/tasks", { method: "POST", headers: { authorization: `Bearer ${s.token}` }, body: bytes });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: "invalid_utf8" });
      expect((await s.call("GET", "/tasks")).json).toEqual([]);
      // valid UTF-8 still works
      expect((await s.call("POST", "/tasks", { title: "café ☕" })).json.title).toBe("café ☕");
    } finally {
      await s.stop();
    }
  });
});

describe("default port: per state directory, never a fixed one (compiled server)", () => {
  async function startDefault(dir: string) {
    const sddDir = join(dir, ".sdd");
    const proc = Bun.spawn([process.env.BERNSTEIN_BIN ?? join(ROOT, "dist", "bernstein"), "server", "--sdd-dir", sddDir], { cwd: dir, stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
    for (let i = 0; i < 1000 && !readServerJson(sddDir, proc.pid); i++) await Bun.sleep(10);
    const info = readServerJson(sddDir, proc.pid) as any;
    if (!info) throw new Error(`server did not start: ${await new Response(proc.stderr).text()}`);
    return { proc, info, async stop() { proc.kill("SIGTERM"); return await proc.exited; } };
  }

  test("two servers started without --port in two state dirs both serve; a state dir keeps its port; a taken port falls back to a free one", async () => {
    const [a, b] = [tempDir(), tempDir()];
    const sa = await startDefault(a);
    const sb = await startDefault(b);
    try {
      expect(sa.info.port).not.toBe(8052);
      expect(sa.info.port).not.toBe(sb.info.port);
      for (const s of [sa, sb]) {
        const r = await fetch(s.info.url + "/health", { headers: { authorization: `Bearer ${s.info.token}` } });
        expect(r.status).toBe(200);
      }
      // clients find it through server.json
      expect(TaskClient.forSddDir(join(a, ".sdd")).url).toBe(sa.info.url);
    } finally {
      expect(await sa.stop()).toBe(0);
      expect(await sb.stop()).toBe(0);
    }
    // restart: the same port for the same state dir
    const again = await startDefault(a);
    const port = again.info.port;
    expect(await again.stop()).toBe(0);
    expect(port).toBe(sa.info.port);
    // something else holds it now: the server still starts, on another port
    const squatter = Bun.listen({ hostname: "127.0.0.1", port, socket: { data() {} } });
    try {
      const moved = await startDefault(a);
      expect(moved.info.port).not.toBe(port);
      expect((await fetch(moved.info.url + "/health", { headers: { authorization: `Bearer ${moved.info.token}` } })).status).toBe(200);
      expect(await moved.stop()).toBe(0);
      // an explicit --port that is taken is still refused
      const r = await bernstein(["server", "--port", String(port), "--sdd-dir", join(a, ".sdd"), "--as-json"], { cwd: a });
      expect(r.code).toBe(2);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: "port_in_use" });
    } finally {
      squatter.stop(true);
    }
  });

  test("two `bernstein run` without --port on one machine at the same time: no port_in_use", async () => {
    const mk = () => {
      const d = tempDir();
      Bun.spawnSync(["sh", "-c", `printf 'agent:\\n  adapter: command\\n  command: ["/bin/sh", "-c", "sleep 0.5; echo RESULT: ok"]\\n' > bernstein.yaml; printf -- '- id: A\\n  title: a\\n' > plan.yaml`], { cwd: d });
      return d;
    };
    const dirs = [mk(), mk()];
    const rs = await Promise.all(dirs.map((d) => bernstein(["run", "plan.yaml", "--as-json"], { cwd: d })));
    for (const r of rs) {
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, outcome: "completed" });
    }
    expect(JSON.parse(rs[0]!.stdout).server_url).not.toBe(JSON.parse(rs[1]!.stdout).server_url);
  });
});

describe("claims are leases (compiled server)", () => {
  test("only the claim's holder completes it; a lease not heartbeated expires back to open (journaled) and its claim_id then answers lease_expired", async () => {
    const dir = tempDir();
    const s = await startServer(dir, ["--lease-s", "1"]);
    try {
      await s.call("POST", "/tasks", { id: "L1", title: "leased" });
      const c = (await s.call("POST", "/tasks/claim", { agent_id: "owner" })).json;
      expect(c).toMatchObject({ task: { id: "L1", status: "claimed" }, lease_s: 1, claims: [{ task_id: "L1", claim_id: c.claim_id }] });
      // another token holder: no claim id, a wrong one
      const noClaim = await s.call("POST", "/tasks/L1/complete", { result_summary: "stolen" });
      expect(noClaim.status).toBe(409);
      expect(noClaim.json).toMatchObject({ error: "claim_mismatch", task_id: "L1" });
      expect((await s.call("POST", "/tasks/L1/fail", { claim_id: "f".repeat(32) })).json.error).toBe("claim_mismatch");
      expect((await s.call("POST", "/tasks/L1/status", { status: "open" })).json.error).toBe("claim_mismatch");
      // heartbeats keep it alive well past the lease
      for (let i = 0; i < 4; i++) {
        await Bun.sleep(400);
        const hb = await s.call("POST", "/tasks/L1/heartbeat", { claim_id: c.claim_id });
        expect(hb.status).toBe(200);
        expect(hb.json.lease_expires_at).toBeGreaterThan(Date.now() / 1000);
      }
      expect((await s.call("GET", "/tasks/L1")).json.status).toBe("claimed");
      // the holder goes silent: the sweeper re-queues it without any request
      await Bun.sleep(1600);
      const events = readFileSync(join(s.sddDir, "runtime", "task_events.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
      expect(events).toEqual([expect.objectContaining({ event: "task_requeued", task_id: "L1", agent_id: "owner", claim_id: c.claim_id, reason: "lease_expired" })]);
      expect((await s.call("GET", "/tasks/L1")).json).toMatchObject({ status: "open", assigned_agent: null });
      const late = await s.call("POST", "/tasks/L1/complete", { claim_id: c.claim_id, result_summary: "too late" });
      expect(late.status).toBe(409);
      expect(late.json).toMatchObject({ error: "lease_expired", claim_id: c.claim_id });
      expect((await s.call("POST", "/tasks/L1/heartbeat", { claim_id: c.claim_id })).json.error).toBe("lease_expired");
      // a new claim gets a new id; the holder completes with it
      const c2 = (await s.call("POST", "/tasks/claim", { agent_id: "second" })).json;
      expect(c2.claim_id).not.toBe(c.claim_id);
      expect((await s.call("POST", "/tasks/L1/complete", { claim_id: c.claim_id })).json.error).toBe("lease_expired");
      expect((await s.call("POST", "/tasks/L1/complete", { claim_id: c2.claim_id, result_summary: "done" })).json).toMatchObject({ status: "done", result_summary: "done", attempts: 2 });
      // cancelling is an operator's right over a claimed task (journaled)
      await s.call("POST", "/tasks", { id: "L2", title: "to cancel" });
      await s.call("POST", "/tasks/claim", { agent_id: "third" });
      expect((await s.call("POST", "/tasks/L2/status", { status: "cancelled", reason: "not needed" })).json.status).toBe("cancelled");
      const last = readFileSync(join(s.sddDir, "runtime", "task_events.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l)).at(-1);
      expect(last).toMatchObject({ event: "task_cancelled", task_id: "L2", reason: "not needed" });
      expect(statSync(join(s.sddDir, "runtime", "task_events.jsonl")).mode & 0o777).toBe(0o600);
    } finally {
      await s.stop();
    }
  }, 30_000);

  test("bad --lease-s is a usage error", async () => {
    const r = await bernstein(["server", "--lease-s", "0", "--port", "0"], { cwd: tempDir() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--lease-s");
  });
});
