/**
 * `bernstein run --store postgres://…` (compiled binary) against a real
 * PostgreSQL: the demo plan completes with its tasks in the database (no
 * tasks.db), and stop/resume works as with SQLite: Ctrl-C saves the session,
 * the next run resumes without re-planning or re-running done work.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../../helpers/cli.ts";
import { postgresBinDir, startPostgres, type PgCluster } from "../../helpers/postgres.ts";
import { available } from "../../helpers/require-service.ts";
import { cleanupProjects, eventNames, journalEvents, makeProject, readLedger, readSession, runIds, runToEnd, spawnRun, waitFor } from "./fixture.ts";

const hasPg = available("postgres", postgresBinDir() !== null, "no PostgreSQL server binaries (initdb) on this machine");

describe.skipIf(!hasPg)("bernstein run --store postgres:// (compiled binary)", () => {
  let pg: PgCluster;
  let n = 0;
  const clients: SQL[] = [];
  beforeAll(() => {
    pg = startPostgres();
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) await c.close();
    cleanupProjects();
    pg?.stop();
  });

  async function database(): Promise<{ url: string; tasks: () => Promise<{ id: string; status: string }[]> }> {
    const name = `run_${n++}`;
    await pg.createDatabase(name);
    const sql = new SQL(pg.url(name));
    clients.push(sql);
    return { url: pg.url(name), tasks: async () => [...(await sql`SELECT id, status FROM tasks ORDER BY seq`)] as { id: string; status: string }[] };
  }

  test("the demo plan completes; its tasks live in PostgreSQL, not in tasks.db", async () => {
    const db = await database();
    const p = makeProject();
    for (const f of ["plan.yaml", "bernstein.yaml", "agent.ts"]) await Bun.write(join(p.dir, f), Bun.file(join(ROOT, "examples", "demo", f)));
    const r = await runToEnd(p, ["--as-json", "--store", db.url]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, outcome: "completed", tasks: { total: 5, done: 5, failed: 0, open: 0 }, sealed: true });
    expect((await db.tasks()).map((t) => t.status)).toEqual(["done", "done", "done", "done", "done"]);
    expect(existsSync(join(p.sddDir, "runtime", "tasks.db"))).toBe(false);
    // BERNSTEIN_STORE works as --store: a second run finds the drained backlog there.
    const again = await runToEnd(p, ["--as-json"], { BERNSTEIN_STORE: db.url });
    expect(JSON.parse(again.stdout)).toMatchObject({ outcome: "drained", done_previously: 5, agents_spawned: 0 });
  }, 60_000);

  test("Ctrl-C mid-run saves the session; the next run resumes from the database without re-running done work", async () => {
    const db = await database();
    const p = makeProject({ tasks: [{ id: "T1" }, { id: "T2", depends_on: ["T1"] }, { id: "T3", depends_on: ["T2"] }], agentEnv: { AGENT_SLEEP: "0.3" } });
    const proc = spawnRun(p, ["--max-agents", "1", "--store", db.url]);
    await waitFor(() => readLedger(p).some((l) => l.kind === "start" && l.task === "T2"), 20000, "T2 to start");
    proc.kill("SIGINT");
    expect(await proc.exited).toBe(130);
    const s = readSession(p);
    expect(s.completed_task_ids).toEqual(["T1"]);
    expect(journalEvents(p, runIds(p)[0]!).at(-1)!.get("outcome")).toBe("interrupted");

    const r = await runToEnd(p, ["--max-agents", "1", "--store", db.url]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("resumed: 1 done previously");
    const second = journalEvents(p, runIds(p)[1]!);
    expect(eventNames(second)).not.toContain("plan_loaded");
    expect(second.filter((x) => x.get("event") === "task_completed").map((x) => x.get("task_id"))).toEqual(["T2", "T3"]);
    expect(readLedger(p).filter((l) => l.kind === "start" && l.task === "T1")).toHaveLength(1);
    expect((await db.tasks()).map((t) => [t.id, t.status])).toEqual([
      ["T1", "done"],
      ["T2", "done"],
      ["T3", "done"],
    ]);
  }, 60_000);
});
