import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dumps } from "../../src/pyjson/index.ts";
import {
  isSafeTaskId,
  latestTraceForTask,
  listTraces,
  originalResultSummary,
  readTraceById,
  readTracesForTask,
  snapshotFor,
} from "../../src/traces/reader.ts";

const dir = mkdtempSync(join(tmpdir(), "bernstein-traces-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function sdd(): string {
  const d = join(dir, `sdd${n++}`);
  mkdirSync(join(d, "traces"), { recursive: true });
  return d;
}

/** A trace in the AgentTrace key order of spec §8.1. */
function trace(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    trace_id: "aaaa000000000001",
    session_id: "S-1",
    task_ids: ["T-1"],
    agent_role: "backend",
    model: "sonnet",
    effort: "high",
    spawn_ts: 100.0,
    end_ts: null,
    steps: [{ type: "spawn", timestamp: 100.0, detail: "Spawned backend agent (sonnet/high) for tasks: T-1" }],
    outcome: "unknown",
    log_path: "",
    task_snapshots: [{ id: "T-1", title: "Fix login", description: "Do it", role: "backend", priority: 1, model: null, effort: null, result_summary: null }],
    total_allocated_budget: 0,
    total_consumed: 0,
    turn_count: 0,
    settings_snapshot: {},
    ...over,
  };
}
const line = (t: Record<string, unknown>) => dumps(t as never) + "\n";

describe("task id safety", () => {
  test("ids that could address a path outside .sdd are refused", () => {
    for (const bad of ["../x", "a/b", "", ".", "..", "x".repeat(65), "a b", "a\u0000"]) expect(isSafeTaskId(bad)).toBe(false);
    for (const ok of ["T-1", "task_1.2", "x".repeat(64)]) expect(isSafeTaskId(ok)).toBe(true);
    expect(() => readTracesForTask(sdd(), "../etc")).toThrow(RangeError);
  });
});

describe("Python layout (<task_id>.jsonl + trace-<id>.json)", () => {
  test("spawn copy and final copy of one trace merge into the final copy", () => {
    const d = sdd();
    const spawn = trace();
    const final = trace({ end_ts: 130.0, outcome: "success", steps: [...(spawn.steps as unknown[]), { type: "complete", timestamp: 130.0 }] });
    writeFileSync(join(d, "traces", "T-1.jsonl"), line(spawn) + line(final));
    writeFileSync(join(d, "traces", "trace-aaaa000000000001.json"), line(final));
    const { trace: t, warnings } = latestTraceForTask(d, "T-1");
    expect(warnings).toEqual([]);
    expect(t!.header.outcome).toBe("success");
    expect(t!.source).toBe(join(d, "traces", "T-1.jsonl:2"));
    expect(readTracesForTask(d, "T-1").traces).toHaveLength(2);
  });

  test("latest = max spawn_ts; ties go to the first trace read", () => {
    const d = sdd();
    const a = trace({ trace_id: "a1", spawn_ts: 200.0 });
    const b = trace({ trace_id: "b1", spawn_ts: 300.0 });
    const c = trace({ trace_id: "c1", spawn_ts: 300.0 });
    writeFileSync(join(d, "traces", "T-1.jsonl"), line(a) + line(b) + line(c));
    expect(latestTraceForTask(d, "T-1").trace!.header.trace_id).toBe("b1");
  });

  test("malformed lines and non-traces are skipped with a warning; missing required keys too", () => {
    const d = sdd();
    writeFileSync(
      join(d, "traces", "T-1.jsonl"),
      "{torn\n\n[1]\n" + line({ session_id: "no trace id" }) + line(trace({ trace_id: "ok" })) + '{"trace_id": "x", "session_id": "s", "steps": [{"type": "spawn"}]}\n',
    );
    const { trace: t, warnings } = latestTraceForTask(d, "T-1");
    expect(t!.header.trace_id).toBe("ok");
    expect(warnings).toEqual([`${join(d, "traces", "T-1.jsonl")}: skipped 4 malformed line(s)`]);
  });

  test("no trace → null", () => {
    expect(latestTraceForTask(sdd(), "T-9").trace).toBeNull();
  });

  test("readTraceById: per-trace file first, else the last copy in any jsonl", () => {
    const d = sdd();
    writeFileSync(join(d, "traces", "T-1.jsonl"), line(trace({ trace_id: "t1" })) + line(trace({ trace_id: "t1", outcome: "failed" })));
    expect(readTraceById(d, "t1").trace!.header.outcome).toBe("failed");
    writeFileSync(join(d, "traces", "trace-t1.json"), line(trace({ trace_id: "t1", outcome: "success" })));
    expect(readTraceById(d, "t1").trace!.header.outcome).toBe("success");
    expect(readTraceById(d, "nope").trace).toBeNull();
  });
});

describe("our layout (<task_id>-<timestamp>.json)", () => {
  test("read alongside the jsonl; a file of another task with a longer id is not taken", () => {
    const d = sdd();
    writeFileSync(join(d, "traces", "T-1700000000.json"), JSON.stringify(trace({ trace_id: "own", task_ids: ["T"], spawn_ts: 500.0, result_summary: "new" }), null, 2));
    // task "T-1"'s file also starts with "T-"
    writeFileSync(join(d, "traces", "T-1-1700000001.json"), JSON.stringify(trace({ trace_id: "other", task_ids: ["T-1"], spawn_ts: 900.0 })));
    writeFileSync(join(d, "traces", "T.jsonl"), line(trace({ trace_id: "py", task_ids: ["T"], spawn_ts: 400.0 })));
    const r = latestTraceForTask(d, "T");
    expect(r.trace!.header.trace_id).toBe("own");
    expect(originalResultSummary(r.trace!, "T")).toBe("new");
    expect(latestTraceForTask(d, "T-1").trace!.header.trace_id).toBe("other");
  });

  test("a corrupt file is a warning, not a crash", () => {
    const d = sdd();
    writeFileSync(join(d, "traces", "T-2-1.json"), "{");
    writeFileSync(join(d, "traces", "T-2-2.json"), JSON.stringify(trace({ task_ids: ["T-2"] })));
    const r = latestTraceForTask(d, "T-2");
    expect(r.trace).not.toBeNull();
    expect(r.warnings[0]).toContain("T-2-1.json: not JSON (Expecting property name enclosed in double quotes");
  });

  test("listTraces reads whole-trace files, newest first, bounded by limit", () => {
    const d = sdd();
    writeFileSync(join(d, "traces", "trace-a.json"), line(trace({ trace_id: "a", spawn_ts: 1.0 })));
    writeFileSync(join(d, "traces", "trace-b.json"), line(trace({ trace_id: "b", spawn_ts: 2.0 })));
    writeFileSync(join(d, "traces", "T-1.jsonl"), line(trace({ trace_id: "c" })));
    const all = listTraces(d);
    expect(all.traces.map((t) => t.header.trace_id).sort()).toEqual(["a", "b"]);
    expect(listTraces(d, 1).traces).toHaveLength(1);
  });
});

describe("snapshot and original result summary", () => {
  test("snapshot of the task, else the first; null summaries are '' (not Python's 'None')", () => {
    const d = sdd();
    writeFileSync(
      join(d, "traces", "T-2.jsonl"),
      line(trace({ task_ids: ["T-1", "T-2"], task_snapshots: [{ id: "T-1", title: "one" }, { id: "T-2", title: "two", result_summary: "r2" }] })),
    );
    const t = latestTraceForTask(d, "T-2").trace!;
    expect(snapshotFor(t, "T-2")!.get("title")).toBe("two");
    expect(snapshotFor(t, "T-9")!.get("title")).toBe("one");
    expect(originalResultSummary(t, "T-2")).toBe("r2");
    expect(originalResultSummary(t, "T-1")).toBe("");
  });
});

describe("traces with the attempt's transcript (issue 31)", () => {
  test("a finalised trace with tool steps, files and usage reads back and replays from its snapshot", async () => {
    const { TraceRecorder } = await import("../../src/traces/writer.ts");
    const { TaskStore } = await import("../../src/server/store.ts");
    const { buildReplayRequest } = await import("../../src/traces/replay.ts");
    const d = sdd();
    const store = new TaskStore(":memory:");
    const [task] = store.createMany([{ id: "T-9", title: "Write hello" }]);
    const rec = new TraceRecorder(d, { taskIds: ["T-9"], sessionId: "a-1", role: "auto", model: null, effort: null, spawnTs: 1_747_000_000, logPath: "l.log", tasks: [task!], settings: {}, adapter: "claude" });
    rec.writeSpawn();
    rec.finalize({
      endTs: 1_747_000_003,
      outcome: "success",
      resultSummary: "wrote hello",
      tasks: [task!],
      usage: {
        adapter: "claude",
        reportedModel: "m-1",
        tokens: { input: 10, cached: 2, output: 3 },
        costUsd: 0.5,
        costSource: "cli",
        toolCalls: [{ name: "Write", input: '{"file_path":"h.txt"}', status: "ok", output: "done" }],
        filesChanged: ["h.txt"],
      },
    });
    const { trace, warnings } = latestTraceForTask(d, "T-9");
    expect(warnings).toEqual([]);
    expect(trace!.header.model).toBe("m-1");
    expect(trace!.header.steps.map((s) => s.type)).toEqual(["spawn", "edit", "complete"]);
    expect(originalResultSummary(trace!, "T-9")).toBe("wrote hello");
    const raw = trace!.raw;
    expect(raw.get("files_changed")).toEqual(["h.txt"]);
    expect(buildReplayRequest(trace!, "T-9")).toMatchObject({ title: "[replay] Write hello", role: "auto", model: "m-1" });
  });
});
