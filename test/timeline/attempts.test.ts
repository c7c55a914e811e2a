import { describe, expect, test } from "bun:test";
import { AttemptTracker, type Attempt } from "../../src/timeline/attempts.ts";
import { BUCKETS, Series } from "../../src/timeline/series.ts";
import { parse } from "../../src/pyjson/parse.ts";
import { parseRowBytes } from "../../src/pyjson/row.ts";
import type { PyObject } from "../../src/pyjson/types.ts";
import { mulberry32 } from "../../tools/fuzz/rng.ts";
import { referenceAttempts, type ReferenceEvent } from "../helpers/attempt-reference.ts";

/** An attempt's fields as emit hands it over (the tracker reuses the object after the call). */
function copyOf(a: Attempt): Attempt {
  const { agent, task, model, role, start, end, outcome, reason, closeIndex } = a;
  return { agent, task, model, role, start, end, outcome, signals: [...a.signals], reason, events: [...a.events], closeIndex };
}

/**
 * The attempts of `rows`; `asBytes`: each row read as a huge row is (its
 * lists and objects of 256 bytes or more kept as bytes, src/pyjson/row.ts).
 */
function track(rows: [number, string, Record<string, unknown>][], asBytes = false): Attempt[] {
  const out: Attempt[] = [];
  const t = new AttemptTracker((a) => out.push(copyOf(a)));
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

describe("AttemptTracker against the plain reference (test/helpers/attempt-reference.ts)", () => {
  const EVENTS = ["agent_spawned", "task_claimed", "task_claimed", "task_completed", "task_verification_failed", "task_retried", "task_failed", "task_requeued", "task_cancelled", "task_result_discarded", "agent_reaped", "agents_reaped", "tool_call"];

  /** The tracker's attempts, each copied as emit hands it over (the tracker reuses the object after the call). */
  function tracked(events: ReferenceEvent[], times: number[], end: number): { attempts: Attempt[]; count: number; untracked: number } {
    const attempts: Attempt[] = [];
    const t = new AttemptTracker((a) => attempts.push(copyOf(a)));
    events.forEach((e, i) => {
      const row: Record<string, unknown> = { event: e.event };
      if (e.agent !== undefined) row.agent_id = e.agent;
      if (e.task !== undefined) row.task_id = e.task;
      if (e.model !== undefined) row.model = e.model;
      if (e.role !== undefined) row.role = e.role;
      if (e.reason !== undefined) row.reason = e.reason;
      if (e.signals !== undefined) row.failed_signals = e.signals;
      if (e.agents !== undefined) row.agent_ids = e.agents;
      t.push(parse(JSON.stringify(row)) as PyObject, e.event, i, times[i]!);
    });
    t.finish(end);
    return { attempts, count: t.count, untracked: t.untracked };
  }

  test("random runs: the same attempts, in the same order, with every field", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const rand = mulberry32(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
      const agents = Array.from({ length: 1 + (seed % 7) }, (_, k) => `agent-${k}`);
      const tasks = Array.from({ length: 1 + (seed % 11) }, (_, k) => `T-${k}`);
      const events: ReferenceEvent[] = [];
      const times: number[] = [];
      // long enough that hundreds of attempts close (past the tracker's queue of closed ones, so it reuses them)
      for (let i = 0; i < 3000; i++) {
        const event = seed % 5 === 0 && i === 1500 ? "run_completed" : pick(EVENTS);
        const e: ReferenceEvent = { event };
        if (rand() < 0.93) e.agent = rand() < 0.05 ? "" : pick(agents);
        if (rand() < 0.93) e.task = pick(tasks);
        if (rand() < 0.5) e.model = pick(["", "m-big", "m-small"]);
        if (event === "agent_spawned") e.role = pick(["qa", "backend", ""]);
        if (rand() < 0.3) e.reason = pick(["", "stopped", "g: nope"]);
        if (event === "task_verification_failed") e.signals = [pick(["lint", "tests"]), "x"];
        if (event === "agents_reaped") e.agents = [pick(agents), pick(agents)];
        events.push(e);
        times.push(i * 10 + Math.floor(rand() * 5));
      }
      const want = referenceAttempts(events, times, 30_000);
      const got = tracked(events, times, 30_000);
      expect(got.count).toBe(want.count);
      expect(got.attempts.length).toBe(want.attempts.length);
      expect({ seed, attempts: got.attempts }).toEqual({ seed, attempts: want.attempts });
    }
  });

  test("claims past the bound of open attempts are counted, not tracked, and every tracked one closes", () => {
    const events: ReferenceEvent[] = [];
    for (let i = 0; i < 66_000; i++) events.push({ event: "task_claimed", agent: `a-${i % 700}`, task: `T-${i}` });
    events.push({ event: "agent_reaped", agent: "a-3" });
    for (let i = 0; i < 200; i++) events.push({ event: "task_claimed", agent: "a-new", task: `U-${i}` });
    const times = events.map((_, i) => i);
    const want = referenceAttempts(events, times, events.length);
    const got = tracked(events, times, events.length);
    expect(got.untracked).toBe(want.untracked);
    expect(got.untracked).toBeGreaterThan(0);
    expect(got.count).toBe(want.count);
    expect(got.attempts).toEqual(want.attempts);
  }, 60_000);
});
