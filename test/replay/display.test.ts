import { describe, expect, test } from "bun:test";
import { parse } from "../../src/pyjson/parse.ts";
import type { PyObject } from "../../src/pyjson/types.ts";
import { detailText, displayRow, eventStyle, taskText, timeText, truthy } from "../../src/replay/display.ts";

const row = (text: string) => parse(text) as PyObject;

describe("replay display model", () => {
  test("agent ids are shown whole (an id copied from the table must work)", () => {
    expect(displayRow(row('{"event": "agent_spawned", "agent_id": "backend-1234567890abcdef"}'), null).agent).toBe("backend-1234567890abcdef");
  });

  test("TASK is task_id, else the first two task_ids", () => {
    expect(taskText(row('{"task_id": "T-1", "task_ids": ["x"]}'))).toBe("T-1");
    expect(taskText(row('{"task_ids": ["A", "B", "C"]}'))).toBe("A, B");
    expect(taskText(row('{"task_id": "", "task_ids": []}'))).toBe("");
  });

  test("DETAIL lists truthy fields in the fixed order, joined by two spaces", () => {
    const r = row(
      '{"event": "run_completed", "model": "opus", "role": "qa", "cost_usd": 0.03125, "run_id": "R1", "max_agents": 4, "ticks": 9, "fingerprint": "abcdef0123456789", "failed_signals": ["lint", "tests", "types", "docs"], "tick": 3}',
    );
    expect(detailText(r, "run_completed")).toBe(
      "opus  qa  $0.0312  id=R1  max_agents=4  ticks=9  fp=abcdef012345  failed: lint, tests, types  tick #3",
    );
    // run_id only for run_started/run_completed; fingerprint only for run_completed; falsy values skipped
    const t = row('{"event": "tick", "run_id": "R1", "fingerprint": "ff", "tick": 0, "cost_usd": 0.0, "model": null}');
    expect(detailText(t, "tick")).toBe("");
  });

  test("DETAIL shows the reason (clipped) and failure_class of agent_failed, task_failed and task_requeued only", () => {
    expect(detailText(row('{"event": "agent_failed", "reason": "printed no result", "failure_class": "auth"}'), "agent_failed")).toBe("printed no result  class=auth");
    expect(detailText(row('{"event": "task_failed", "reason": "agent_exit_1: boom", "cost_usd": 0.5}'), "task_failed")).toBe("$0.5000  agent_exit_1: boom");
    expect(detailText(row('{"event": "task_requeued", "reason": "stopped", "failure_class": ""}'), "task_requeued")).toBe("stopped");
    expect(detailText(row('{"event": "task_retried", "reason": "x", "failure_class": "rate_limit"}'), "task_retried")).toBe("");
    const long = detailText(row(`{"event": "task_failed", "reason": "${"y".repeat(500)}"}`), "task_failed");
    expect(long).toBe("y".repeat(159) + "…");
  });

  test("run_completed says when its cost is not all known", () => {
    expect(detailText(row('{"cost_usd": 0.0, "cost_known": false}'), "run_completed")).toBe("cost unknown");
    expect(detailText(row('{"cost_usd": 0.03, "cost_known": false}'), "run_completed")).toBe("$0.0300  + unknown");
    expect(detailText(row('{"cost_usd": 0.03, "cost_known": true}'), "run_completed")).toBe("$0.0300");
    expect(detailText(row('{"cost_usd": 0.0, "cost_known": false}'), "task_completed")).toBe("");
  });

  test("TIME is the offset from run_started, falling back to elapsed_s", () => {
    expect(timeText(row('{"ts": 1000.9, "elapsed_s": 50}'), 1000.5)).toBe("0:00");
    expect(timeText(row('{"ts": 1125.0}'), 1000)).toBe("2:05");
    expect(timeText(row('{"elapsed_s": 61.9}'), 1000)).toBe("1:01");
    expect(timeText(row('{"ts": "bogus", "elapsed_s": 3}'), 1000)).toBe("0:03");
  });

  test("event colours follow the event type", () => {
    expect(eventStyle("run_started")).toContain("green");
    expect(eventStyle("task_completed")).toContain("green");
    expect(eventStyle("agent_reaped")).toContain("red");
    expect(eventStyle("task_verification_failed")).toContain("red");
    expect(eventStyle("agent_spawned")).toContain("cyan");
    expect(eventStyle("task_claimed")).toContain("yellow");
    expect(eventStyle("task_retried")).toContain("yellow");
    expect(eventStyle("hazard")).toBe("");
  });

  test("a row without event shows '?' and non-string values as JSON, never Python reprs", () => {
    const d = displayRow(row('{"agent_id": 7, "task_id": true, "model": {"a": null, "b": [1.0, false]}, "role": "x"}'), null);
    expect(d.event).toBe("?");
    expect(d.agent).toBe("7");
    expect(d.task).toBe("true");
    expect(d.detail).toBe('{"a": null, "b": [1.0, false]}  x');
    expect(displayRow(row('{"event": null, "task_ids": [null, 2]}'), null)).toMatchObject({ event: "null", task: "null, 2" });
  });

  test("Python truthiness", () => {
    expect([null, false, "", [], new Map()].map((v) => truthy(v as never))).toEqual([false, false, false, false, false]);
    expect(truthy(row('{"x": NaN}').get("x"))).toBe(true);
    expect(truthy(row('{"x": -0.0}').get("x"))).toBe(false);
  });
});
