import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { bernstein, ROOT } from "../../helpers/cli.ts";
import { verifyJournal } from "../../../src/journal/verify.ts";
import { verifyStepJournal } from "../../../src/steps/verify.ts";
import { parse } from "../../../src/pyjson/parse.ts";
import { PyNum } from "../../../src/pyjson/types.ts";
import {
  cleanupProjects,
  eventNames,
  journalEvents,
  makeProject,
  readLedger,
  readSession,
  runIds,
  runToEnd,
  storedTasks,
} from "./fixture.ts";

afterAll(cleanupProjects);

/** Every run journal verifies, and every agent step journal verifies. */
async function verifyAllJournals(sddDir: string): Promise<void> {
  for (const run of readdirSync(join(sddDir, "runs"))) {
    const seal = JSON.parse(readFileSync(join(sddDir, "runs", run, "seal.json"), "utf8"));
    const r = await verifyJournal(join(sddDir, "runs", run, "journal.jsonl"), { seal });
    expect(r.chain_consistent).toBe(true);
    expect(r.coverage).toBe("complete");
    expect(r.identity).toBe("verified");
  }
  const stepsRoot = join(sddDir, "runtime", "journal");
  for (const agent of existsSync(stepsRoot) ? readdirSync(stepsRoot) : []) {
    const v = await verifyStepJournal(join(stepsRoot, agent, "000000.jsonl"));
    expect(v.errors).toEqual([]);
    expect(v.ok).toBe(true);
    expect(v.steps).toBe(1);
  }
}

describe("bernstein run (compiled binary)", () => {
  test("--help", async () => {
    const r = await bernstein(["run", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatchSnapshot();
  });

  test("the demo plan: every task done, journal/metadata/seal/steps/traces/session written and verifiable", async () => {
    const p = makeProject();
    for (const f of ["plan.yaml", "bernstein.yaml", "agent.ts"]) {
      await Bun.write(join(p.dir, f), Bun.file(join(ROOT, "examples", "demo", f)));
    }
    const r = await runToEnd(p, ["--as-json"]);
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({ ok: true, outcome: "completed", tasks: { total: 5, done: 5, failed: 0, open: 0 }, sealed: true });
    expect(summary.resume).toEqual({ decision: "fresh", reason: "no_session", message: "fresh: no saved session" });

    const tasks = storedTasks(p);
    expect(tasks.map((t) => t.status)).toEqual(["done", "done", "done", "done", "done"]);
    expect(tasks.find((t) => t.id === "write-tests")!.result_summary).toBe("Write tests for the handlers: wrote out/write-tests.md");

    const [runId] = runIds(p);
    expect(runId).toMatch(/^\d{8}-\d{6}$/);
    const rows = journalEvents(p, runId!);
    const names = eventNames(rows);
    expect(names[0]).toBe("run_started");
    expect(names.at(-1)).toBe("run_completed");
    expect(names.filter((n) => n === "task_completed")).toHaveLength(5);
    expect(names.filter((n) => n === "agent_spawned")).toHaveLength(5);
    expect(names.filter((n) => n === "agent_reaped")).toHaveLength(5);
    expect(names).toContain("tick_start");

    // payload keys in the order of the spec (§9)
    const keysOf = (row: Map<string, any>) => [...row.keys()].slice(7);
    expect(keysOf(rows[0]!)).toEqual(["run_id", "max_agents", "budget_usd", "git_sha", "git_branch", "config_hash"]);
    const spawned = rows.find((r) => r.get("event") === "agent_spawned")!;
    expect(keysOf(spawned).slice(0, 5)).toEqual(["agent_id", "role", "model", "provider", "task_ids"]);
    expect(keysOf(rows.find((r) => r.get("event") === "task_claimed")!)).toEqual(["task_id", "agent_id", "model"]);
    const completed = rows.filter((r) => r.get("event") === "task_completed");
    // upstream's keys first, then this project's: the attempt's own cost and where it came from
    expect(keysOf(completed[0]!)).toEqual(["task_id", "agent_id", "cost_usd", "task_cost_usd", "cost_source"]);
    // cost_usd is the run-cumulative spend as a Python float (as upstream writes it)
    const costs = completed.map((r) => r.get("cost_usd") as PyNum);
    expect(costs.every((c) => c.isFloat)).toBe(true);
    expect(costs.map((c) => c.toNumber())).toEqual([...costs.map((c) => c.toNumber())].sort((a, b) => a - b));
    expect(costs.at(-1)!.toNumber()).toBeCloseTo(0.0293, 6);
    const last = rows.at(-1)!;
    expect(keysOf(last)).toEqual(["run_id", "ticks", "fingerprint", "outcome", "cost_usd", "cost_known"]);
    expect(last.get("fingerprint")).toBe(rows.at(-2)!.get("event_hash"));
    expect(last.get("outcome")).toBe("completed");

    // metadata.json: Python indent-2 bytes
    const meta = parse(readFileSync(join(p.sddDir, "runs", runId!, "metadata.json"), "utf8")) as Map<string, any>;
    expect([...meta.keys()]).toEqual(["run_id", "started_at", "git_sha", "git_branch", "config_hash", "seed_path"]);
    expect(meta.get("config_hash")).toBe(new Bun.CryptoHasher("sha256").update(readFileSync(join(p.dir, "bernstein.yaml"))).digest("hex"));

    await verifyAllJournals(p.sddDir);

    // one log per agent, traces in both layouts
    const logs = readdirSync(join(p.sddDir, "runtime", "logs"));
    expect(logs).toHaveLength(5);
    const traces = readdirSync(join(p.sddDir, "traces"));
    expect(traces.filter((n) => n.startsWith("trace-"))).toHaveLength(5);
    expect(traces).toContain("write-tests.jsonl");
    const own = traces.filter((n) => /^write-tests-\d{8}T\d{9}Z\.json$/.test(n));
    expect(own).toHaveLength(1);
    const trace = parse(readFileSync(join(p.sddDir, "traces", own[0]!), "utf8")) as Map<string, any>;
    expect([...trace.keys()]).toEqual([
      "trace_id", "session_id", "task_ids", "agent_role", "model", "effort", "spawn_ts", "end_ts", "steps", "outcome",
      "log_path", "task_snapshots", "total_allocated_budget", "total_consumed", "turn_count", "settings_snapshot", "result_summary",
      // ours, after upstream's fields (docs/journal.md, task traces)
      "adapter", "reported_model", "duration_ms", "tokens", "cost_usd", "cost_source", "files_changed",
    ]);
    expect(trace.get("outcome")).toBe("success");
    expect(trace.get("model")).toBe("demo-large");
    expect(trace.get("result_summary")).toBe("Write tests for the handlers: wrote out/write-tests.md");
    const lines = readFileSync(join(p.sddDir, "traces", "write-tests.jsonl"), "utf8").trim().split("\n");
    expect(lines).toHaveLength(2); // spawn copy + final copy, Python layout
    expect(lines[0]).toContain('"outcome": "unknown"');
    expect(lines[1]).toContain('"outcome": "success"');

    // session saved with everything completed; runtime files cleaned up
    const s = readSession(p);
    expect(s.completed_task_ids.sort()).toEqual(["design-api", "implement-server", "implement-store", "write-docs", "write-tests"]);
    expect(s.goal).toBe("Ship a tiny key-value service");
    expect(statSync(join(p.sddDir, "runtime", "session.json")).mode & 0o777).toBe(0o600);
    expect(existsSync(join(p.sddDir, "runtime", "orchestrator.json"))).toBe(false);
    expect(existsSync(join(p.sddDir, "runtime", "server.json"))).toBe(false);
    expect(existsSync(join(p.sddDir, "runtime", "agents.json"))).toBe(false);
  });

  test("agents run in parallel (two starts before the first end) up to --max-agents", async () => {
    const p = makeProject({ tasks: [{ id: "P1" }, { id: "P2" }, { id: "P3" }], agentEnv: { AGENT_SLEEP: "0.4" } });
    const r = await runToEnd(p, ["--max-agents", "2"]);
    expect(r.code).toBe(0);
    const ledger = readLedger(p);
    const firstEnd = ledger.findIndex((l) => l.kind === "end");
    expect(ledger.slice(0, firstEnd).filter((l) => l.kind === "start").length).toBe(2);
    // never more than 2 at once
    let live = 0;
    let peak = 0;
    for (const l of ledger) {
      live += l.kind === "start" ? 1 : -1;
      peak = Math.max(peak, live);
    }
    expect(peak).toBe(2);
  });

  test("a gate that fails once then passes: verification failure and retry are in the journal", async () => {
    const p = makeProject({
      tasks: [{ id: "G1" }],
      config: 'max_retries: 2\nverify:\n  - name: flaky\n    run: test "$BERNSTEIN_ATTEMPT" -ge 2',
    });
    const r = await runToEnd(p);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("verification failed for G1 (gate:flaky): retry 1 of 2");
    const rows = journalEvents(p, runIds(p)[0]!);
    const names = eventNames(rows);
    const vf = rows.find((x) => x.get("event") === "task_verification_failed")!;
    expect(vf.get("task_id")).toBe("G1");
    expect(vf.get("failed_signals")).toEqual(["gate:flaky"]);
    expect(names.indexOf("task_verification_failed")).toBeLessThan(names.indexOf("task_retried"));
    expect(names.indexOf("task_retried")).toBeLessThan(names.indexOf("task_completed"));
    expect(storedTasks(p)[0]).toMatchObject({ status: "done", attempts: 2 });
    expect(readLedger(p).filter((l) => l.kind === "start").map((l) => l.attempt)).toEqual([1, 2]);
    await verifyAllJournals(p.sddDir);
  });

  test("a task that fails for good: retries exhausted, dependents fail, exit 1", async () => {
    const p = makeProject({
      tasks: [{ id: "BAD" }, { id: "OK" }, { id: "AFTER", depends_on: ["BAD"] }],
      agentEnv: { FAIL_TASKS: "BAD" },
      config: "max_retries: 1",
    });
    const r = await runToEnd(p, ["--as-json"]);
    expect(r.code).toBe(1);
    const s = JSON.parse(r.stdout);
    expect(s).toMatchObject({ ok: false, error: "tasks_failed", outcome: "failed", tasks: { done: 1, failed: 2 } });
    const byId = Object.fromEntries(storedTasks(p).map((t) => [t.id, t]));
    expect(byId.BAD).toMatchObject({ status: "failed", attempts: 2 });
    expect(byId.BAD!.fail_reason).toContain("exit_code:1");
    expect(byId.AFTER).toMatchObject({ status: "failed", attempts: 0, fail_reason: "dependency BAD failed" });
    const rows = journalEvents(p, runIds(p)[0]!);
    expect(rows.filter((x) => x.get("event") === "task_verification_failed").map((x) => x.get("failed_signals"))).toEqual([["exit_code:1"], ["exit_code:1"]]);
    expect(rows.filter((x) => x.get("event") === "task_failed").map((x) => x.get("task_id"))).toEqual(["BAD", "AFTER"]);
    expect(readLedger(p).filter((l) => l.task === "AFTER")).toEqual([]);
    await verifyAllJournals(p.sddDir);
  });

  test("budget stop: no new task is claimed once the budget is spent", async () => {
    const p = makeProject({
      tasks: [{ id: "B1" }, { id: "B2" }, { id: "B3" }, { id: "B4" }],
      agentEnv: { AGENT_COST: "0.5" },
    });
    const r = await runToEnd(p, ["--budget", "1", "--max-agents", "1", "--as-json"]);
    expect(r.code).toBe(1);
    const s = JSON.parse(r.stdout);
    expect(s).toMatchObject({ ok: false, error: "budget_exhausted", outcome: "budget_exhausted", cost_usd: 1, budget_usd: 1, tasks: { done: 2, open: 2 } });
    expect(readLedger(p).filter((l) => l.kind === "start")).toHaveLength(2);
    const rows = journalEvents(p, runIds(p)[0]!);
    const be = rows.find((x) => x.get("event") === "budget_exhausted")!;
    expect(be.get("spent_usd").raw).toBe("1.0");
    expect(rows.at(-1)!.get("outcome")).toBe("budget_exhausted");
    expect(readSession(p).cost_spent).toBe(1);
  });

  test("task model reaches the agent ({model} / BERNSTEIN_MODEL), config models as default", async () => {
    const p = makeProject({
      tasks: [{ id: "M1", model: "opus-x" }, { id: "M2", role: "qa" }, { id: "M3" }],
      config: "models:\n  default: small-1\n  qa: qa-model",
    });
    const r = await runToEnd(p);
    expect(r.code).toBe(0);
    const byId = Object.fromEntries(storedTasks(p).map((t) => [t.id, t.result_summary]));
    expect(byId).toEqual({ M1: "did M1 with [opus-x]", M2: "did M2 with [qa-model]", M3: "did M3 with [small-1]" });
  });

  test("command adapter substitutes {model} and {prompt}; RESULT: line is the summary", async () => {
    const p = makeProject({ tasks: [{ id: "C1", model: "m-9" }] });
    await Bun.write(
      join(p.dir, "bernstein.yaml"),
      'agent:\n  adapter: command\n  command: ["/bin/sh", "-c", "echo noise; echo \\"RESULT: model={model} len=${#1}\\"; echo trailing", "sh", "{prompt}"]\n',
    );
    const r = await runToEnd(p);
    expect(r.code).toBe(0);
    const t = storedTasks(p)[0]!;
    expect(t.result_summary).toMatch(/^model=m-9 len=\d+$/);
  });

  test("bad config: wrong type refused with the key path (exit 3), unknown key warned", async () => {
    const p = makeProject({ config: "max_agents: lots" });
    const r = await runToEnd(p, ["--as-json"]);
    expect(r.code).toBe(3);
    const j = JSON.parse(r.stdout);
    expect(j).toMatchObject({ ok: false, error: "config_invalid", key: "max_agents" });
    expect(j.detail).toContain("max_agents: expected a positive integer");
    const p2 = makeProject({ config: "frobnicate: 1\nsession:\n  resume: true\n  bogus: 2" });
    const r2 = await runToEnd(p2);
    expect(r2.code).toBe(0);
    expect(r2.stderr).toContain("unknown key 'frobnicate'");
    expect(r2.stderr).toContain("unknown key 'session.bogus'");
    const p3 = makeProject({ config: "session:\n  resume: maybe" });
    const r3 = await runToEnd(p3);
    expect(r3.code).toBe(3);
    expect(r3.stderr).toContain("session.resume: expected a bool");
  });

  test("missing agent CLI is a clear refusal naming the adapter and the config key", async () => {
    const p = makeProject();
    await Bun.write(join(p.dir, "bernstein.yaml"), "agent:\n  adapter: claude\n");
    const r = await runToEnd(p, ["--as-json"], { PATH: join(p.dir, "empty-path") });
    expect(r.code).toBe(2);
    const j = JSON.parse(r.stdout);
    expect(j).toMatchObject({ ok: false, error: "agent_cli_missing", adapter: "claude", config_key: "agent.adapter" });
    expect(j.detail).toContain("'claude' CLI");
    expect(existsSync(join(p.sddDir, "runs"))).toBe(false);
  });

  test("malformed plan file is a clear error (exit 3), nothing started", async () => {
    const p = makeProject();
    await Bun.write(p.planPath, "- id: A\n  title: a\n  depends_on: [Z]\n");
    const r = await runToEnd(p);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("depends_on 'Z' is not a task of this plan");
    await Bun.write(p.planPath, "- id: A\n  title: a\n  depends_on: [B]\n- id: B\n  title: b\n  depends_on: [A]\n");
    const r2 = await runToEnd(p);
    expect(r2.code).toBe(3);
    expect(r2.stderr).toContain("dependency cycle");
  });

  test("manager planning: the agent's JSON task list becomes the backlog; a malformed answer fails clearly", async () => {
    const p = makeProject({ goal: "make a thing" });
    const agent = `#!/bin/sh
cat > /dev/null
if [ "$BERNSTEIN_ROLE" = "manager" ]; then
  echo "Here is the plan:"
  echo '[{"id": "a", "title": "first"}, {"id": "b", "title": "second", "depends_on": ["first"]}]'
  exit 0
fi
echo "start $BERNSTEIN_TASK_ID" >> "$LEDGER"
echo "RESULT: built $BERNSTEIN_TASK_ID"
`;
    await Bun.write(join(p.dir, "agent.sh"), agent);
    const proc = Bun.spawn([process.env.BERNSTEIN_BIN!, "run", "--port", "0", "--as-json"], { cwd: p.dir, stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
    const out = await new Response(proc.stdout).text();
    expect(await proc.exited).toBe(0);
    expect(JSON.parse(out)).toMatchObject({ outcome: "completed", tasks: { done: 3 } });
    const tasks = storedTasks(p);
    expect(tasks.map((t) => t.id).slice(1)).toEqual(["a", "b"]);
    expect(tasks[0]!.id).toMatch(/^plan-/);
    const names = eventNames(journalEvents(p, runIds(p)[0]!));
    expect(names).toContain("plan_requested");
    expect(names).toContain("plan_loaded");

    const bad = makeProject({ goal: "make a thing", config: "max_retries: 0" });
    await Bun.write(join(bad.dir, "agent.sh"), "#!/bin/sh\necho 'I think you should write some code.'\n");
    const proc2 = Bun.spawn([process.env.BERNSTEIN_BIN!, "run", "--port", "0", "--as-json"], { cwd: bad.dir, stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
    const out2 = await new Response(proc2.stdout).text();
    expect(await proc2.exited).toBe(3);
    const j = JSON.parse(out2);
    expect(j).toMatchObject({ ok: false, error: "plan_invalid", outcome: "plan_failed" });
    expect(j.detail).toContain("did not answer with a JSON task list");
  });

  test("runtime state is owner-only: tasks.db (+ -wal/-shm), logs and traces 0600 in 0700 directories, also when they existed wider", async () => {
    const p = makeProject({ tasks: [{ id: "M1" }] });
    const mode = (rel: string) => statSync(join(p.sddDir, rel)).mode & 0o777;
    const r = await runToEnd(p);
    expect(r.code).toBe(0);
    expect(mode("runtime")).toBe(0o700);
    expect(mode("runtime/logs")).toBe(0o700);
    expect(mode("traces")).toBe(0o700);
    expect(mode("runtime/tasks.db")).toBe(0o600);
    for (const f of readdirSync(join(p.sddDir, "runtime", "logs"))) expect(mode(`runtime/logs/${f}`)).toBe(0o600);
    for (const f of readdirSync(join(p.sddDir, "traces"))) expect(mode(`traces/${f}`)).toBe(0o600);
    // the WAL side files, while a server holds the store open
    const proc = Bun.spawn([process.env.BERNSTEIN_BIN!, "server", "--port", "0"], { cwd: p.dir, stdout: "pipe", stderr: "pipe" });
    const { chmodSync } = await import("node:fs");
    try {
      for (let i = 0; i < 500 && !existsSync(join(p.sddDir, "runtime", "server.json")); i++) await Bun.sleep(10);
      expect(mode("runtime/tasks.db-wal")).toBe(0o600);
      expect(mode("runtime/tasks.db-shm")).toBe(0o600);
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
    // state made by an older version (0644 / 0755) is narrowed on the next start
    chmodSync(join(p.sddDir, "runtime"), 0o755);
    chmodSync(join(p.sddDir, "runtime", "tasks.db"), 0o644);
    chmodSync(join(p.sddDir, "traces"), 0o755);
    expect((await runToEnd(p)).code).toBe(0);
    expect(mode("runtime")).toBe(0o700);
    expect(mode("runtime/tasks.db")).toBe(0o600);
  });

  test("nothing to do without plan, goal or --keep-alive is a usage error", async () => {
    const p = makeProject();
    const r = await bernstein(["run", "--port", "0"], { cwd: p.dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("nothing to do");
  });
});
