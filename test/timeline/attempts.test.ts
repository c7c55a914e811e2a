import { describe, expect, test } from "bun:test";
import { AttemptTracker, type Attempt } from "../../src/timeline/attempts.ts";
import { BUCKETS, Series } from "../../src/timeline/series.ts";
import { parse } from "../../src/pyjson/parse.ts";
import { parseRowBytes } from "../../src/pyjson/row.ts";
import type { PyObject } from "../../src/pyjson/types.ts";

/**
 * The attempts of `rows`; `asBytes`: each row read as a huge row is (its
 * lists and objects of 256 bytes or more kept as bytes, src/pyjson/row.ts).
 */
function track(rows: [number, string, Record<string, unknown>][], asBytes = false): Attempt[] {
  const out: Attempt[] = [];
  const t = new AttemptTracker((a) => out.push(a));
  const read = (text: string) => (asBytes ? parseRowBytes(new TextEncoder().encode(text), 0) : parse(text)) as PyObject;
  rows.forEach(([ms, event, payload], i) => t.push(read(JSON.stringify({ event, ...payload })), event, i, ms));
  t.finish(rows.at(-1)?.[0] ?? 0);
  return out;
}

describe("AttemptTracker", () => {
  test("claim to reap, outcome from the events between, in the orchestrator's order", () => {
    const a = track([
      [0, "agent_spawned", { agent_id: "A1", role: "qa", model: "m-big", task_ids: ["T1"] }],
      [1, "task_claimed", { task_id: "T1", agent_id: "A1", model: null }],
      [50, "task_verification_failed", { task_id: "T1", failed_signals: ["output-written", "lint"] }],
      [51, "task_retried", { task_id: "T1" }],
      [52, "agent_reaped", { agent_id: "A1" }],
      [60, "task_claimed", { task_id: "T1", agent_id: "A2", model: "m" }],
      [90, "task_completed", { task_id: "T1", agent_id: "A2", cost_usd: 0.5 }],
      [91, "agent_reaped", { agent_id: "A2" }],
      [95, "task_claimed", { task_id: "T2", agent_id: "A3", model: "m" }],
      [96, "task_verification_failed", { task_id: "T2", failed_signals: ["g"] }],
      [97, "task_failed", { task_id: "T2", agent_id: "A3", reason: "g: nope" }],
      [98, "agent_reaped", { agent_id: "A3" }],
      [99, "task_claimed", { task_id: "T3", agent_id: "A4", model: "m" }],
      [100, "task_requeued", { task_id: "T3", agent_id: "A4", reason: "stopped" }],
      [101, "agent_reaped", { agent_id: "A4" }],
      [102, "task_claimed", { task_id: "T4", agent_id: "A5", model: "m" }],
    ]);
    expect(a.map((x) => [x.agent, x.task, x.start, x.end, x.outcome])).toEqual([
      ["A1", "T1", 1, 52, "retried"],
      ["A2", "T1", 60, 91, "done"],
      ["A3", "T2", 95, 98, "failed"],
      ["A4", "T3", 99, 101, "cancelled"],
      ["A5", "T4", 102, 102, "unfinished"],
    ]);
    expect(a[0]!.model).toBe("m-big"); // from agent_spawned when the claim names none
    expect(a[0]!.role).toBe("qa");
    expect(a[0]!.signals).toEqual(["output-written", "lint"]);
    expect(a[0]!.events).toEqual([1, 2, 3, 4]);
    expect(a[2]!.reason).toBe("g: nope");
    expect(a[3]!.reason).toBe("stopped");
  });

  test("a retry recorded after the reap still reaches its attempt; run_completed closes what is open", () => {
    const a = track([
      [0, "task_claimed", { task_id: "T", agent_id: "A", model: "m" }],
      [5, "task_verification_failed", { task_id: "T", failed_signals: ["x"] }],
      [6, "agent_reaped", { agent_id: "A" }],
      [7, "task_retried", { task_id: "T" }],
      [8, "task_claimed", { task_id: "U", agent_id: "B", model: "m" }],
      [9, "run_completed", { outcome: "stopped" }],
    ]);
    expect(a.map((x) => [x.task, x.outcome, x.end])).toEqual([
      ["T", "retried", 6],
      ["U", "unfinished", 9],
    ]);
  });
});

describe("AttemptTracker reaps by agent", () => {
  test("a reap closes exactly its agent's open attempts, in the order they opened; a re-claim moves an attempt to the end", () => {
    const a = track([
      [0, "task_claimed", { task_id: "T1", agent_id: "A", model: "m" }],
      [1, "task_claimed", { task_id: "T2", agent_id: "B", model: "m" }],
      [2, "task_claimed", { task_id: "T3", agent_id: "A", model: "m" }],
      [3, "task_claimed", { task_id: "T4", agent_id: "A", model: "m" }],
      // the same agent and task again: the first attempt closes, the new one opens last
      [4, "task_claimed", { task_id: "T1", agent_id: "A", model: "m" }],
      [5, "task_completed", { task_id: "T3", agent_id: "A" }],
      [6, "agent_reaped", { agent_id: "A" }],
      [7, "agent_reaped", { agent_id: "nobody" }],
      [8, "task_claimed", { task_id: "T5", agent_id: "A", model: "m" }],
      [9, "agents_reaped", { agent_ids: ["B", "A"] }],
    ]);
    expect(a.map((x) => [x.agent, x.task, x.start, x.end, x.outcome, x.closeIndex])).toEqual([
      ["A", "T1", 0, 4, "unfinished", 4],
      ["A", "T3", 2, 6, "done", 6],
      ["A", "T4", 3, 6, "unknown", 6],
      ["A", "T1", 4, 6, "unknown", 6],
      ["B", "T2", 1, 9, "unknown", 9],
      ["A", "T5", 8, 9, "unknown", 9],
    ]);
  });
});

describe("AttemptTracker on a huge row's members", () => {
  test("a list still bytes is read as the list: agents_reaped reaps each agent, failed_signals keeps each signal", () => {
    const rows: [number, string, Record<string, unknown>][] = [
      [0, "task_claimed", { task_id: "T1", agent_id: "A", model: "m" }],
      [1, "task_claimed", { task_id: "T2", agent_id: "B", model: "m" }],
      [2, "task_verification_failed", { task_id: "T1", agent_id: "A", failed_signals: ["lint", "tests"] }],
      [3, "agents_reaped", { agent_ids: ["B", "A"] }],
    ];
    const shown = (a: Attempt[]) => a.map((x) => [x.agent, x.task, x.end, x.outcome, x.signals]);
    const want = [
      ["B", "T2", 3, "unknown", []],
      ["A", "T1", 3, "failed", ["lint", "tests"]],
    ];
    expect(shown(track(rows))).toEqual(want);
    expect(shown(track(rows, true))).toEqual(want);
  });
});

describe("Series", () => {
  test("fixed buckets over any span; cumulative cost carried forward", () => {
    const s = new Series();
    s.add(0, true, null, 10);
    s.add(500, false, 0.5, 0);
    s.add(3_600_000, true, 1.25, 5);
    const j = s.toJson();
    expect(j.events.length).toBeLessThanOrEqual(BUCKETS);
    expect(j.bucket_ms * BUCKETS).toBeGreaterThan(3_600_000);
    expect(j.events.reduce((x, y) => x + y, 0)).toBe(3);
    expect(j.ticks.reduce((x, y) => x + y, 0)).toBe(2);
    expect(j.tokens.reduce((x, y) => x + y, 0)).toBe(15);
    expect(j.cost[0]).toBe(0.5);
    expect(j.cost.at(-1)).toBe(1.25);
    expect(j.cost.every((c, i) => i === 0 || (c ?? 0) >= (j.cost[i - 1] ?? 0))).toBe(true);
  });
});
