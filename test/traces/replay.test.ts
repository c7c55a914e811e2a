import { describe, expect, test } from "bun:test";
import { parse } from "../../src/pyjson/index.ts";
import { decodeTrace, type LoadedTrace } from "../../src/traces/reader.ts";
import { buildReplayRequest, prepareReplay, pySplitlines, resultSummaryDiff, runReplay, TraceWithoutSnapshotError, type ReplayRequest } from "../../src/traces/replay.ts";
import { runPython } from "../helpers/python.ts";

function loaded(json: string): LoadedTrace {
  const t = decodeTrace(parse(json), "test");
  if (typeof t === "string") throw new Error(t);
  return t;
}

const TRACE = `{"trace_id": "abc", "session_id": "S", "task_ids": ["T-1"], "agent_role": "backend", "model": "sonnet", "effort": "high",
  "spawn_ts": 1.0, "steps": [], "task_snapshots": [{"id": "T-1", "title": "Fix login flow", "description": "Make login work.  \\n\\n",
  "role": "qa", "priority": 1.0, "scope": "small", "complexity": null, "model": null, "effort": null, "result_summary": "line one\\nline two"}]}`;

describe("replay request", () => {
  test("title, hint appended after rstrip, snapshot fields with Python coercions", () => {
    const req = buildReplayRequest(loaded(TRACE), "T-1", { model: "opus", extraContext: "Try the cache" });
    expect(req).toEqual({
      title: "[replay] Fix login flow",
      description: "Make login work.\n\nReplay hint:\nTry the cache",
      role: "qa",
      priority: 1,
      scope: "small",
      complexity: "medium",
      model: "opus",
      effort: "high",
    } satisfies ReplayRequest);
  });

  test("null snapshot model/effort fall back to the trace's, never the string 'None'", () => {
    const req = buildReplayRequest(loaded(TRACE), "T-1");
    expect(req.model).toBe("sonnet");
    expect(req.effort).toBe("high");
    expect(req.description).toBe("Make login work.  \n\n");
    const bare = buildReplayRequest(loaded(`{"trace_id": "x", "session_id": "S", "task_ids": ["T-2"], "task_snapshots": [{"id": "T-2"}]}`), "T-2");
    expect(bare).toEqual({ title: "[replay] T-2", description: "", role: "auto", priority: 2, scope: "medium", complexity: "medium" });
    expect(JSON.stringify(bare)).not.toContain("None");
  });

  test("a trace without snapshots cannot be replayed", () => {
    expect(() => buildReplayRequest(loaded(`{"trace_id": "x", "session_id": "S"}`), "T-1")).toThrow(TraceWithoutSnapshotError);
  });
});

describe("result-summary diff vs Python difflib.unified_diff", () => {
  const cases: [string, string][] = [
    ["line one\nline two", "line one\nline three"],
    ["a", "b"],
    ["", "x"],
    ["x", ""],
    ["same\nlines", "same\nlines\n"],
    ["1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12", "1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\neleven\n12"],
    ["a\r\nb\rc\u2028d", "a\nb\nc\nD"],
    ["model=sonnet\nok", "model=opus\nok"],
  ];
  const expected = runPython(
    `import json, sys, difflib
cases = json.load(sys.stdin)
print(json.dumps(["\\n".join(difflib.unified_diff(a.splitlines(), b.splitlines(), fromfile="original", tofile="replay", lineterm="")) for a, b in cases]))`,
    cases,
  ) as string[];

  test("spec examples", () => {
    expect(resultSummaryDiff("line one\nline two", "line one\nline three")).toBe("--- original\n+++ replay\n@@ -1,2 +1,2 @@\n line one\n-line two\n+line three");
    expect(resultSummaryDiff("a", "b")).toBe("--- original\n+++ replay\n@@ -1 +1 @@\n-a\n+b");
    expect(resultSummaryDiff("", "x")).toBe("--- original\n+++ replay\n@@ -0,0 +1 @@\n+x");
  });

  test.each(cases.map((c, i) => [i, ...c] as const))("case %d matches Python", (i, a, b) => {
    expect(resultSummaryDiff(a, b)).toBe(expected[i]!);
  });

  test("splitlines matches Python's line boundaries", () => {
    expect(pySplitlines("a\r\nb\rc\u2028d\x0ce\n")).toEqual(["a", "b", "c", "d", "e"]);
    expect(pySplitlines("")).toEqual([]);
    expect(pySplitlines("\n")).toEqual([""]);
  });
});

describe("poll loop", () => {
  // A scripted client: the server behaviour itself is exercised end-to-end in test/e2e/session.
  function scripted(statuses: string[], summary: string | null, cancelFails = false) {
    const created: ReplayRequest[] = [];
    const cancelled: string[] = [];
    let i = 0;
    return {
      created,
      cancelled,
      api: {
        async cancelTask(id: string, reason: string) {
          if (cancelFails) throw new Error("cannot go from 'done' to 'cancelled'");
          cancelled.push(`${id}: ${reason}`);
          return { status: "cancelled" };
        },
        async createTask(body: ReplayRequest) {
          created.push(body);
          return { id: "R-1" };
        },
        async getTask(_id: string) {
          const status = statuses[Math.min(i++, statuses.length - 1)]!;
          return { status, result_summary: status === "done" ? summary : null };
        },
      },
    };
  }

  test("waits for a terminal status and diffs the summaries", async () => {
    const s = scripted(["open", "claimed", "in_progress", "done"], "line one\nline three");
    const seen: string[] = [];
    const out = await runReplay(s.api, prepareReplay(loaded(TRACE), "T-1"), { timeoutSeconds: 5, pollMs: 1, onProgress: (e) => seen.push(e.status) });
    expect(seen).toEqual(["open", "claimed", "in_progress", "done"]);
    expect(out).toEqual({
      task_id: "T-1",
      replay_task_id: "R-1",
      status: "done",
      original_result_summary: "line one\nline two",
      result_summary: "line one\nline three",
      diff: "--- original\n+++ replay\n@@ -1,2 +1,2 @@\n line one\n-line two\n+line three",
    });
    expect(s.created[0]!.title).toBe("[replay] Fix login flow");
  });

  test("'closed' is not terminal; the timeout ends the wait", async () => {
    const s = scripted(["closed"], null);
    const out = await runReplay(s.api, prepareReplay(loaded(TRACE), "T-1"), { timeoutSeconds: 0.05, pollMs: 5 });
    expect(out.status).toBe("timeout");
    expect(out.diff).toBe("");
    expect(out.cancelled).toBe(true);
    expect(s.cancelled).toEqual(["R-1: replay gave up after 0.05s without a result"]);
  });

  test("a cancel that fails is reported (cancelled: false, cancel_error); one that lost the race to 'done' reports done", async () => {
    const stuck = scripted(["open"], null, true);
    const out = await runReplay(stuck.api, prepareReplay(loaded(TRACE), "T-1"), { timeoutSeconds: 0.001, pollMs: 1 });
    expect(out.status).toBe("timeout");
    expect(out.cancelled).toBe(false);
    expect(out.cancel_error).toContain("cannot go");
    // first poll: open (deadline passed), cancel refused, re-read: done
    const raced = scripted(["open", "done"], "line one\nline two", true);
    const late = await runReplay(raced.api, prepareReplay(loaded(TRACE), "T-1"), { timeoutSeconds: 0.001, pollMs: 1 });
    expect(late).toMatchObject({ status: "done", result_summary: "line one\nline two", diff: "" });
  });
});
