/** `bernstein replay agents [RUN]`: the agent ids of a real run, with task, adapter, outcome and steps. */
import { afterAll, describe, expect, test } from "bun:test";
import { binPath } from "../../helpers/cli.ts";
import { cleanupProjects, makeProject, runIds, runToEnd, type Project } from "../run/fixture.ts";

afterAll(cleanupProjects);

function agentsCmd(p: Project, args: string[]) {
  const r = Bun.spawnSync([binPath(), "replay", "agents", ...args], { cwd: p.dir, env: { ...process.env, NO_COLOR: "1", COLUMNS: "200" }, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

describe("replay agents", () => {
  test("lists every attempt's agent with its task, adapter, outcome (with the reason) and step count", async () => {
    const p = makeProject({ tasks: [{ id: "BAD" }, { id: "OK" }], agentEnv: { FAIL_TASKS: "BAD" }, config: "max_retries: 1" });
    const run = await runToEnd(p, ["--as-json"]);
    expect(run.code).toBe(1);
    const runId = runIds(p)[0]!;

    const r = agentsCmd(p, [runId, "--as-json"]);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.run_id).toBe(runId);
    const byTask = (t: string) => doc.agents.filter((a: any) => a.task_ids.includes(t));
    expect(byTask("OK")).toHaveLength(1);
    expect(byTask("OK")[0]).toMatchObject({ adapter: "script", outcome: "done", reason: null });
    expect(byTask("OK")[0].steps).toBeGreaterThan(0);
    // Two attempts of BAD (max_retries 1), each its own agent, both failed with a reason.
    expect(byTask("BAD")).toHaveLength(2);
    for (const a of byTask("BAD")) {
      expect(a.outcome).toBe("failed");
      expect(typeof a.reason).toBe("string");
    }
    // Every id listed is one `replay <AGENT_ID>` takes.
    const view = Bun.spawnSync([binPath(), "replay", byTask("OK")[0].agent_id, "--as-json"], { cwd: p.dir, stdout: "pipe", stderr: "pipe" });
    expect(view.exitCode).toBe(0);

    // Prose: one line per agent under a header; `latest` is the default run.
    const prose = agentsCmd(p, []);
    expect(prose.code).toBe(0);
    expect(prose.stdout).toContain(`Agents of run ${runId}`);
    expect(prose.stdout).toMatch(/Agent ID\s+Task\s+Role\s+Adapter\s+Outcome\s+Steps/);
    for (const a of doc.agents) expect(prose.stdout).toContain(a.agent_id);
    expect(prose.stdout).toMatch(/failed: /);
  }, 60_000);

  test("a second word, or a run that does not exist, is refused", async () => {
    const p = makeProject({ tasks: [{ id: "T1" }] });
    expect((await runToEnd(p)).code).toBe(0);
    expect(agentsCmd(p, ["a", "b"]).code).toBe(2);
    const missing = agentsCmd(p, ["20990101-000000", "--as-json"]);
    expect(missing.code).toBe(3);
    expect(JSON.parse(missing.stdout)).toMatchObject({ ok: false, error: "run_not_found" });
  }, 60_000);
});
