import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAgentOutput, parseAiderOutput, priced } from "../../src/orchestrator/result.ts";
import { parseClaudeOutput } from "../../src/orchestrator/adapters/claude.ts";
import { parseCodexOutput } from "../../src/orchestrator/adapters/codex.ts";
import { parseGeminiOutput } from "../../src/orchestrator/adapters/gemini.ts";
import { providerMessage } from "../../src/orchestrator/adapters/events.ts";
import { createAdapter } from "../../src/orchestrator/adapters.ts";
import { planFromAgentOutput, planFromDocument } from "../../src/orchestrator/plan.ts";
import { gatesOf, validateConfig } from "../../src/orchestrator/config.ts";
import { newRunId, runIdStamp } from "../../src/orchestrator/runid.ts";
import { TraceRecorder, traceStamp } from "../../src/traces/writer.ts";
import { SessionSaver } from "../../src/session/saver.ts";
import { loadSession, sessionFromTasks } from "../../src/session/state.ts";
import { TaskStore } from "../../src/server/store.ts";
import { InputError } from "../../src/errors/index.ts";
import { runPython } from "../helpers/python.ts";
import { mkdirSync, writeFileSync } from "node:fs";

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
    // A cost the agent did not report is "unknown", never a silent 0.
    const ok = (resultSummary: string | null, costUsd: number, costSource = "cli") => ({ resultSummary, costUsd, costSource, failure: null, failureDetail: null });
    expect(parseAgentOutput("")).toMatchObject(ok(null, 0, "unknown"));
    expect(parseAgentOutput("a\nb\n\n  \n")).toMatchObject(ok("b", 0, "unknown"));
    expect(parseAgentOutput("RESULT: the thing\nbye\n")).toMatchObject(ok("the thing", 0, "unknown"));
    expect(parseAgentOutput('RESULT: x\n{"result_summary": "y", "cost_usd": 0.5}\n')).toMatchObject(ok("y", 0.5));
    expect(parseAgentOutput('{"cost_usd": 1.25}')).toMatchObject(ok(null, 1.25));
    expect(parseAgentOutput('{"other": 1}')).toMatchObject(ok('{"other": 1}', 0, "unknown"));
    expect(parseAgentOutput("x".repeat(5000)).resultSummary!.length).toBe(4000);
    expect(parseClaudeOutput('{"type":"result","result":"ok","total_cost_usd":0.1}')).toMatchObject(ok("ok", 0.1));
    expect(parseAiderOutput("Cost: $0.01 message, $0.03 session.\nall good")).toMatchObject(ok("all good", 0.03));
    expect(parseAiderOutput("all good")).toMatchObject(ok("all good", 0, "unknown"));
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

  test("claude: an attempt stopped before its result keeps the tokens its messages reported (one usage per message id)", () => {
    const msg = (id: string, usage: object, text: string) => JSON.stringify({ type: "assistant", session_id: "s1", message: { id, usage, content: [{ type: "text", text }] } });
    const stream = [
      '{"type":"system","subtype":"init","session_id":"s1"}',
      msg("m1", { input_tokens: 10, cache_read_input_tokens: 100, cache_creation_input_tokens: 5, output_tokens: 7 }, "a"),
      // the same message again (its next content block): counted once
      msg("m1", { input_tokens: 10, cache_read_input_tokens: 100, cache_creation_input_tokens: 5, output_tokens: 7 }, "b"),
      msg("m2", { input_tokens: 3, output_tokens: 4 }, "c"),
    ].join("\n");
    const r = parseClaudeOutput(stream);
    expect(r.failure).toBe("no_result");
    expect(r.tokens).toEqual({ input: 115 + 3, output: 11, cached: 100 });
    expect(r.sessionId).toBe("s1");
    // no message, no tokens
    expect(parseClaudeOutput('{"type":"system","subtype":"init","session_id":"s1"}').tokens).toBeNull();
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

  test("stop_grace_s: 5 s by default (inside a container's 10 s), any seconds 0..86400, fractions allowed", () => {
    expect(validateConfig({}, "b.yaml").config.stop_grace_s).toBe(5);
    expect(validateConfig({ stop_grace_s: 0 }, "b.yaml").config.stop_grace_s).toBe(0);
    const { config, warnings } = validateConfig({ stop_grace_s: 2.5 }, "b.yaml");
    expect(config.stop_grace_s).toBe(2.5);
    expect(warnings).toEqual([]);
    expect(() => validateConfig({ stop_grace_s: -1 }, "b.yaml")).toThrow("b.yaml: stop_grace_s: expected 0 to 86400 seconds, got -1");
    expect(() => validateConfig({ stop_grace_s: "5s" }, "b.yaml")).toThrow('b.yaml: stop_grace_s: expected a number of seconds, got "5s"');
  });

  test("isolation: unset by default (the run decides from git), worktree or none, anything else refused", () => {
    expect(validateConfig({}, "b.yaml").config.isolation).toBeUndefined();
    for (const mode of ["worktree", "none"] as const) {
      const { config, warnings } = validateConfig({ isolation: mode }, "b.yaml");
      expect(config.isolation).toBe(mode);
      expect(warnings).toEqual([]);
    }
    expect(() => validateConfig({ isolation: "branch" }, "b.yaml")).toThrow('b.yaml: isolation: expected one of worktree, none, got "branch"');
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
    expect(whole).toContain('"detail": "Spawned backend agent (opus/default) for tasks: T-1"');
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

describe("CLI adapters' machine-readable output (lines as the real CLIs print them)", () => {
  test("codex --json: answer, thread id, tokens, tool calls; turn.failed carries the provider's message", () => {
    const done = [
      '{"type":"thread.started","thread_id":"th-1"}',
      '{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `m` not found."}}',
      '{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"bash -lc \'echo hi > a\'","aggregated_output":"","exit_code":null,"status":"in_progress"}}',
      '{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc \'echo hi > a\'","aggregated_output":"","exit_code":0,"status":"completed"}}',
      '{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"I wrote a.\\nRESULT: wrote a"}}',
      '{"type":"turn.completed","usage":{"input_tokens":2400,"cached_input_tokens":400,"output_tokens":600}}',
    ].join("\n");
    const r = parseCodexOutput(done);
    expect(r).toMatchObject({ failure: null, resultSummary: "wrote a", answerText: "I wrote a.\nRESULT: wrote a", sessionId: "th-1", tokens: { input: 2400, cached: 400, output: 600 }, costSource: "unknown" });
    expect(r.toolCalls).toEqual([{ name: "shell", input: "bash -lc 'echo hi > a'", status: "ok", output: "" }]);
    const failedRun = '{"type":"turn.failed","error":{"message":"{\\"error\\":{\\"message\\":\\"max_tokens is too large\\",\\"type\\":\\"invalid_request_error\\"}}"}}';
    expect(parseCodexOutput(failedRun)).toMatchObject({ failure: "agent_error", failureDetail: "codex: max_tokens is too large" });
    expect(parseCodexOutput("").failure).toBe("no_result");
  });

  test("gemini stream-json: the answer after the last tool call, tokens, model; an error result carries the provider's message", () => {
    const done = [
      '{"type":"init","session_id":"s-1","model":"gemini-x"}',
      '{"type":"message","role":"user","content":"do it"}',
      '{"type":"message","role":"assistant","content":"Let me write it.","delta":true}',
      '{"type":"tool_use","tool_name":"write_file","tool_id":"w1","parameters":{"file_path":"a","content":"hi"}}',
      '{"type":"tool_result","tool_id":"w1","status":"success"}',
      '{"type":"message","role":"assistant","content":"Done.\\nRESULT: ","delta":true}',
      '{"type":"message","role":"assistant","content":"wrote a","delta":true}',
      '{"type":"result","status":"success","stats":{"input_tokens":2400,"output_tokens":600,"cached":400,"models":{"gemini-x-001":{}}}}',
    ].join("\n");
    expect(parseGeminiOutput(done)).toMatchObject({
      failure: null,
      resultSummary: "wrote a",
      answerText: "Done.\nRESULT: wrote a",
      sessionId: "s-1",
      reportedModel: "gemini-x-001",
      tokens: { input: 2400, output: 600, cached: 400 },
      toolCalls: [{ name: "write_file", input: '{"file_path":"a","content":"hi"}', status: "ok", output: null }],
    });
    const err = '{"type":"result","status":"error","error":{"type":"unknown","message":"[API Error: {\\"error\\":{\\"code\\":400,\\"message\\":\\"bad request body\\",\\"status\\":\\"INVALID_ARGUMENT\\"}}]"}}';
    expect(parseGeminiOutput(err)).toMatchObject({ failure: "agent_error", failureDetail: "gemini: bad request body" });
  });

  test("claude stream-json: tool calls, tokens (cache reads included), the CLI's cost; an API error is the provider's message", () => {
    const r = parseClaudeOutput(
      [
        '{"type":"system","subtype":"init","session_id":"c-1"}',
        '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"a","content":"hi"}}]}}',
        '{"type":"user","message":{"content":[{"tool_use_id":"t1","type":"tool_result","content":"File created"}]}}',
        '{"type":"result","is_error":false,"result":"ok\\nRESULT: wrote a","total_cost_usd":0.02,"usage":{"input_tokens":10,"cache_read_input_tokens":5,"cache_creation_input_tokens":1,"output_tokens":7},"modelUsage":{"m1":{}}}',
      ].join("\n"),
    );
    expect(r).toMatchObject({ failure: null, resultSummary: "wrote a", costUsd: 0.02, costSource: "cli", sessionId: "c-1", tokens: { input: 16, cached: 5, output: 7 }, reportedModel: "m1" });
    expect(r.toolCalls).toEqual([{ name: "Write", input: '{"file_path":"a","content":"hi"}', status: "ok", output: "File created" }]);
    const e = parseClaudeOutput('{"type":"result","is_error":true,"api_error_status":400,"result":"API Error: 400 the request is bad","total_cost_usd":0}');
    expect(e).toMatchObject({ failure: "agent_error", failureDetail: "claude reported an error (HTTP 400): the request is bad" });
  });

  test("providerMessage digs the message out of nested JSON; pricing uses tokens x models.prices", () => {
    expect(providerMessage('[API Error: {"error":{"message":"{\\"error\\":{\\"message\\":\\"deep\\"}}"}}]')).toBe("deep");
    expect(providerMessage("plain\nsecond")).toBe("plain");
    const r = parseCodexOutput('{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"x"}}\n{"type":"turn.completed","usage":{"input_tokens":1000000,"cached_input_tokens":500000,"output_tokens":100000}}');
    const prices = { m: { input_usd_per_mtok: 2, cached_input_usd_per_mtok: 0.5, output_usd_per_mtok: 10 } };
    expect(priced(r, "m", prices)).toMatchObject({ costUsd: 1 + 0.25 + 1, costSource: "price_table" });
    expect(priced(r, "other", prices)).toMatchObject({ costUsd: 0, costSource: "unknown" });
  });

  test("config: permission_mode, base_url, api_key_env and models.prices are validated", () => {
    const { config } = validateConfig({ agent: { permission_mode: "read_only", base_url: "http://127.0.0.1:9/", api_key_env: "MY_KEY" }, models: { default: "m", prices: { m: { input_usd_per_mtok: 1, output_usd_per_mtok: 2 } } } }, "b.yaml");
    expect(config.agent).toMatchObject({ permission_mode: "read_only", base_url: "http://127.0.0.1:9/", api_key_env: "MY_KEY" });
    expect(config.models).toEqual({ roles: { default: "m" }, prices: { m: { input_usd_per_mtok: 1, output_usd_per_mtok: 2 } } });
    expect(validateConfig({}, "b.yaml").config.agent.permission_mode).toBe("edits");
    for (const [doc, msg] of [
      [{ agent: { permission_mode: "yolo" } }, "agent.permission_mode: expected one of edits, read_only, full, cli"],
      [{ agent: { base_url: "ftp://x" } }, "agent.base_url: expected an http(s) URL"],
      [{ models: { prices: { m: { input_usd_per_mtok: -1, output_usd_per_mtok: 1 } } } }, "models.prices.m.input_usd_per_mtok: expected a non-negative number"],
    ] as const) {
      expect(() => validateConfig(doc, "b.yaml")).toThrow(msg);
    }
  });
});

describe("CLI adapters' invocation: permission modes, effort, endpoint wiring", () => {
  const cfgFor = (adapter: string, agent: Record<string, unknown> = {}) => validateConfig({ agent: { adapter, ...agent } }, "b.yaml").config.agent;
  const req = (attemptDir: string) => ({ prompt: "P", promptFile: join(attemptDir, "prompt.txt"), model: "m1", effort: "high", taskId: "T", agentId: "a", title: "t", workdir: attemptDir, attemptDir });

  test("each permission mode maps to the CLI's own flags; the prompt never goes in argv", () => {
    const dir = tempDir();
    const expected: Record<string, Record<string, string[]>> = {
      claude: { edits: ["--permission-mode", "acceptEdits"], read_only: ["--permission-mode", "default"], full: ["--permission-mode", "bypassPermissions"], cli: [] },
      codex: { edits: ["--sandbox", "workspace-write"], read_only: ["--sandbox", "read-only"], full: ["--sandbox", "danger-full-access"], cli: [] },
      gemini: { edits: ["--skip-trust", "--approval-mode", "auto_edit"], read_only: ["--skip-trust", "--approval-mode", "default"], full: ["--skip-trust", "--approval-mode", "yolo"], cli: [] },
    };
    for (const [cli, modes] of Object.entries(expected)) {
      for (const [mode, flags] of Object.entries(modes)) {
        const inv = createAdapter(cfgFor(cli, { permission_mode: mode }), dir).invocation(req(dir));
        const others = Object.values(modes).flat().filter((f) => !flags.includes(f));
        for (const f of flags) expect(inv.argv).toContain(f);
        for (const f of others) if (!["--permission-mode", "--sandbox", "--skip-trust", "--approval-mode"].includes(f)) expect(inv.argv).not.toContain(f);
        expect(inv.argv).not.toContain("P");
        expect(inv.stdin).toBe("P");
      }
    }
    expect(createAdapter(cfgFor("claude"), dir).invocation(req(dir)).argv).toContain("--effort");
    expect(createAdapter(cfgFor("codex"), dir).invocation(req(dir)).argv).toContain("model_reasoning_effort=high");
    // an empty .git folder (codex's sandbox leaves one in /tmp) is no repository: the check is still skipped
    mkdirSync(join(dir, ".git"));
    expect(createAdapter(cfgFor("codex"), dir).invocation(req(dir)).argv).toContain("--skip-git-repo-check");
    // codex inside a git work tree keeps its repository check
    writeFileSync(join(dir, ".git", "HEAD"), "ref: refs/heads/main\n");
    expect(createAdapter(cfgFor("codex"), dir).invocation(req(dir)).argv).not.toContain("--skip-git-repo-check");
  });

  test("base_url and api_key_env: claude env, a generated CODEX_HOME, a per-attempt gemini HOME", () => {
    const dir = tempDir();
    process.env.UNIT_GATEWAY_KEY = "k-123";
    try {
      const agent = { base_url: "http://127.0.0.1:9999/", api_key_env: "UNIT_GATEWAY_KEY" };
      const claude = createAdapter(cfgFor("claude", agent), dir).invocation(req(dir));
      // no retries inside claude: bernstein retries by failure class
      expect(claude.env).toEqual({ ANTHROPIC_API_KEY: "k-123", ANTHROPIC_BASE_URL: "http://127.0.0.1:9999", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", CLAUDE_CODE_MAX_RETRIES: "0" });
      const codex = createAdapter(cfgFor("codex", agent), dir).invocation(req(dir));
      const toml = readFileSync(join(codex.env.CODEX_HOME!, "config.toml"), "utf8");
      expect(toml).toContain('base_url = "http://127.0.0.1:9999/v1"');
      expect(toml).toContain('env_key = "UNIT_GATEWAY_KEY"');
      expect(toml).toContain('wire_api = "responses"');
      expect(toml).not.toContain("k-123"); // the key stays in the environment
      const gemini = createAdapter(cfgFor("gemini", agent), dir).invocation(req(dir));
      expect(gemini.env).toMatchObject({ GEMINI_API_KEY: "k-123", GOOGLE_GEMINI_BASE_URL: "http://127.0.0.1:9999", GEMINI_CLI_NO_RELAUNCH: "true" });
      const settings = JSON.parse(readFileSync(join(gemini.env.HOME!, ".gemini", "settings.json"), "utf8"));
      expect(settings.security.auth.selectedType).toBe("gemini-api-key");
      expect(settings.general.maxAttempts).toBe(1);
      // without an endpoint, the user's own login and homes are used (gemini's retry limit as a lowest-precedence system default)
      expect(createAdapter(cfgFor("codex"), dir).invocation(req(dir)).env).toEqual({});
      const own = createAdapter(cfgFor("gemini"), dir).invocation(req(dir)).env;
      if (existsSync("/etc/gemini-cli/system-defaults.json")) expect(own).toEqual({ GEMINI_CLI_NO_RELAUNCH: "true" });
      else {
        expect(own).toEqual({ GEMINI_CLI_NO_RELAUNCH: "true", GEMINI_CLI_SYSTEM_DEFAULTS_PATH: join(dir, "gemini-system-defaults.json") });
        expect(JSON.parse(readFileSync(own.GEMINI_CLI_SYSTEM_DEFAULTS_PATH!, "utf8"))).toEqual({ general: { maxAttempts: 1 } });
      }
    } finally {
      delete process.env.UNIT_GATEWAY_KEY;
    }
  });
});
