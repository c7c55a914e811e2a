import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runPython } from "../helpers/python.ts";
import { notifyTask, readTaskNotifications, taskNotificationsPath } from "../../src/session/task-notifications.ts";
import { countYamlTickets, localIsoSeconds, stopFallbackPath, writeStopFallback } from "../../src/session/stop-fallback.ts";
import { PyNum } from "../../src/pyjson/index.ts";

const dir = mkdtempSync(join(tmpdir(), "bernstein-runtime-records-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshSdd = () => join(dir, `sdd${n++}`);

// Reference bytes from Python's json module, all in one process.
const PY = `import json, sys
jobs = json.load(sys.stdin)
out = {}
# jsonl rows: json.dumps(row) + "\\n"
t = dict(jobs["notif"]); t["ts"] = float(t["ts"])
out["notif"] = json.dumps(t) + "\\n"
out["fallback"] = json.dumps(jobs["fallback"], indent=2)
print(json.dumps(out))`;

const notifRow = { task_id: "T-1", session_id: "S-1", status: "completed", summary: "did it ✓", result: "ok", usage: { tokens: 12, cost_usd: 0.01 }, ts: 1747000002 };
const fallbackIn = { stopped_at: "2026-05-01T12:34:56", open_tasks: 2, claimed_tasks: 1 };
const py = runPython(PY, { notif: notifRow, fallback: fallbackIn }) as Record<string, string>;

describe("task notifications", () => {
  test("row bytes equal Python's; unknown status reads back as failed; task filter", () => {
    const sdd = freshSdd();
    notifyTask(sdd, notifRow as never);
    expect(readFileSync(taskNotificationsPath(sdd), "utf8")).toBe(py.notif!);
    appendFileSync(taskNotificationsPath(sdd), '{"task_id": "T-2", "session_id": "S", "status": "exploded", "ts": 9.0}\n\nnot json\n');
    const r = readTaskNotifications(sdd);
    expect(r.rows).toHaveLength(2);
    expect(r.rows[0]).toEqual(notifRow as never);
    expect(r.rows[1]!.status).toBe("failed");
    expect(r.skipped).toBe(1);
    expect(readTaskNotifications(sdd, "T-2").rows.map((x) => x.task_id)).toEqual(["T-2"]);
  });

  test("rotation at a small injected threshold", () => {
    const sdd = freshSdd();
    for (let i = 0; i < 5; i++) notifyTask(sdd, { task_id: `T${i}`, session_id: "S", status: "killed", ts: i }, { rotateBytes: 200 });
    expect(existsSync(`${taskNotificationsPath(sdd)}.1`)).toBe(true);
    const live = readTaskNotifications(sdd).rows.map((x) => x.task_id);
    const backup = readFileSync(`${taskNotificationsPath(sdd)}.1`, "utf8").trim().split("\n").length;
    expect(live.length + backup).toBeLessThanOrEqual(5);
    expect(live.at(-1)).toBe("T4");
  });
});

describe("stop fallback (session_state.json)", () => {
  test("counts *.yaml tickets in backlog/open and backlog/claimed; bytes equal Python's", () => {
    const sdd = freshSdd();
    mkdirSync(join(sdd, "backlog", "open"), { recursive: true });
    mkdirSync(join(sdd, "backlog", "claimed"), { recursive: true });
    for (const f of ["1-a.yaml", "2-b.yaml", "3-c.md"]) writeFileSync(join(sdd, "backlog", "open", f), "x");
    writeFileSync(join(sdd, "backlog", "claimed", "4-d.yaml"), "x");
    const when = new Date(2026, 4, 1, 12, 34, 56);
    const { path, state } = writeStopFallback(sdd, when);
    expect(path).toBe(stopFallbackPath(sdd));
    expect(state).toEqual(fallbackIn);
    expect(readFileSync(path, "utf8")).toBe(py.fallback!);
  });

  test("zero counts when the backlog dirs are missing", () => {
    const sdd = freshSdd();
    expect(writeStopFallback(sdd).state).toMatchObject({ open_tasks: 0, claimed_tasks: 0 });
    expect(countYamlTickets(join(sdd, "nowhere"))).toBe(0);
  });

  test("local time has Python's %Y-%m-%dT%H:%M:%S shape", () => {
    expect(localIsoSeconds(new Date(2026, 0, 2, 3, 4, 5))).toBe("2026-01-02T03:04:05");
  });
});
