/**
 * `bernstein server --store postgres://…` (compiled binary) against a real
 * PostgreSQL: three servers on one database serve one backlog under load
 * (0 double claims, 0 lost updates, 0 5xx), a database restart in the middle
 * of the load loses no request, idle claimers are woken by NOTIFY, and bad
 * or unreachable stores are refused with their own codes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runLoad } from "../../../src/fuzz/load.ts";
import { bernsteinJson } from "../../helpers/cli.ts";
import { postgresBinDir, startPostgres, type PgCluster } from "../../helpers/postgres.ts";
import { available } from "../../helpers/require-service.ts";
import { startServer, type ServerProc } from "./serverProc.ts";

const hasPg = available("postgres", postgresBinDir() !== null, "no PostgreSQL server binaries (initdb) on this machine");
const TOKEN = "pg-e2e-token";

describe.skipIf(!hasPg)("task servers sharing PostgreSQL (compiled binary)", () => {
  let pg: PgCluster;
  let root: string;
  const servers: ServerProc[] = [];
  let db = 0;

  /** `n` servers on one fresh database, each with its own state directory. */
  async function servePool(n: number, extra: string[] = []): Promise<ServerProc[]> {
    const name = `e2e_${db++}`;
    await pg.createDatabase(name);
    const started: ServerProc[] = [];
    for (let i = 0; i < n; i++) {
      const cwd = join(root, `${name}-s${i}`);
      mkdirSync(cwd);
      const s = await startServer(cwd, ["--store", pg.url(name), ...extra], { BERNSTEIN_AUTH_TOKEN: TOKEN });
      servers.push(s);
      started.push(s);
    }
    return started;
  }

  beforeAll(() => {
    pg = startPostgres();
    root = mkdtempSync(join(tmpdir(), "bern-pg-e2e-"));
  }, 60_000);
  afterAll(async () => {
    for (const s of servers) await s.stop();
    pg?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  test("3 servers, 50 clients x 200 requests spread across them: 0 double claims, 0 lost updates, 0 5xx", async () => {
    const pool = await servePool(3);
    const report = await runLoad({ url: pool.map((s) => s.url), token: TOKEN, clients: 50, requests: 200, seed: 23 });
    console.log(`postgres, 3 servers: ${report.total_requests} requests in ${report.elapsed_s} s (${report.requests_per_s}/s), claim p50 ${report.latency.claim.p50_ms} ms p99 ${report.latency.claim.p99_ms} ms`);
    expect(report.problems).toEqual([]);
    expect([report.server_errors, report.connection_errors, report.double_claims, report.lost_updates, report.stolen_completions]).toEqual([0, 0, 0, 0, 0]);
    expect(report.claimed).toBeGreaterThan(500);
    expect(report.ok).toBe(true);
    // Every server sees the one backlog.
    const totals = await Promise.all(pool.map(async (s) => (await s.call("GET", "/status")).json.total));
    expect(new Set(totals).size).toBe(1);
    expect(totals[0]).toBe(report.created);
  }, 120_000);

  test("pg_ctl restart in the middle of the load: the servers retry, no request is lost", async () => {
    const pool = await servePool(2);
    let restarted = false;
    let before = 0;
    let during = 0;
    const statusOf = async () => (await pool[0]!.call("GET", "/status")).json.total as number;
    const report = await runLoad({
      url: pool.map((s) => s.url),
      token: TOKEN,
      clients: 20,
      requests: 100,
      seed: 57,
      // The clients go on sending while the database goes down and comes back.
      halfway: async () => {
        before = await statusOf();
        await pg.restart();
        restarted = true;
        during = await statusOf();
      },
    });
    expect(restarted).toBe(true);
    // Tasks were created across the restart (the load did not stand still).
    expect(during).toBeGreaterThan(before);
    expect(report.problems).toEqual([]);
    expect([report.server_errors, report.connection_errors, report.double_claims, report.lost_updates]).toEqual([0, 0, 0, 0]);
  }, 120_000);

  test("an idle claimer waits (wait_s) and is woken by work created on another server", async () => {
    const [a, b] = await servePool(2);
    const t0 = performance.now();
    const waiting = a!.call("POST", "/tasks/claim", { agent_id: "idle", wait_s: 10 });
    await Bun.sleep(300);
    const created = await b!.call("POST", "/tasks", { title: "arrives later" });
    expect(created.status).toBe(201);
    const got = await waiting;
    expect(got.status).toBe(200);
    expect(got.json.task.id).toBe(created.json.id);
    expect(performance.now() - t0).toBeLessThan(5000);
    // Nothing comes: the claim answers empty after wait_s.
    const empty = await a!.call("POST", "/tasks/claim", { agent_id: "idle", wait_s: 0.3 });
    expect([empty.status, empty.json.task]).toEqual([200, null]);
  }, 30_000);

  test("a store that is no postgres URL is a usage error; an unreachable one is store_unreachable (exit 3)", async () => {
    const cwd = join(root, "bad");
    mkdirSync(cwd);
    const bad = await bernsteinJson(["server", "--store", "mysql://x", "--port", "0"], { cwd });
    expect([bad.code, bad.json.error]).toEqual([2, "invalid_store"]);
    const down = await bernsteinJson(["server", "--store", `postgres://nobody:secret@127.0.0.1:1/db`, "--port", "0"], { cwd, env: { BERNSTEIN_AUTH_TOKEN: TOKEN } });
    expect([down.code, down.json.ok, down.json.error]).toEqual([3, false, "store_unreachable"]);
    expect(down.json.detail).not.toContain("secret");
    expect(down.json.store).toBe("postgres://nobody:***@127.0.0.1:1/db");
  }, 60_000);
});
