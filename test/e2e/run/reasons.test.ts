/**
 * A failure's reason is on its row of `replay <RUN>`: agent_failed and
 * task_failed show why (issue 31), on a real run whose agent exits 1.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { bernstein } from "../../helpers/cli.ts";
import { cleanupProjects, journalEvents, makeProject, runIds, runToEnd } from "./fixture.ts";

afterAll(cleanupProjects);

describe("replay <RUN>: failure reasons in DETAIL", () => {
  test("agent_failed and task_failed rows show the payload's reason", async () => {
    const p = makeProject({ tasks: [{ id: "BAD" }, { id: "OK" }], agentEnv: { FAIL_TASKS: "BAD" }, config: "max_retries: 0" });
    const r = await runToEnd(p);
    expect(r.code).toBe(1);
    const run = runIds(p)[0]!;
    const rows = journalEvents(p, run);
    const failed = rows.find((x) => x.get("event") === "task_failed")!;
    const reason = String(failed.get("reason"));
    expect(reason).toContain("exit_code:1");
    const agentReason = String(rows.find((x) => x.get("event") === "agent_failed")!.get("reason"));
    expect(agentReason.length).toBeGreaterThan(0);

    const shown = await bernstein(["replay", run], { cwd: p.dir, env: { COLUMNS: "400" } });
    expect(shown.code).toBe(0);
    const lines = shown.stdout.split("\n");
    const taskFailed = lines.find((l) => /\btask_failed\b/.test(l) && l.includes(" BAD"));
    expect(taskFailed).toBeDefined();
    expect(taskFailed!).toContain(reason.split("\n")[0]!.slice(0, 40));
    const agentFailed = lines.find((l) => /\bagent_failed\b/.test(l));
    expect(agentFailed).toBeDefined();
    expect(agentFailed!).toContain(agentReason.slice(0, 40));

    // the HTML timeline's event list shows the same DETAIL
    const html = await bernstein(["replay", run, "--html", "-"], { cwd: p.dir });
    expect(html.code).toBe(0);
    const data = /<script type="application\/json" class="tl-data" data-kind="events">(.*?)<\/script>/s.exec(html.stdout);
    expect(data).not.toBeNull();
    const events = JSON.parse(data![1]!) as unknown[][];
    const detailOf = (event: string) => events.find((e) => e[2] === event && e[4] === "BAD")?.[5];
    expect(detailOf("task_failed")).toContain(reason.slice(0, 40));
    expect(detailOf("agent_failed")).toContain(agentReason.slice(0, 40));
  });
});
