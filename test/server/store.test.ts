import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TRANSITIONS, TASK_STATUSES } from "../../src/server/model.ts";
import { TaskStore } from "../../src/server/store.ts";
import { IllegalTransitionError, InvalidTaskRequestError, LeaseExpiredError } from "../../src/server/errors.ts";
import { findServer } from "../../src/server/client.ts";
import { writeServerInfo } from "../../src/server/info.ts";
import { ROOT } from "../helpers/cli.ts";

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "bern-store-"));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("TaskStore", () => {
  test("transition table is spec §11 and every illegal move is refused", () => {
    expect(TRANSITIONS.open).toEqual(["claimed", "waiting_for_subtasks", "cancelled", "failed"]);
    expect(TRANSITIONS.done).toEqual(["closed", "failed"]);
    expect(TRANSITIONS.closed).toEqual([]);
    const store = new TaskStore(":memory:");
    // Drive a task into every status via legal paths, then try every target.
    const paths: Record<string, string[]> = {
      open: [],
      claimed: ["claimed"],
      in_progress: ["claimed", "in_progress"],
      done: ["claimed", "done"],
      closed: ["claimed", "done", "closed"],
      failed: ["failed"],
      blocked: ["claimed", "blocked"],
      waiting_for_subtasks: ["waiting_for_subtasks"],
      cancelled: ["cancelled"],
      orphaned: ["claimed", "in_progress", "orphaned"],
    };
    let n = 0;
    for (const [from, path] of Object.entries(paths)) {
      for (const to of TASK_STATUSES) {
        const id = `t${n++}`;
        store.create({ id, title: id });
        for (const step of path) store.transition(id, step as any);
        expect(store.require(id).status).toBe(from as any);
        const legal = (TRANSITIONS as any)[from].includes(to);
        if (legal) expect(store.transition(id, to).status).toBe(to);
        else expect(() => store.transition(id, to)).toThrow(IllegalTransitionError);
      }
    }
    store.close();
  });

  test("createMany refuses cycles, self-dependencies and unknown dependencies atomically", () => {
    const store = new TaskStore(":memory:");
    expect(() => store.createMany([{ id: "a", title: "a", depends_on: ["b"] }, { id: "b", title: "b", depends_on: ["a"] }])).toThrow(/cycle/);
    expect(() => store.create({ id: "s", title: "s", depends_on: ["s"] })).toThrow(/itself/);
    expect(() => store.createMany([{ id: "x", title: "x" }, { id: "y", title: "y", depends_on: ["zz"] }])).toThrow(InvalidTaskRequestError);
    expect(store.list().total).toBe(0);
    const made = store.createMany([{ id: "b", title: "b", depends_on: ["a"] }, { id: "a", title: "a" }]);
    expect(made.map((t) => t.id)).toEqual(["b", "a"]);
    expect(store.ready().map((t) => t.id)).toEqual(["a"]);
    store.close();
  });

  test("claim order: priority, then creation order; dependencies gate readiness", () => {
    const store = new TaskStore(":memory:");
    store.createMany([
      { id: "low", title: "low", priority: 3 },
      { id: "hi", title: "hi", priority: 1 },
      { id: "mid", title: "mid" },
      { id: "after", title: "after", priority: 0, depends_on: ["mid"] },
    ]);
    expect(store.claim("x", 10).map((t) => t.id)).toEqual(["hi", "mid", "low"]);
    store.complete("mid", { result_summary: "r", cost_usd: 0.5 });
    expect(store.claim("y", 10).map((t) => t.id)).toEqual(["after"]);
    expect(store.totalCost()).toBe(0.5);
    store.close();
  });

  test("claims from 4 processes on the same db file never overlap (BEGIN IMMEDIATE)", async () => {
    const dir = tempDir();
    const db = join(dir, "tasks.db");
    const store = new TaskStore(db);
    store.createMany(Array.from({ length: 200 }, (_, i) => ({ id: `p${i}`, title: `p${i}` })));
    store.close();
    const script = `
      import { TaskStore } from ${JSON.stringify(join(ROOT, "src/server/store.ts"))};
      const [db, who] = process.argv.slice(-2);
      const s = new TaskStore(db);
      const got = [];
      for (;;) { const t = s.claim(who, 1); if (!t.length) break; got.push(t[0].id); }
      console.log(JSON.stringify(got));`;
    const file = join(dir, "claimer.ts");
    await Bun.write(file, script);
    const procs = [0, 1, 2, 3].map((i) => Bun.spawn([process.execPath, file, db, `w${i}`], { stdout: "pipe", stderr: "inherit" }));
    const outs = await Promise.all(procs.map(async (p) => JSON.parse(await new Response(p.stdout).text()) as string[]));
    const all = outs.flat();
    expect(all).toHaveLength(200);
    expect(new Set(all).size).toBe(200);
  });
});

describe("findServer", () => {
  test("BERNSTEIN_SERVER_URL wins; server.json is used when its pid is alive", () => {
    const dir = tempDir();
    expect(findServer(dir, {})).toBeNull();
    writeServerInfo(dir, { url: "http://127.0.0.1:9", host: "127.0.0.1", port: 9, pid: process.pid, token: "t1", started_at: 1 });
    expect(findServer(dir, {})).toMatchObject({ url: "http://127.0.0.1:9", token: "t1", source: "server.json" });
    expect(findServer(dir, { BERNSTEIN_SERVER_URL: "http://127.0.0.1:9/" })).toMatchObject({ url: "http://127.0.0.1:9", token: "t1", source: "env" });
    expect(findServer(dir, { BERNSTEIN_SERVER_URL: "http://other:1", BERNSTEIN_AUTH_TOKEN: "e" })).toMatchObject({ url: "http://other:1", token: "e" });
    expect(findServer(dir, { BERNSTEIN_SERVER_URL: "http://other:1" })!.token).toBeNull();
    writeServerInfo(dir, { url: "http://127.0.0.1:9", host: "127.0.0.1", port: 9, pid: 2 ** 22 + 12345, token: "t1", started_at: 1 });
    expect(findServer(dir, {})).toBeNull();
  });
});

describe("claims and leases", () => {
  test("in-process claims never expire; a new server releases them (holder_gone); leased ones expire", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bern-lease-"));
    try {
      const store = new TaskStore(join(dir, "tasks.db"));
      store.createMany([{ id: "P", title: "p" }, { id: "H", title: "h" }]);
      const [p] = store.claimLeased("orch", 1, null);
      const [h] = store.claimLeased("http", 1, 0.05);
      expect(p!.lease.lease_expires_at).toBeNull();
      await Bun.sleep(80);
      expect(store.expireLeases().map((e) => [e.task_id, e.reason])).toEqual([["H", "lease_expired"]]);
      expect(store.get("P")!.status).toBe("claimed");
      expect(() => store.complete("H", {}, { enforce: true, claimId: h!.lease.claim_id })).toThrow(LeaseExpiredError);
      expect(store.releaseProcessClaims().map((e) => [e.task_id, e.reason])).toEqual([["P", "holder_gone"]]);
      expect(store.get("P")!.status).toBe("open");
      store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
