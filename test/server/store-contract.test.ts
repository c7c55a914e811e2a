/**
 * One suite, two engines: the SQLite task store and the PostgreSQL one must
 * behave the same for everything the task server asks of them (creation and
 * dependencies, claim order, leases and their expiry, claim checks, the
 * lifecycle, waiting for work), and neither may hand one task to two
 * claimers under concurrency.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PgTaskStore } from "../../src/server/pg-store.ts";
import { TaskStore } from "../../src/server/store.ts";
import type { TaskBackend } from "../../src/server/store-api.ts";
import { postgresBinDir, startPostgres, type PgCluster } from "../helpers/postgres.ts";
import { available } from "../helpers/require-service.ts";

interface Engine {
  name: string;
  /** A fresh, empty store, and a second handle on the same data (another "process"). */
  open(): Promise<{ store: TaskBackend; other: () => Promise<TaskBackend> }>;
}

const dirs: string[] = [];
const opened: TaskBackend[] = [];
let pg: PgCluster | null = null;
let dbSeq = 0;

const sqlite: Engine = {
  name: "sqlite",
  async open() {
    const dir = mkdtempSync(join(tmpdir(), "bern-store-"));
    dirs.push(dir);
    const path = join(dir, "tasks.db");
    const store = new TaskStore(path);
    opened.push(store);
    return {
      store,
      other: async () => {
        const s = new TaskStore(path);
        opened.push(s);
        return s;
      },
    };
  },
};

const postgres: Engine = {
  name: "postgres",
  async open() {
    const db = `contract_${process.pid}_${dbSeq++}`;
    await pg!.createDatabase(db);
    const store = await PgTaskStore.open(pg!.url(db));
    opened.push(store);
    return {
      store,
      other: async () => {
        const s = await PgTaskStore.open(pg!.url(db));
        opened.push(s);
        return s;
      },
    };
  },
};

const hasPg = available("postgres", postgresBinDir() !== null, "no PostgreSQL server binaries (initdb) on this machine");

beforeAll(() => {
  if (hasPg) pg = startPostgres();
}, 60_000);
afterAll(async () => {
  for (const s of opened.splice(0)) await s.close();
  pg?.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The error code a call fails with (the SQLite store throws synchronously, the PostgreSQL one rejects). */
async function errorCode(call: () => unknown): Promise<string> {
  try {
    await call();
    return "none";
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
}

for (const engine of hasPg ? [sqlite, postgres] : [sqlite]) {
  describe(`task store contract: ${engine.name}`, () => {
    test("creation: dependencies inside the batch or existing; unknown, self, cyclic and duplicate refused", async () => {
      const { store } = await engine.open();
      const a = await store.create({ id: "A", title: "a" });
      expect(a).toMatchObject({ id: "A", status: "open", depends_on: [], attempts: 0, cost_usd: 0 });
      expect(await errorCode(() => store.create({ id: "A", title: "again" }))).toBe("task_exists");
      expect(await errorCode(() => store.create({ id: "B", title: "b", depends_on: ["nope"] }))).toBe("invalid_request");
      expect(await errorCode(() => store.create({ id: "S", title: "s", depends_on: ["S"] }))).toBe("invalid_request");
      expect((await store.list()).total).toBe(1);
      const b = await store.create({ id: "B", title: "b", depends_on: ["A"], priority: 1 });
      expect(b.depends_on).toEqual(["A"]);
      expect((await store.list({ status: "open" })).total).toBe(2);
      expect((await store.list({ limit: 1, offset: 1 })).tasks.map((t) => t.id)).toEqual(["B"]);
      expect((await store.counts()).open).toBe(2);
    });

    test("claims: priority order, dependencies respected, leases; completion needs the claim id", async () => {
      const { store } = await engine.open();
      await store.create({ id: "low", title: "l", priority: 3 });
      await store.create({ id: "high", title: "h", priority: 0 });
      await store.create({ id: "after", title: "a", priority: 0, depends_on: ["high"] });
      const got = await store.claimLeased("ag", 5, 60);
      expect(got.map((g) => g.task.id)).toEqual(["high", "low"]);
      const high = got[0]!;
      expect(high.task).toMatchObject({ status: "claimed", assigned_agent: "ag", attempts: 1 });
      expect(high.lease.claim_id).toMatch(/^[0-9a-f]{32}$/);
      expect(high.lease.lease_expires_at! - Date.now() / 1000).toBeGreaterThan(50);
      expect(await store.claimLeased("ag", 5, 60)).toEqual([]);
      expect(await errorCode(() => store.complete("high", {}, { enforce: true, claimId: null }))).toBe("claim_mismatch");
      expect(await errorCode(() => store.complete("high", {}, { enforce: true, claimId: "f".repeat(32) }))).toBe("claim_mismatch");
      const done = await store.complete("high", { result_summary: "ok", cost_usd: 0.25 }, { enforce: true, claimId: high.lease.claim_id });
      expect(done).toMatchObject({ status: "done", result_summary: "ok", cost_usd: 0.25 });
      expect(done.completed_at).not.toBeNull();
      // The claim ended with the task: its id no longer moves it.
      expect(await errorCode(() => store.transition("high", "open", {}, { enforce: true, claimId: high.lease.claim_id }))).toBe("claim_mismatch");
      expect((await store.claimLeased("ag2", 1, 60)).map((g) => g.task.id)).toEqual(["after"]);
      await store.fail("low", { reason: "no", cost_usd: 0.5 }, { enforce: true, claimId: got[1]!.lease.claim_id });
      expect(await store.totalCost()).toBeCloseTo(0.75, 10);
      expect(await errorCode(() => store.require("missing"))).toBe("task_not_found");
    });

    test("a lease runs out: the task is re-queued, the old claim id answers lease_expired; a heartbeat keeps it", async () => {
      const { store } = await engine.open();
      await store.create({ id: "T", title: "t" });
      await store.create({ id: "K", title: "k" });
      const [t] = await store.claimLeased("ag", 1, 0.2);
      const [k] = await store.claimLeased("ag", 1, 0.4);
      await Bun.sleep(250);
      const hb = await store.heartbeat("K", k!.lease.claim_id);
      expect(hb.lease_expires_at! - Date.now() / 1000).toBeGreaterThan(0.3);
      const expired = await store.expireLeases();
      expect(expired.map((e) => [e.task_id, e.claim_id, e.reason])).toEqual([["T", t!.lease.claim_id, "lease_expired"]]);
      expect((await store.require("T")).status).toBe("open");
      expect(await errorCode(() => store.complete("T", {}, { enforce: true, claimId: t!.lease.claim_id }))).toBe("lease_expired");
      expect(await errorCode(() => store.heartbeat("T", t!.lease.claim_id))).toBe("lease_expired");
      const again = await store.claimLeased("other", 1, 60);
      expect(again.map((g) => [g.task.id, g.task.attempts])).toEqual([["T", 2]]);
      expect((await store.require("K")).status).toBe("claimed");
    });

    test("the lifecycle table: an illegal move names what is allowed", async () => {
      const { store } = await engine.open();
      await store.create({ id: "T", title: "t" });
      const err = await (async () => {
        try {
          await store.transition("T", "done");
        } catch (e) {
          return e as { code: string; facts: Record<string, unknown> };
        }
      })();
      expect(err?.code).toBe("illegal_transition");
      expect(err?.facts).toMatchObject({ from: "open", to: "done" });
      expect((await store.transition("T", "cancelled", { reason: "operator" })).status).toBe("cancelled");
    });

    test("waitForWork wakes a waiting claimer when work arrives (PostgreSQL: from another connection)", async () => {
      const { store, other } = await engine.open();
      // SQLite wakes waiters of its own process; PostgreSQL's NOTIFY reaches every server.
      const creator = engine.name === "postgres" ? await other() : store;
      const t0 = performance.now();
      const woken = store.waitForWork(4000);
      await Bun.sleep(50);
      await creator.create({ id: "W", title: "w" });
      await woken;
      expect(performance.now() - t0).toBeLessThan(3000);
      const idle = performance.now();
      await store.waitForWork(100);
      expect(performance.now() - idle).toBeGreaterThanOrEqual(90);
    });

    test("concurrent claimers on two handles never share a task", async () => {
      const { store, other } = await engine.open();
      const second = await other();
      for (let i = 0; i < 60; i++) await store.create({ id: `C${i}`, title: `c${i}` });
      const claimed: string[] = [];
      const claimer = async (s: TaskBackend, agent: string) => {
        for (;;) {
          const got = await s.claimLeased(agent, 1 + (claimed.length % 2), 60);
          if (got.length === 0) return;
          claimed.push(...got.map((g) => g.task.id));
        }
      };
      await Promise.all([claimer(store, "a"), claimer(second, "b"), claimer(store, "c"), claimer(second, "d")]);
      expect(claimed.length).toBe(60);
      expect(new Set(claimed).size).toBe(60);
    });
  });
}
