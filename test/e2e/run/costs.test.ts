/**
 * Costs that add up and do not mislead (issue 31): each task_completed
 * carries its attempt's own cost (task_cost_usd) beside upstream's
 * run-cumulative cost_usd, run_completed carries the run's total, and a
 * cost nobody reported reads `unknown`, never `$0.0000`.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bernstein } from "../../helpers/cli.ts";
import { PyNum } from "../../../src/pyjson/types.ts";
import { cleanupProjects, journalEvents, makeProject, runIds, runToEnd, spawnRun, waitFor } from "./fixture.ts";

afterAll(cleanupProjects);

const num = (v: unknown): number => (v as PyNum).toNumber();

describe("run costs", () => {
  test("per-task cost in task_completed; the tasks' costs sum to run_completed's total and the summary's", async () => {
    const p = makeProject({ tasks: [{ id: "A" }, { id: "B" }, { id: "C", depends_on: ["A"] }], agentEnv: { AGENT_COST: "0.125" } });
    const r = await runToEnd(p, ["--as-json"]);
    expect(r.code).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s).toMatchObject({ ok: true, cost_usd: 0.375, cost_known: true });
    const rows = journalEvents(p, runIds(p)[0]!);
    const completed = rows.filter((x) => x.get("event") === "task_completed");
    expect(completed).toHaveLength(3);
    expect(completed.map((x) => num(x.get("task_cost_usd")))).toEqual([0.125, 0.125, 0.125]);
    expect(completed.map((x) => x.get("cost_source"))).toEqual(["cli", "cli", "cli"]);
    // upstream's cost_usd stays the running total
    expect(completed.map((x) => num(x.get("cost_usd")))).toEqual([0.125, 0.25, 0.375]);
    const end = rows.at(-1)!;
    expect(end.get("event")).toBe("run_completed");
    const sum = completed.reduce((a, x) => a + num(x.get("task_cost_usd")), 0);
    expect(num(end.get("cost_usd"))).toBeCloseTo(sum, 10);
    expect((end.get("cost_usd") as PyNum).isFloat).toBe(true);
    expect(end.get("cost_known")).toBe(true);
  });

  test("an agent that reports no cost: `unknown` in the summary and replay, null / cost_known false in JSON", async () => {
    const p = makeProject({ tasks: [{ id: "N" }], agentEnv: { AGENT_COST: "null" } });
    const prose = await runToEnd(p);
    expect(prose.code).toBe(0);
    expect(prose.stdout + prose.stderr).toContain("cost unknown;");
    expect(prose.stdout + prose.stderr).not.toContain("$0.0000");
    const run = runIds(p)[0]!;
    const rows = journalEvents(p, run);
    const done = rows.find((x) => x.get("event") === "task_completed")!;
    expect(done.get("task_cost_usd")).toBeNull();
    expect(done.get("cost_source")).toBe("unknown");
    const end = rows.at(-1)!;
    expect(end.get("cost_known")).toBe(false);
    expect(num(end.get("cost_usd"))).toBe(0);

    const shown = await bernstein(["replay", run], { cwd: p.dir, env: { COLUMNS: "300" } });
    expect(shown.code).toBe(0);
    expect(shown.stdout.split("\n").find((l) => /\brun_completed\b/.test(l))).toContain("cost unknown");
    // the HTML timeline's summary says so too (its page then reads "unknown", not "$0.0000 in total")
    const html = await bernstein(["replay", run, "--html", "-"], { cwd: p.dir });
    expect(html.code).toBe(0);
    const summary = JSON.parse(/<script type="application\/json" class="tl-data" data-kind="summary">([^<]*)<\/script>/.exec(html.stdout)![1]!);
    expect(summary).toMatchObject({ cost_usd: 0, cost_known: false });

    // --as-json keeps cost_usd a number and says beside it that the cost is not known
    const p2 = makeProject({ tasks: [{ id: "M" }], agentEnv: { AGENT_COST: "null" } });
    const j = await runToEnd(p2, ["--as-json"]);
    expect(j.code).toBe(0);
    expect(JSON.parse(j.stdout)).toMatchObject({ ok: true, cost_usd: 0, cost_known: false });
  });

  test("a claude attempt stopped before its result keeps the tokens its messages reported (agent_usage)", async () => {
    const p = makeProject({ tasks: [{ id: "K1" }] });
    const bin = join(p.dir, "bin");
    mkdirSync(bin);
    const mark = join(p.dir, "working");
    const assistant = JSON.stringify({ type: "assistant", session_id: "s1", message: { id: "m1", usage: { input_tokens: 40, cache_read_input_tokens: 0, output_tokens: 12 }, content: [{ type: "text", text: "working" }] } });
    writeFileSync(
      join(bin, "claude"),
      `#!/bin/sh\ncat > /dev/null\nprintf '%s\\n' '{"type":"system","subtype":"init","session_id":"s1"}' '${assistant}'\ntouch "${mark}"\nexec sleep 30\n`,
    );
    chmodSync(join(bin, "claude"), 0o755);
    writeFileSync(join(p.dir, "bernstein.yaml"), "agent:\n  adapter: claude\n");
    const proc = spawnRun(p, ["--as-json"], { PATH: `${bin}:${process.env.PATH}` });
    await waitFor(() => existsSync(mark) && existsSync(join(p.sddDir, "runtime", "server.json")), 20000, "the agent to report a message");
    const info = JSON.parse(readFileSync(join(p.sddDir, "runtime", "server.json"), "utf8")) as { url: string; token: string };
    const res = await fetch(`${info.url}/stop`, { method: "POST", headers: { authorization: `Bearer ${info.token}` }, body: JSON.stringify({ force: true }) });
    expect(res.status).toBe(202);
    await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    const rows = journalEvents(p, runIds(p)[0]!);
    expect(rows.find((x) => x.get("event") === "task_requeued")!.get("reason")).toBe("stopped");
    const usage = rows.find((x) => x.get("event") === "agent_usage")!;
    expect(num(usage.get("input_tokens"))).toBe(40);
    expect(num(usage.get("output_tokens"))).toBe(12);
    expect(usage.get("session_id")).toBe("s1");
  }, 60_000);
});
