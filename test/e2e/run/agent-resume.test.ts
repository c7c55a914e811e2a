/**
 * Agent-level fast resume and adapters per role through the compiled
 * binary, with a stand-in `claude` on PATH (the real CLIs: test/e2e/agents/resume.test.ts).
 * The stand-in records each invocation's argv and prompt; a fresh one
 * reports a session, one finished tool call and then works until it is
 * stopped; one started with `--resume <id>` finishes (or, with
 * RESUME_GONE set, answers as claude does for a session it cannot find).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bernstein } from "../../helpers/cli.ts";
import { cleanupProjects, journalEvents, makeProject, runIds, runToEnd, spawnRun, type Project } from "./fixture.ts";
import { parse } from "../../../src/pyjson/parse.ts";

afterAll(cleanupProjects);

const STAND_IN = `#!/bin/sh
n=$(date +%s%N)
for a in "$@"; do printf '%s\\0' "$a"; done > "$CALLS/$n.argv"
cat > "$CALLS/$n.prompt"
case " $* " in
  *" --resume "*)
    if [ -n "$RESUME_GONE" ]; then
      printf '%s\\n' '{"type":"result","subtype":"error_during_execution","is_error":true,"num_turns":0,"session_id":"s-123","total_cost_usd":0,"errors":["No conversation found with session ID: s-123"]}'
      exit 1
    fi
    printf '%s\\n' '{"type":"system","subtype":"init","session_id":"s-123"}' \\
      '{"type":"assistant","message":{"id":"m2","content":[{"type":"tool_use","id":"t2","name":"Write","input":{"file_path":"b.txt"}}],"usage":{"input_tokens":10,"output_tokens":5}},"session_id":"s-123"}' \\
      '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":"ok"}]},"session_id":"s-123"}' \\
      '{"type":"result","subtype":"success","is_error":false,"result":"RESULT: finished in the same session","total_cost_usd":0.01,"session_id":"s-123"}'
    exit 0;;
esac
printf '%s\\n' '{"type":"system","subtype":"init","session_id":"s-123"}' \\
  '{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"a.txt"}}],"usage":{"input_tokens":10,"output_tokens":5}},"session_id":"s-123"}' \\
  '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]},"session_id":"s-123"}'
[ -n "$NEVER_STOP" ] || { touch "$CALLS/working"; exec sleep 60; }
printf '%s\\n' '{"type":"result","subtype":"success","is_error":false,"result":"RESULT: done fresh","total_cost_usd":0.02,"session_id":"s-123"}'
`;

interface Setup {
  p: Project;
  calls: string;
  env: Record<string, string>;
}

function setup(config = ""): Setup {
  const p = makeProject({ tasks: [{ id: "X1" }] });
  const bin = join(p.dir, "bin");
  const calls = join(p.dir, "calls");
  mkdirSync(bin);
  mkdirSync(calls);
  writeFileSync(join(bin, "claude"), STAND_IN);
  chmodSync(join(bin, "claude"), 0o755);
  writeFileSync(join(p.dir, "bernstein.yaml"), `agent:\n  adapter: claude\n  timeout_s: 90\nmax_retries: 0\nstop_grace_s: 2\n${config}\n`);
  return { p, calls, env: { PATH: `${bin}:${process.env.PATH}`, CALLS: calls } };
}

/** Argv and prompt of each stand-in invocation, in order. */
function invocations(s: Setup): { argv: string[]; prompt: string }[] {
  return readdirSync(s.calls)
    .filter((f) => f.endsWith(".argv"))
    .sort()
    .map((f) => ({ argv: readFileSync(join(s.calls, f), "utf8").split("\0").slice(0, -1), prompt: readFileSync(join(s.calls, f.replace(/\.argv$/, ".prompt")), "utf8") }));
}

/** Run until the stand-in works on X1, then `bernstein stop`: the attempt is stopped after one finished tool call. */
async function runAndStop(s: Setup): Promise<void> {
  const proc = spawnRun(s.p, [], s.env);
  const deadline = Date.now() + 30_000;
  while (!existsSync(join(s.calls, "working"))) {
    if (Date.now() > deadline) throw new Error("the stand-in never started working");
    await Bun.sleep(50);
  }
  const stop = await bernstein(["stop"], { cwd: s.p.dir, env: s.env });
  expect(stop.code).toBe(0);
  expect(await proc.exited).toBe(1);
}

const steps = (p: Project, agentId: string) =>
  readFileSync(join(p.sddDir, "runtime", "journal", agentId, "000000.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => parse(l) as Map<string, any>);
const n = (x: any): number => (typeof x === "number" ? x : x.toNumber());
const ofEvent = (rows: Map<string, any>[], name: string) => rows.filter((r) => r.get("event") === name);

describe("agent-level fast resume (stand-in claude)", () => {
  test("a stopped attempt's session is continued with claude --resume and a continuation prompt; task_resumed; the same agent's step journal goes on", async () => {
    const s = setup();
    await runAndStop(s);
    const [run1] = runIds(s.p);
    const agentId = ofEvent(journalEvents(s.p, run1!), "agent_spawned")[0]!.get("agent_id");
    const before = steps(s.p, agentId).length;
    expect(existsSync(join(s.p.sddDir, "runtime", "resume", "X1", "resume.json"))).toBe(true);

    const r = await runToEnd(s.p, ["--as-json"], s.env);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ outcome: "completed", tasks: { done: 1 } });
    const calls = invocations(s);
    expect(calls.length).toBe(2);
    expect(calls[0]!.argv).not.toContain("--resume");
    expect(calls[1]!.argv.slice(0, 3)).toEqual(["-p", "--resume", "s-123"]);
    expect(calls[1]!.prompt).toStartWith("You were stopped while working on task X1");
    expect(calls[1]!.prompt).toContain("1 tool call completed");

    const rows = journalEvents(s.p, runIds(s.p)[1]!);
    const resumed = ofEvent(rows, "task_resumed");
    expect(resumed.length).toBe(1);
    expect(resumed[0]!.get("session_id")).toBe("s-123");
    expect(resumed[0]!.get("agent_id")).toBe(agentId);
    expect(n(resumed[0]!.get("steps_done"))).toBe(1);
    expect(resumed[0]!.get("tools_done")).toEqual(["Write"]);
    expect(resumed[0]!.get("stopped_in_run")).toBe(run1);
    expect(ofEvent(rows, "agent_spawned")[0]!.get("agent_id")).toBe(agentId);
    // the step journal of the stopped agent goes on, chain intact (replay verifies it)
    const after = steps(s.p, agentId);
    expect(after.length).toBe(before + 2); // the resumed tool call and the invocation
    expect(after[before]!.get("prev_hash")).toBe(after[before - 1]!.get("step_hash"));
    const view = await bernstein(["replay", agentId], { cwd: s.p.dir });
    expect(view.code).toBe(0);
    // the point is used up; the run table shows the resume and the adapter
    expect(existsSync(join(s.p.sddDir, "runtime", "resume", "X1"))).toBe(false);
    const table = await bernstein(["replay", "latest"], { cwd: s.p.dir, env: { NO_COLOR: "1" } });
    expect(table.stdout).toMatch(/agent_spawned .* adapter=claude/);
    expect(table.stdout).toMatch(/task_resumed .* adapter=claude {2}steps_done=1/);
  }, 90_000);

  test("an orchestrator killed with kill -9 mid-attempt: the next run finds the session in the dead agent's stream and resumes it", async () => {
    const s = setup();
    const proc = spawnRun(s.p, [], s.env);
    const deadline = Date.now() + 30_000;
    while (!existsSync(join(s.calls, "working"))) {
      if (Date.now() > deadline) throw new Error("the stand-in never started working");
      await Bun.sleep(50);
    }
    proc.kill("SIGKILL");
    await proc.exited;
    const r = await runToEnd(s.p, ["--as-json"], s.env);
    expect(r.code).toBe(0);
    const rows = journalEvents(s.p, runIds(s.p)[1]!);
    expect(ofEvent(rows, "task_requeued")[0]!.get("reason")).toBe("agent_gone");
    const resumed = ofEvent(rows, "task_resumed");
    expect(resumed.length).toBe(1);
    expect(resumed[0]!.get("session_id")).toBe("s-123");
    expect(n(resumed[0]!.get("steps_done"))).toBe(1);
    expect(invocations(s).at(-1)!.argv.slice(0, 3)).toEqual(["-p", "--resume", "s-123"]);
  }, 90_000);

  test("a session the CLI cannot find falls back to a fresh attempt, the reason journaled", async () => {
    const s = setup();
    await runAndStop(s);
    const r = await runToEnd(s.p, ["--as-json"], { ...s.env, RESUME_GONE: "1", NEVER_STOP: "1" });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ outcome: "completed", tasks: { done: 1, failed: 0 } });
    const rows = journalEvents(s.p, runIds(s.p)[1]!);
    const fallback = ofEvent(rows, "task_resume_fallback");
    expect(fallback.length).toBe(1);
    expect(fallback[0]!.get("reason")).toBe("session_gone");
    expect(fallback[0]!.get("detail")).toContain("No conversation found with session ID: s-123");
    const calls = invocations(s);
    expect(calls.map((c) => c.argv.includes("--resume"))).toEqual([false, true, false]);
    const spawned = ofEvent(rows, "agent_spawned").map((x) => x.get("agent_id"));
    expect(new Set(spawned).size).toBe(2);
    const table = await bernstein(["replay", "latest"], { cwd: s.p.dir, env: { NO_COLOR: "1" } });
    expect(table.stdout).toContain("fresh: session_gone");
  }, 90_000);

  test("--fresh-agents (and resume_agents: false) redo the task from scratch, saying so", async () => {
    for (const how of ["flag", "config"] as const) {
      const s = setup(how === "config" ? "resume_agents: false" : "");
      await runAndStop(s);
      const r = await runToEnd(s.p, how === "flag" ? ["--fresh-agents"] : [], { ...s.env, NEVER_STOP: "1" });
      expect(r.code).toBe(0);
      const rows = journalEvents(s.p, runIds(s.p)[1]!);
      expect(ofEvent(rows, "task_resumed")).toEqual([]);
      expect(ofEvent(rows, "task_resume_fallback")[0]!.get("reason")).toBe("fresh_agents");
      const calls = invocations(s);
      expect(calls.length).toBe(2);
      expect(calls[1]!.argv).not.toContain("--resume");
      expect(calls[1]!.prompt).toStartWith("You are a auto agent");
    }
  }, 120_000);

  test("run --fresh forgets stopped sessions: the new run's tasks start fresh", async () => {
    const s = setup();
    await runAndStop(s);
    const r = await runToEnd(s.p, ["--fresh"], { ...s.env, NEVER_STOP: "1" });
    expect(r.code).toBe(0);
    const rows = journalEvents(s.p, runIds(s.p)[1]!);
    expect(ofEvent(rows, "task_resumed")).toEqual([]);
    expect(invocations(s)[1]!.argv).not.toContain("--resume");
  }, 90_000);
});

describe("adapters per role", () => {
  test("roles: each task role runs on its own adapter; replay shows the adapter per agent", async () => {
    const p = makeProject({ tasks: [{ id: "B1", role: "backend" }, { id: "Q1", role: "qa", model: "from-task" }, { id: "D1", role: "docs" }] });
    const yaml = readFileSync(join(p.dir, "bernstein.yaml"), "utf8");
    writeFileSync(
      join(p.dir, "bernstein.yaml"),
      yaml + `roles:\n  qa:\n    adapter: command\n    command: ["sh", "-c", "echo 'RESULT: qa by command'"]\n  docs:\n    model: docs-model\n`,
    );
    const r = await runToEnd(p, ["--as-json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ outcome: "completed", tasks: { done: 3 } });
    const rows = journalEvents(p, runIds(p)[0]!);
    const spawned = new Map(ofEvent(rows, "agent_spawned").map((x) => [x.get("task_ids")[0], x]));
    expect(spawned.get("B1")!.get("provider")).toBe("script");
    expect(spawned.get("Q1")!.get("provider")).toBe("command");
    expect(spawned.get("Q1")!.get("model")).toBe("from-task"); // the task's own model wins
    expect(spawned.get("D1")!.get("provider")).toBe("script");
    expect(spawned.get("D1")!.get("model")).toBe("docs-model"); // roles.docs.model
    const table = await bernstein(["replay", "latest"], { cwd: p.dir, env: { NO_COLOR: "1" } });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/agent_spawned .* adapter=script/);
    expect(table.stdout).toMatch(/agent_spawned .* adapter=command/);
  }, 60_000);

  test("a role's adapter that cannot run here is refused before anything starts", async () => {
    const p = makeProject({ tasks: [{ id: "B1" }] });
    const yaml = readFileSync(join(p.dir, "bernstein.yaml"), "utf8");
    writeFileSync(join(p.dir, "bernstein.yaml"), yaml + `roles:\n  qa:\n    adapter: claude\n    binary: /nonexistent/claude\n`);
    const r = await runToEnd(p, ["--as-json"]);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: "agent_cli_missing" });
    expect(existsSync(join(p.sddDir, "runs"))).toBe(false);
  }, 60_000);
});
