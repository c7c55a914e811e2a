import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bernstein } from "../../helpers/cli.ts";
import { cleanupTemps, startLive, tempProject, type LiveServer } from "./procs.ts";

/**
 * `bernstein status` against a live `bernstein run --keep-alive`: a cost
 * nobody reported reads `unknown`, never `$0.00` (issue 31); --as-json keeps
 * `cost_usd` a number and says `cost_known`.
 */
const ENV = { BERNSTEIN_SERVER_URL: "", BERNSTEIN_AUTH_TOKEN: "", NO_COLOR: "1" };
const live: LiveServer[] = [];
afterAll(async () => {
  for (const s of live) await s.kill();
  cleanupTemps();
});

/** A project whose one task's agent prints `output` (its last line is what the run reads a cost from). */
async function liveRun(output: string): Promise<{ dir: string; s: LiveServer }> {
  const dir = tempProject("bern-status-cost-");
  writeFileSync(join(dir, "agent.sh"), `#!/bin/sh\ncat > /dev/null\necho '${output}'\n`);
  chmodSync(join(dir, "agent.sh"), 0o755);
  writeFileSync(join(dir, "bernstein.yaml"), "agent:\n  adapter: script\n  script: ./agent.sh\nmax_agents: 1\n");
  writeFileSync(join(dir, "plan.yaml"), "- id: T1\n  title: Task T1\n");
  const s = await startLive(dir, ["run", "plan.yaml", "--keep-alive", "--port", "0"], ENV);
  live.push(s);
  const deadline = Date.now() + 30_000;
  while ((await s.call("GET", "/tasks/T1")).json.status !== "done") {
    if (Date.now() > deadline) throw new Error("T1 never finished");
    await Bun.sleep(50);
  }
  return { dir, s };
}

describe("status: the run's cost", () => {
  test("an agent that reported no cost: `cost: unknown`, cost_known false", async () => {
    const { dir, s } = await liveRun("did it, no cost reported");
    const prose = await bernstein(["status"], { cwd: dir, env: ENV });
    expect(prose.code).toBe(0);
    expect(prose.stdout).toContain("cost: unknown");
    expect(prose.stdout).not.toContain("$0.00");
    const json = await bernstein(["status", "--as-json"], { cwd: dir, env: ENV });
    expect(JSON.parse(json.stdout).run).toMatchObject({ cost_usd: 0, cost_known: false });
    await s.kill();
  }, 60_000);

  test("an agent that reported its cost: `cost: $0.25`, cost_known true", async () => {
    const { dir, s } = await liveRun('{"result_summary": "did it", "cost_usd": 0.25}');
    const prose = await bernstein(["status"], { cwd: dir, env: ENV });
    expect(prose.stdout).toContain("cost: $0.25");
    const json = await bernstein(["status", "--as-json"], { cwd: dir, env: ENV });
    expect(JSON.parse(json.stdout).run).toMatchObject({ cost_usd: 0.25, cost_known: true });
    await s.kill();
  }, 60_000);
});
