import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { verifyJournal } from "../../../src/journal/verify.ts";
import { cleanupProjects, journalEvents, makeProject, readLedger, runIds, runToEnd, spawnRun, storedTasks, type Project } from "./fixture.ts";

afterAll(cleanupProjects);

const TASKS = [{ id: "A" }, { id: "B" }, { id: "C", depends_on: ["A"] }, { id: "D", depends_on: ["B", "C"] }];
const TRIALS = 20;

/** Deterministic pseudo-random kill delays spread over the whole run. */
function delays(n: number): number[] {
  let x = 0x9e3779b9;
  return Array.from({ length: n }, () => {
    x = (x * 1103515245 + 12345) >>> 0;
    return x % 500;
  });
}

async function trial(delayMs: number): Promise<{ p: Project; runs: number }> {
  const p = makeProject({ tasks: TASKS, agentEnv: { AGENT_SLEEP: "0.08" } });
  const proc = spawnRun(p, ["--max-agents", "2"]);
  await Bun.sleep(delayMs);
  proc.kill("SIGKILL");
  await proc.exited;
  // Resume until the run completes (normally one more run).
  let runs = 1;
  for (;;) {
    const r = await runToEnd(p, ["--max-agents", "2"]);
    runs++;
    if (r.code !== 0) throw new Error(`resumed run failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
    if (storedTasks(p).every((t) => t.status === "done")) break;
    if (runs > 4) throw new Error("not finished after 3 resumed runs");
  }
  return { p, runs };
}

describe("kill -9 at random moments, then run again (compiled binary)", () => {
  test(`${TRIALS} trials: every task reaches done exactly once and never runs after it is done`, async () => {
    const ds = delays(TRIALS);
    const results: { p: Project; runs: number; delay: number }[] = [];
    // Two trials at a time (each in its own project directory).
    for (let i = 0; i < ds.length; i += 2) {
      const batch = await Promise.all(ds.slice(i, i + 2).map(async (d) => ({ ...(await trial(d)), delay: d })));
      results.push(...batch);
    }
    let resumed = 0;
    for (const { p } of results) {
      const tasks = storedTasks(p);
      expect(tasks.map((t) => t.id).sort()).toEqual(["A", "B", "C", "D"]);
      const ledger = readLedger(p);
      for (const t of tasks) {
        expect(t.status).toBe("done");
        // no agent started on a task after the task reached done
        const doneNs = BigInt(Math.round(t.completed_at! * 1e6)) * 1000n;
        for (const l of ledger.filter((x) => x.kind === "start" && x.task === t.id)) expect(l.ns < doneNs).toBe(true);
      }
      // reaching done happens once: exactly one task_completed per task over all runs
      const completions = runIds(p).flatMap((id) => journalEvents(p, id).filter((r) => r.get("event") === "task_completed").map((r) => r.get("task_id")));
      const perTask = Object.fromEntries(["A", "B", "C", "D"].map((id) => [id, completions.filter((x) => x === id).length]));
      // A kill between the store commit and the journal append can lose the
      // journal row of a completion, never duplicate it.
      for (const n of Object.values(perTask)) expect(n).toBeLessThanOrEqual(1);
      const ids = runIds(p);
      if (ids.length > 1 && journalEvents(p, ids.at(-1)!).some((r) => r.get("event") === "session_resume" && r.get("decision") === "resume")) resumed++;
      // the chain of every journal (killed ones included) is consistent
      for (const id of ids) {
        const v = await verifyJournal(join(p.sddDir, "runs", id, "journal.jsonl"));
        expect(v.chain_consistent).toBe(true);
      }
      // the final run is sealed and complete
      expect(existsSync(join(p.sddDir, "runs", ids.at(-1)!, "seal.json"))).toBe(true);
      expect(readdirSync(join(p.sddDir, "runtime")).filter((n) => n.includes(".tmp."))).toEqual([]);
    }
    // most kills land after planning, so most trials really resumed
    expect(resumed).toBeGreaterThanOrEqual(TRIALS / 4);
  }, 120_000);
});
