import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAgentOutput, parseAiderOutput, parseClaudeOutput } from "../../src/orchestrator/result.ts";
import { planFromAgentOutput, planFromDocument } from "../../src/orchestrator/plan.ts";
import { gatesOf, validateConfig } from "../../src/orchestrator/config.ts";
import { newRunId, runIdStamp } from "../../src/orchestrator/runid.ts";
import { TraceRecorder, traceStamp } from "../../src/traces/writer.ts";
import { SessionSaver } from "../../src/session/saver.ts";
import { loadSession, sessionFromTasks } from "../../src/session/state.ts";
import { TaskStore } from "../../src/server/store.ts";
import { InputError } from "../../src/errors.ts";
import { runPython } from "../helpers/python.ts";
import { mkdirSync } from "node:fs";

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "bern-orch-"));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("agent output contract", () => {
  test("JSON last line, then RESULT: line, then last non-empty line", () => {
    const ok = (resultSummary: string | null, costUsd: number) => ({ resultSummary, costUsd, failure: null, failureDetail: null });
    expect(parseAgentOutput("")).toEqual(ok(null, 0));
    expect(parseAgentOutput("a\nb\n\n  \n")).toEqual(ok("b", 0));
    expect(parseAgentOutput("RESULT: the thing\nbye\n")).toEqual(ok("the thing", 0));
    expect(parseAgentOutput('RESULT: x\n{"result_summary": "y", "cost_usd": 0.5}\n')).toEqual(ok("y", 0.5));
    expect(parseAgentOutput('{"cost_usd": 1.25}')).toEqual(ok(null, 1.25));
    expect(parseAgentOutput('{"other": 1}')).toEqual(ok('{"other": 1}', 0));
    expect(parseAgentOutput("x".repeat(5000)).resultSummary!.length).toBe(4000);
    expect(parseClaudeOutput('{"type":"result","result":"ok","total_cost_usd":0.1}')).toEqual(ok("ok", 0.1));
    expect(parseAiderOutput("Cost: $0.01 message, $0.03 session.\nall good")).toEqual(ok("all good", 0.03));
  });

  test("a cost that is not a finite number >= 0 is refused (invalid_cost), never read as 0", () => {
    for (const raw of ["-1", "-1000", "1e400", "-1e400", '"0.5"', "true"]) {
      const r = parseAgentOutput(`{"result_summary": "x", "cost_usd": ${raw}}`);
      expect(r.failure).toBe("invalid_cost");
      expect(r.costUsd).toBe(0);
      expect(r.failureDetail).toContain("cost_usd");
    }
    expect(parseClaudeOutput('{"result":"ok","total_cost_usd":1e400}').failure).toBe("invalid_cost");
    expect(parseAgentOutput('{"result_summary": "x", "cost_usd": null}').failure).toBeNull();
  });

  test("claude: denied tools, an error result or no result are not a success", () => {
    const denied = parseClaudeOutput(
      '{"type":"result","subtype":"success","is_error":false,"result":"I need permission to write files.","total_cost_usd":0.02,"permission_denials":[{"tool_name":"Write","tool_use_id":"t1","tool_input":{}},{"tool_name":"Bash"}]}',
    );
    expect(denied).toMatchObject({ failure: "permission_denied", costUsd: 0.02 });
    expect(denied.failureDetail).toContain("denied 2 tool use(s) (Write, Bash)");
    expect(parseClaudeOutput('{"type":"result","subtype":"error_max_turns","is_error":true,"result":"","total_cost_usd":0.5}')).toMatchObject({ failure: "agent_error", costUsd: 0.5 });
    expect(parseClaudeOutput('{"type":"result","total_cost_usd":0.1}').failure).toBe("no_result");
    expect(parseClaudeOutput("plain text, no JSON").failure).toBe("no_result");
    expect(parseClaudeOutput('{"type":"result","result":"done","total_cost_usd":0.1,"permission_denials":[]}').failure).toBeNull();
  });
});

describe("plans", () => {
  test("ids, titles in depends_on, defaults, goal", () => {
    const plan = planFromDocument(
      { goal: "g", tasks: [{ id: "a", title: "First" }, { title: "Second", depends_on: ["First"] }, { id: 7, title: "Third", depends_on: ["a", "Second"] }] },
      "plan.yaml",
    );
    expect(plan.goal).toBe("g");
    expect(plan.tasks[0]).toMatchObject({ id: "a", title: "First", role: "auto", priority: 2, depends_on: [] });
    expect(plan.tasks[1]!.id).toMatch(/^[0-9a-f]{12}$/);
    expect(plan.tasks[1]!.depends_on).toEqual(["a"]);
    expect(plan.tasks[2]).toMatchObject({ id: "7", depends_on: ["a", plan.tasks[1]!.id] });
  });

  test("malformed plans are InputErrors naming task and field", () => {
    const bad: [unknown, string][] = [
      [[], "no tasks"],
      ["text", "expected a list of tasks"],
      [{ goal: 1, tasks: [] }, "goal: expected a string"],
      [[{ title: "" }], "task 1: title: must not be empty"],
      [[{ title: "x", priority: "high" }], "task 1 ('x'): priority: expected an integer"],
      [[{ id: "a b", title: "x" }], "must match"],
      [[{ id: "a", title: "x" }, { id: "a", title: "y" }], "duplicate id 'a'"],
      [[{ id: "a", title: "x", depends_on: ["a"] }], "dependency cycle: a -> a"],
      [[{ title: "x" }, { title: "x" }, { title: "z", depends_on: ["x"] }], "names several tasks"],
    ];
    for (const [doc, msg] of bad) {
      let err: unknown;
      try {
        planFromDocument(doc, "p.yaml");
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(InputError);
      expect((err as Error).message).toContain(msg);
    }
  });

  test("manager answers: whole output, fenced block, bracket span; prose is refused", () => {
    expect(planFromAgentOutput('[{"title": "a"}]').tasks).toHaveLength(1);
    expect(planFromAgentOutput('Sure!\n```json\n[{"title": "a"}, {"title": "b"}]\n```\nDone.').tasks).toHaveLength(2);
    expect(planFromAgentOutput('Plan: [{"title": "a"}] ok').tasks).toHaveLength(1);
    expect(planFromAgentOutput('{"tasks": [{"title": "a"}]}').tasks).toHaveLength(1);
    expect(() => planFromAgentOutput("no plan here")).toThrow(/did not answer with a JSON task list/);
    expect(() => planFromAgentOutput('[{"nope": 1}]')).toThrow(/title: is required|title/);
  });
});

describe("config", () => {
  test("defaults, gates, warnings, key paths", () => {
    const { config, warnings } = validateConfig({ verify: ["make test", { name: "lint", run: "make lint", timeout_s: 5 }], extra: 1 }, "b.yaml");
    expect(config).toMatchObject({ max_agents: 3, max_retries: 2, budget_usd: null, session: { resume: true, stale_after_minutes: 30 }, agent: { adapter: "claude", timeout_s: 1800 } });
    expect(gatesOf(config)).toEqual([
      { name: "gate-1", run: "make test", timeout_s: 600 },
      { name: "lint", run: "make lint", timeout_s: 5 },
    ]);
    expect(warnings).toEqual(["b.yaml: unknown key 'extra' (ignored)"]);
    const cases: [unknown, string][] = [
      [{ max_agents: 0 }, "b.yaml: max_agents: expected a positive integer, got 0"],
      [{ agent: { adapter: "gpt" } }, "agent.adapter: expected one of claude, codex, gemini, aider, command, script"],
      [{ agent: { timeout_s: "x" } }, "agent.timeout_s: expected a positive number of seconds"],
      [{ session: { stale_after_minutes: 1.5 } }, "session.stale_after_minutes: expected a positive integer"],
      [{ session: [] }, "session: expected a mapping"],
      [{ verify: [{ run: 3 }] }, "verify.0"],
      [{ agent: { adapter: "script" } }, "agent.script: the 'script' adapter needs agent.script"],
      [[1], "expected a mapping at the top level"],
    ];
    for (const [doc, msg] of cases) expect(() => validateConfig(doc, "b.yaml")).toThrow(msg);
  });
});

describe("run ids", () => {
  test("UTC stamp plus a suffix when taken", () => {
    const d = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
    expect(runIdStamp(d)).toBe("20260102-030405");
    const sdd = tempDir();
    expect(newRunId(sdd, d)).toBe("20260102-030405");
    mkdirSync(join(sdd, "runs", "20260102-030405"), { recursive: true });
    mkdirSync(join(sdd, "runs", "20260102-030405-2"), { recursive: true });
    expect(newRunId(sdd, d)).toBe("20260102-030405-3");
  });
});

describe("trace writer", () => {
  test("Python layout lines are json.dumps of themselves; required keys and float spellings", () => {
    const sdd = tempDir();
    const store = new TaskStore(":memory:");
    const [task] = store.createMany([{ id: "T-1", title: "Fix login 🚀", description: "dé", model: "opus" }]);
    const rec = new TraceRecorder(sdd, {
      taskIds: ["T-1"],
      sessionId: "backend-1234abcd",
      role: "backend",
      model: "opus",
      effort: null,
      spawnTs: 1_747_000_000,
      logPath: ".sdd/runtime/logs/backend-1234abcd.log",
      tasks: [task!],
      settings: { adapter: "script" },
    });
    rec.writeSpawn();
    const done = store.complete(store.claim("a")[0]!.id, { result_summary: "line one\nline two", cost_usd: 0.5 });
    const paths = rec.finalize({ endTs: 1_747_000_002.5, outcome: "success", resultSummary: done.result_summary, tasks: [done] });
    expect(paths[0]).toEndWith(`T-1-${traceStamp(1_747_000_000)}.json`);
    expect(traceStamp(1_747_000_000)).toBe("20250511T214640000Z");
    const names = readdirSync(join(sdd, "traces")).sort();
    expect(names).toEqual([`T-1-20250511T214640000Z.json`, "T-1.jsonl", `trace-${rec.traceId}.json`]);
    const lines = readFileSync(join(sdd, "traces", "T-1.jsonl"), "utf8");
    const whole = readFileSync(join(sdd, "traces", `trace-${rec.traceId}.json`), "utf8");
    const py = runPython(
      `
import json, sys
jobs = json.load(sys.stdin)
out = []
for text in jobs:
    rows = [json.loads(l) for l in text.splitlines() if l.strip()]
    out.append({"same": all(json.dumps(r) + "\\n" == l + "\\n" for r, l in zip(rows, text.splitlines())),
                "outcomes": [r["outcome"] for r in rows],
                "spawn": [repr(r["spawn_ts"]) for r in rows],
                "end": [repr(r["end_ts"]) for r in rows],
                "steps": [[s["type"] for s in r["steps"]] for r in rows],
                "summary": [r["task_snapshots"][0]["result_summary"] for r in rows]})
print(json.dumps(out))
`,
      [lines, whole],
    ) as any[];
    expect(py[0]).toEqual({
      same: true,
      outcomes: ["unknown", "success"],
      spawn: ["1747000000.0", "1747000000.0"],
      end: ["None", "1747000002.5"],
      steps: [["spawn"], ["spawn", "complete"]],
      summary: [null, "line one\nline two"],
    });
    expect(py[1].same).toBe(true);
    expect(whole).toBe(lines.split("\n")[1] + "\n");
    expect(whole).toContain('"title": "Fix login \\ud83d\\ude80"');
    expect(whole).toContain('"detail": "Spawned backend agent (opus/None) for tasks: T-1"');
  });
});

describe("session saver", () => {
  test("coalesces bursts (leading + trailing save) and flushes on demand", async () => {
    const sdd = tempDir();
    let n = 0;
    const saver = new SessionSaver({ sddDir: sdd, intervalMs: 100, snapshot: () => sessionFromTasks([{ id: `t${n}`, status: "open" }], "g", 0) });
    for (n = 0; n < 50; n++) saver.notify();
    expect(saver.saves).toBe(1); // leading edge
    await Bun.sleep(200);
    expect(saver.saves).toBe(2); // one trailing save for the burst
    expect(loadSession(sdd).state!.open_task_ids).toEqual(["t50"]);
    n = 99;
    saver.notify();
    saver.close();
    expect(loadSession(sdd).state!.open_task_ids).toEqual(["t99"]);
    const before = saver.saves;
    saver.notify();
    expect(saver.saves).toBe(before);
  });
});
