/**
 * Costs that add up and do not mislead (issue 31): each task_completed
 * carries its attempt's own cost (task_cost_usd) beside upstream's
 * run-cumulative cost_usd, run_completed carries the run's total, and a
 * cost nobody reported reads `unknown`, never `$0.0000`.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { bernstein } from "../../helpers/cli.ts";
import { PyNum } from "../../../src/pyjson/types.ts";
import { cleanupProjects, journalEvents, makeProject, runIds, runToEnd } from "./fixture.ts";

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

    // --as-json keeps cost_usd a number and says beside it that the cost is not known
    const p2 = makeProject({ tasks: [{ id: "M" }], agentEnv: { AGENT_COST: "null" } });
    const j = await runToEnd(p2, ["--as-json"]);
    expect(j.code).toBe(0);
    expect(JSON.parse(j.stdout)).toMatchObject({ ok: true, cost_usd: 0, cost_known: false });
  });
});
