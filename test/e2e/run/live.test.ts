/**
 * Live runs through the compiled binary, with a stand-in `claude` (agent.binary:
 * a shell script printing claude's stream-json) that stops after its first tool
 * result until the test creates a file: whatever the test sees before that is
 * seen while the agent runs, with no race and no timing assumption.
 *  - the step journal and the agent log hold the first tool call, and
 *    `status --watch --as-json` shows it, before the agent exits; the final
 *    step journal is the same as after a run read at the end (tool row, then
 *    the invocation row);
 *  - `replay latest --follow` prints every event as it is appended and ends
 *    with the run and its verdict; a tampered line appended mid-follow ends it
 *    with exit 1 and the divergent index; Ctrl-C ends it with the verdict so far;
 *  - a run killed with -9 leaves its agent's runtime folder; the next run removes it;
 *  - an agent killed with -9 after its live row: the reaper adds only the invocation (no second copy).
 * (test/e2e/agents/live-real-clis.test.ts does the first against the real CLIs.)
 */
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { binPath } from "../../helpers/cli.ts";
import { parse } from "../../../src/pyjson/parse.ts";
import { dumps } from "../../../src/pyjson/encode.ts";

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** claude's stream: init, one Write call and its result, then (once $GO exists) the result object. */
const FAKE_CLAUDE = `#!/bin/sh
cat > /dev/null
echo '{"type":"system","subtype":"init","session_id":"sess-live","model":"claude-fake"}'
echo '{"type":"assistant","message":{"id":"msg1","model":"claude-fake","usage":{"input_tokens":100,"output_tokens":20},"content":[{"type":"tool_use","id":"tu1","name":"Write","input":{"file_path":"live.txt","content":"hi"}}]}}'
echo hi > live.txt
echo '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"tu1","content":"written"}]}}'
while [ ! -e "$GO" ]; do sleep 0.05; done
echo '{"type":"result","result":"RESULT: wrote live.txt","is_error":false,"total_cost_usd":0.02,"usage":{"input_tokens":200,"output_tokens":40},"session_id":"sess-live"}'
`;

interface Project {
  dir: string;
  sdd: string;
  go: string;
}

function project(tasks: string[] = ["T1"]): Project {
  const dir = mkdtempSync(join(tmpdir(), "bern-live-"));
  made.push(dir);
  writeFileSync(join(dir, "claude.sh"), FAKE_CLAUDE);
  chmodSync(join(dir, "claude.sh"), 0o755);
  const go = join(dir, "go");
  writeFileSync(join(dir, "bernstein.yaml"), ["agent:", "  adapter: claude", "  binary: ./claude.sh", "  timeout_s: 120", "  env:", `    GO: ${JSON.stringify(go)}`, "max_retries: 0", ""].join("\n"));
  writeFileSync(join(dir, "plan.yaml"), tasks.map((t) => `- id: ${t}\n  title: "task ${t}"\n`).join(""));
  return { dir, sdd: join(dir, ".sdd"), go };
}

/** A process of the binary whose stdout is read line by line as it comes. */
function spawnBin(p: Project, args: string[]) {
  const proc = Bun.spawn([binPath(), ...args], { cwd: p.dir, env: { ...process.env, NO_COLOR: "1" }, stdout: "pipe", stderr: "pipe" });
  const lines: string[] = [];
  let waiter = null as (() => void) | null;
  const reading = (async () => {
    let buf = "";
    const dec = new TextDecoder();
    for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
      buf += dec.decode(chunk, { stream: true });
      let i: number;
      while ((i = buf.indexOf("\n")) >= 0) {
        lines.push(buf.slice(0, i));
        buf = buf.slice(i + 1);
      }
      waiter?.();
    }
    if (buf) lines.push(buf);
    waiter?.();
  })();
  const stderr = new Response(proc.stderr).text();
  return {
    proc,
    lines,
    /** Wait (generously) for a line matching `pred`. */
    async waitLine(pred: (l: string) => boolean, what: string, timeoutMs = 60000): Promise<string> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = lines.find(pred);
        if (hit !== undefined) return hit;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got:\n${lines.join("\n")}\nstderr: ${await Promise.race([stderr, Bun.sleep(10).then(() => "")])}`);
        await new Promise<void>((r) => {
          waiter = r;
          setTimeout(r, 100);
        });
      }
    },
    async finished(): Promise<{ code: number; stderr: string }> {
      const code = await proc.exited;
      await reading;
      return { code, stderr: await stderr };
    },
  };
}

async function waitFor<T>(fn: () => T | null | undefined | false, what: string, timeoutMs = 60000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

function onlyRun(p: Project): string {
  return readdirSync(join(p.sdd, "runs")).sort().at(-1)!;
}

function stepRows(p: Project, agent: string): Map<string, any>[] {
  const path = join(p.sdd, "runtime", "journal", agent, "000000.jsonl");
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => parse(l) as Map<string, any>);
}

function runningAgent(p: Project): string | null {
  try {
    const a = JSON.parse(readFileSync(join(p.sdd, "runtime", "agents.json"), "utf8")).agents;
    return a.length ? a[0].agent_id : null;
  } catch {
    return null;
  }
}

describe("live runs (compiled binary, a stand-in claude that waits for the test)", () => {
  test("the first tool call reaches the step journal, the agent log and status --watch --as-json before the agent exits", async () => {
    const p = project();
    const run = spawnBin(p, ["run", "plan.yaml", "--port", "0"]);
    const agent = await waitFor(() => runningAgent(p), "the agent to be spawned");
    const watch = spawnBin(p, ["status", "--watch", "--as-json"]);

    // status --watch: one JSON document per line; one of them shows the Write call with its result
    const seen = await watch.waitLine((l) => JSON.parse(l).agents?.[0]?.last_tool?.name === "Write", "status --watch to show the tool call");
    const doc = JSON.parse(seen);
    expect(doc).toMatchObject({ ok: true, running: true, run_id: onlyRun(p) });
    expect(doc.agents[0]).toMatchObject({
      agent_id: agent,
      task_id: "T1",
      task_title: "task T1",
      adapter: "claude",
      tool_calls: 1,
      last_tool: { name: "Write", status: "ok" },
      tokens: { input: 100, output: 20 },
      session_id: "sess-live",
    });
    expect(doc.agents[0].last_tool.input).toContain("live.txt");
    // the step journal holds the tool call (and nothing else yet); the log holds the stream so far
    const rows = await waitFor(() => (stepRows(p, agent).length > 0 ? stepRows(p, agent) : null), "the live step row");
    expect(rows.map((r) => r.get("tool_call").get("name"))).toEqual(["Write"]);
    expect(rows[0]!.get("tool_result").get("status")).toBe("ok");
    const log = readFileSync(join(p.sdd, "runtime", "logs", `${agent}.log`), "utf8");
    expect(log).toContain('"tool_result"');
    // every line so far is one document
    for (const l of watch.lines) expect(() => JSON.parse(l)).not.toThrow();
    // the agent is still running: it waits for the test
    expect(existsSync(p.go)).toBe(false);
    expect(run.proc.exitCode).toBeNull();

    writeFileSync(p.go, "");
    const r = await run.finished();
    expect(r.code).toBe(0);
    // status --watch ends with the run, its last document saying so
    const w = await watch.finished();
    expect(w.code).toBe(0);
    expect(JSON.parse(watch.lines.at(-1)!)).toMatchObject({ ok: true, running: false, agents: [] });
    // the step journal: the tool call once, then the invocation, in one chain
    const all = stepRows(p, agent);
    expect(all.map((x) => x.get("tool_call").get("name"))).toEqual(["Write", "claude"]);
    expect(all[1]!.get("prev_hash")).toBe(all[0]!.get("step_hash"));
    expect(all[1]!.get("tool_result").get("tool_calls").toNumber()).toBe(1);
    const verify = Bun.spawnSync([binPath(), "replay", agent, "--as-json"], { cwd: p.dir });
    expect(verify.exitCode).toBe(0);
    // the runtime folder went at reap
    expect(existsSync(join(p.sdd, "runtime", "agents", agent))).toBe(false);
  }, 120000);

  test("replay latest --follow prints each event as it is appended and ends with the run and its verdict", async () => {
    const p = project();
    const run = spawnBin(p, ["run", "plan.yaml", "--port", "0"]);
    await waitFor(() => runningAgent(p), "the agent to be spawned");
    const follow = spawnBin(p, ["replay", "latest", "--follow", "--as-json"]);
    // events up to the agent's claim are printed while the run is still going
    await follow.waitLine((l) => JSON.parse(l).event?.event === "task_claimed", "the task_claimed event");
    expect(follow.proc.exitCode).toBeNull();
    writeFileSync(p.go, "");
    expect((await run.finished()).code).toBe(0);
    const f = await follow.finished();
    expect(f.code).toBe(0);
    const docs = follow.lines.map((l) => JSON.parse(l));
    const verdict = docs.at(-1);
    const events = docs.slice(0, -1);
    const journal = readFileSync(join(p.sdd, "runs", onlyRun(p), "journal.jsonl"), "utf8").split("\n").filter(Boolean);
    // every event once, in order, as recorded; then the verdict over all of them
    expect(events.map((d) => d.index)).toEqual(journal.map((_, i) => i));
    expect(events.map((d) => d.event.event_hash)).toEqual(journal.map((l) => JSON.parse(l).event_hash));
    expect(events.at(-1).event.event).toBe("run_completed");
    expect(verdict).toMatchObject({ ok: true, ended: "run_completed", chain_consistent: true, count: journal.length, divergent_index: null, run_id: onlyRun(p) });
    expect(verdict.head).toBe(JSON.parse(journal.at(-1)!).event_hash);
  }, 120000);

  test("a tampered line appended mid-follow ends it with exit 1 and the divergent index", async () => {
    const p = project();
    const run = spawnBin(p, ["run", "plan.yaml", "--port", "0"]);
    await waitFor(() => runningAgent(p), "the agent to be spawned");
    const runId = onlyRun(p);
    const follow = spawnBin(p, ["replay", runId, "--follow", "--as-json"]);
    await follow.waitLine((l) => JSON.parse(l).event?.event === "task_claimed", "the task_claimed event");
    // The run is quiet while its agent waits: a copy of the last row with another payload goes on the end.
    const path = join(p.sdd, "runs", runId, "journal.jsonl");
    const lines = readFileSync(path, "utf8").split("\n").filter(Boolean);
    const forged = parse(lines.at(-1)!) as Map<string, any>;
    forged.set("event", "task_completed");
    appendFileSync(path, dumps(forged) + "\n");
    const f = await follow.finished();
    expect(f.code).toBe(1);
    const verdict = JSON.parse(follow.lines.at(-1)!);
    expect(verdict).toMatchObject({ ok: false, error: "chain_broken", ended: "diverged", chain_consistent: false, divergent_index: lines.length, divergent_line: lines.length + 1, count: lines.length + 1 });
    // the events before it were all printed, the forged one was not
    expect(follow.lines.slice(0, -1).map((l) => JSON.parse(l).index)).toEqual(lines.map((_, i) => i));
    run.proc.kill("SIGTERM");
    writeFileSync(p.go, "");
    await run.finished();
  }, 120000);

  test("Ctrl-C ends replay --follow with the verdict so far and status --watch at once", async () => {
    const p = project();
    const run = spawnBin(p, ["run", "plan.yaml", "--port", "0"]);
    await waitFor(() => runningAgent(p), "the agent to be spawned");
    const follow = spawnBin(p, ["replay", "latest", "--follow"]);
    const watch = spawnBin(p, ["status", "--watch"]);
    await follow.waitLine((l) => l.includes("task_claimed"), "the task_claimed event");
    await watch.waitLine((l) => l.includes("Write"), "the tool call on the watch screen");
    follow.proc.kill("SIGINT");
    watch.proc.kill("SIGTERM");
    const [f, w] = await Promise.all([follow.finished(), watch.finished()]);
    expect(f.code).toBe(0);
    expect(follow.lines.join("\n")).toMatch(/chain intact for \S+ \(\d+ events; interrupted\)/);
    expect(w.code).toBe(0);
    expect(run.proc.exitCode).toBeNull(); // both ended while the run still ran
    writeFileSync(p.go, "");
    expect((await run.finished()).code).toBe(0);
  }, 120000);

  test("a run killed with -9 leaves its agent's runtime folder; the next run removes it", async () => {
    const p = project();
    const run = spawnBin(p, ["run", "plan.yaml", "--port", "0"]);
    const agent = await waitFor(() => runningAgent(p), "the agent to be spawned");
    const folder = join(p.sdd, "runtime", "agents", agent);
    await waitFor(() => existsSync(join(folder, "live.json")) && JSON.parse(readFileSync(join(folder, "live.json"), "utf8")).tool_calls === 1, "the live state");
    run.proc.kill("SIGKILL");
    await run.finished();
    expect(readdirSync(folder).sort()).toEqual(["live.json", "prompt.txt", "stdout.jsonl"]);
    // a folder of an agent no agents.json ever named (a crash before it was written) goes too
    mkdirSync(join(p.sdd, "runtime", "agents", "stray-0000"));
    writeFileSync(p.go, "");
    const again = spawnBin(p, ["run", "plan.yaml", "--port", "0"]);
    const r = await again.finished();
    expect(r.code).toBe(0);
    expect(again.lines.join("\n") + r.stderr).toContain(`removed the runtime folders of 2 agent(s) no run owns: ${agent}, stray-0000`);
    expect(existsSync(folder)).toBe(false);
    expect(readdirSync(join(p.sdd, "runtime", "agents"))).toEqual([]);
  }, 120000);

  test("an agent killed with -9 mid-task: its tool call is in the step journal and its stream in the log; its folder goes at reap", async () => {
    const p = project();
    const run = spawnBin(p, ["run", "plan.yaml", "--port", "0"]);
    const agent = await waitFor(() => runningAgent(p), "the agent to be spawned");
    await waitFor(() => stepRows(p, agent).length === 1, "the live step row");
    const pid = JSON.parse(readFileSync(join(p.sdd, "runtime", "agents.json"), "utf8")).agents[0].pid as number;
    process.kill(-pid, "SIGKILL");
    const r = await run.finished();
    expect(r.code).toBe(1); // the task failed (max_retries: 0)
    const rows = stepRows(p, agent);
    expect(rows.map((x) => x.get("tool_call").get("name"))).toEqual(["Write", "claude"]);
    expect(rows[0]!.get("tool_result").get("status")).toBe("ok");
    expect(rows[1]!.get("tool_result").get("outcome")).toBe("failed");
    expect(readFileSync(join(p.sdd, "runtime", "logs", `${agent}.log`), "utf8")).toContain('"tool_use"');
    expect(existsSync(join(p.sdd, "runtime", "agents", agent))).toBe(false);
  }, 120000);
});
