import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { join } from "node:path";
import { verifyJournal } from "../../../src/journal/verify.ts";
import { cleanupProjects, journalEvents, makeProject, readLedger, runIds, runToEnd, spawnRun, storedTasks, waitFor, type Project } from "./fixture.ts";

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

/** Live (non-zombie) processes whose environment says they are agents of this state dir, with their run ids. */
export function agentProcesses(sddDir: string): { pid: number; run: string }[] {
  const marker = `BERNSTEIN_SDD_DIR=${resolve(sddDir)}\0`;
  const out: { pid: number; run: string }[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const env = readFileSync(`/proc/${name}/environ`, "latin1");
      if (!env.includes(marker)) continue;
      const run = /(?:^|\0)BERNSTEIN_RUN_ID=([^\0]*)/.exec(env)?.[1] ?? "";
      out.push({ pid: Number(name), run });
    } catch {
      /* gone */
    }
  }
  return out;
}

/** Orphans of the killed runs: wait up to `graceMs` for the watchdog to end them. */
async function orphansOf(p: Project, runs: string[], graceMs: number): Promise<number> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const n = agentProcesses(p.sddDir).filter((a) => runs.includes(a.run)).length;
    if (n === 0 || Date.now() > deadline) return n;
    await Bun.sleep(20);
  }
}

let orphansAtResume = 0;

/**
 * One trial: kill the run `delayMs` after it starts or, when `afterSpawn`,
 * after it journaled its first agent spawn (planning done), so the share
 * of kills that land mid-run does not depend on how loaded the machine is.
 */
async function trial(delayMs: number, afterSpawn: boolean): Promise<{ p: Project; runs: number }> {
  const p = makeProject({ tasks: TASKS, agentEnv: { AGENT_SLEEP: "0.08" } });
  const proc = spawnRun(p, ["--max-agents", "2"]);
  if (afterSpawn) {
    await waitFor(
      () => proc.exitCode !== null || runIds(p).some((id) => journalEvents(p, id).some((r) => r.get("event") === "agent_spawned")),
      60_000,
      "the run's first agent_spawned",
    );
  }
  await Bun.sleep(delayMs);
  proc.kill("SIGKILL");
  await proc.exited;
  // The watchdog ends the killed run's agents; by the time a resume starts none may be left.
  orphansAtResume += await orphansOf(p, runIds(p), 1500);
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
      // three kills in four land after planning (a resume), the rest at any moment from the start
      const batch = await Promise.all(ds.slice(i, i + 2).map(async (d, k) => ({ ...(await trial((i + k) % 4 === 0 ? d : d % 300, (i + k) % 4 !== 0)), delay: d })));
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
    // kills after planning leave work behind, so those trials really resumed
    expect(resumed).toBeGreaterThanOrEqual(TRIALS / 4);
    expect(orphansAtResume).toBe(0);
  }, 120_000);
});

/** Make the project's agents quick again (agent.env wins over the environment). */
function quick(p: Project): Project {
  const cfg = join(p.dir, "bernstein.yaml");
  writeFileSync(cfg, readFileSync(cfg, "utf8").replace('AGENT_SLEEP: "30"', 'AGENT_SLEEP: "0.05"'));
  return p;
}

/**
 * Agents of `run` listed in agents.json. An agent is recorded just after it
 * is spawned, so under load its processes can be seen before it is listed;
 * only listed agents can be killed by the watchdog or reaped by the next run.
 */
function recordedAgents(p: Project, run: string): number {
  try {
    return (JSON.parse(readFileSync(join(p.sddDir, "runtime", "agents.json"), "utf8")).agents as { run_id: string }[]).filter((a) => a.run_id === run).length;
  } catch {
    return 0; // not written yet, or being replaced
  }
}

describe("agents never outlive a killed run (compiled binary)", () => {
  const SLOW = [{ id: "S1" }, { id: "S2" }];

  test("kill -9 of the run: its watchdog kills the agents' process groups within a second", async () => {
    const p = makeProject({ tasks: SLOW, agentEnv: { AGENT_SLEEP: "30" } });
    const proc = spawnRun(p, ["--max-agents", "2"]);
    await waitFor(() => agentProcesses(p.sddDir).length >= 4, 20000, "two agents and their sleeps");
    const killedRun = runIds(p)[0]!;
    await waitFor(() => recordedAgents(p, killedRun) >= 2, 20000, "both agents recorded in agents.json");
    proc.kill("SIGKILL");
    await proc.exited;
    expect(await orphansOf(p, [killedRun], 1500)).toBe(0);
    // and the resume runs both tasks once more, to the end
    const r = await runToEnd(quick(p), ["--max-agents", "2", "--as-json"]);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, tasks: { done: 2 } });
  }, 60_000);

  test("watchdog killed too: the next run reaps the agents agents.json lists (pid + start time) before re-queueing, never a reused pid", async () => {
    const p = makeProject({ tasks: SLOW, agentEnv: { AGENT_SLEEP: "30" } });
    const proc = spawnRun(p, ["--max-agents", "2"]);
    await waitFor(() => agentProcesses(p.sddDir).length >= 4, 20000, "two agents");
    const killedRun = runIds(p)[0]!;
    await waitFor(() => recordedAgents(p, killedRun) >= 2, 20000, "both agents recorded in agents.json");
    // the watchdog: our binary with the internal watchdog variable naming this state dir
    const findWatchdog = () =>
      readdirSync("/proc")
        .filter((n) => /^\d+$/.test(n))
        .find((n) => {
          try {
            return readFileSync(`/proc/${n}/environ`, "latin1").includes(`BERNSTEIN_INTERNAL_WATCHDOG={"agents":"${join(p.sddDir, "runtime", "agents.json")}`);
          } catch {
            return false;
          }
        });
    const watchdog = await waitFor(findWatchdog, 10000, "the run's watchdog");
    process.kill(Number(watchdog), "SIGKILL");
    proc.kill("SIGKILL");
    await proc.exited;
    await Bun.sleep(300);
    expect(agentProcesses(p.sddDir).filter((a) => a.run === killedRun).length).toBeGreaterThanOrEqual(2);
    // an unrelated process now "has" a recorded pid: a stale entry with a wrong start time must spare it
    const bystander = Bun.spawn(["sleep", "30"], { stdout: "ignore" });
    const file = join(p.sddDir, "runtime", "agents.json");
    const doc = JSON.parse(readFileSync(file, "utf8"));
    doc.agents.push({ agent_id: "reused-pid", pid: bystander.pid, task_id: "S1", run_id: killedRun, started_at: 0, proc_start: 1 });
    writeFileSync(file, JSON.stringify(doc));
    try {
      const r = await runToEnd(quick(p), ["--max-agents", "2", "--as-json"]);
      expect({ doc: JSON.parse(r.stdout), stderr: r.stderr.includes("stopped 2 agent(s) left by a previous run") || r.stderr }).toMatchObject({ doc: { ok: true, tasks: { done: 2 } }, stderr: true });
      expect(agentProcesses(p.sddDir).filter((a) => a.run === killedRun)).toEqual([]);
      const second = journalEvents(p, runIds(p)[1]!);
      const reaped = second.find((x) => x.get("event") === "agents_reaped")!;
      expect(reaped.get("agent_ids")).toHaveLength(2);
      expect(reaped.get("agent_ids")).not.toContain("reused-pid");
      const names = second.map((x) => x.get("event"));
      expect(names.indexOf("agents_reaped")).toBeLessThan(names.indexOf("task_requeued"));
      expect(bystander.exitCode).toBeNull(); // still alive
    } finally {
      bystander.kill("SIGKILL");
    }
  }, 60_000);
});
