/** A run leaves one task notification per finished attempt (.sdd/runtime/task_notifications.jsonl, upstream's layout). */
import { afterAll, expect, test } from "bun:test";
import { readTaskNotifications, taskNotificationsPath } from "../../../src/session/task-notifications.ts";
import { cleanupProjects, makeProject, runIds, runToEnd } from "./fixture.ts";
import { readFileSync } from "node:fs";

afterAll(cleanupProjects);

test("completed and failed attempts are notified with the run id, summary, failed signals and usage", async () => {
  const p = makeProject({ tasks: [{ id: "OK" }, { id: "BAD" }], agentEnv: { FAIL_TASKS: "BAD", AGENT_COST: "0.25" }, config: "max_retries: 0" });
  expect((await runToEnd(p)).code).toBe(1);
  const runId = runIds(p)[0]!;
  const { rows } = readTaskNotifications(p.sddDir);
  const ok = rows.filter((r) => r.task_id === "OK");
  const bad = rows.filter((r) => r.task_id === "BAD");
  expect(ok).toHaveLength(1);
  expect(ok[0]).toMatchObject({ session_id: runId, status: "completed", result: "" });
  expect(ok[0]!.summary).toContain("did OK");
  expect(ok[0]!.usage).toMatchObject({ cost_usd: 0.25 });
  expect(bad).toHaveLength(1);
  expect(bad[0]).toMatchObject({ session_id: runId, status: "failed" });
  expect(bad[0]!.result).toContain("exit_code:1");
  // Python's json.dumps layout: default separators, one object per line.
  const first = readFileSync(taskNotificationsPath(p.sddDir), "utf8").split("\n")[0]!;
  expect(first).toStartWith('{"task_id": ');
}, 60_000);
