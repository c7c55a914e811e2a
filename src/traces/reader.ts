import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { parse, pyStr, type PyObject, type PyValue } from "../pyjson/index.ts";
import { toPlain } from "../session/files.ts";
import { readLines } from "../session/jsonl-log.ts";
import { unreadableWarning } from "../fsutil/input.ts";

/**
 * Reading task traces (`AgentTrace`, spec §8.1) from `<sdd>/traces/`, in
 * both layouts that exist:
 *
 *  - ours: `<task_id>-<timestamp>.json`, one whole trace (plus a top-level
 *    `result_summary`) per file;
 *  - Python's: `trace-<trace_id>.json` (one trace) and `<task_id>.jsonl`
 *    (the trace appended once per write: a spawn copy, a final copy, retries).
 *
 * A trace is kept as parsed (`PyObject`) because the replay request applies
 * Python `str()`/`int()` to snapshot fields; the typed view holds what the
 * reader itself needs. Unreadable files and lines are skipped, counted, and
 * reported as warnings, never thrown.
 */

/** Task ids name files under `.sdd/traces`: they must never reach outside it. */
export const TASK_ID_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

export function isSafeTaskId(id: string): boolean {
  return TASK_ID_PATTERN.test(id) && id !== "." && id !== "..";
}

/** The fields `AgentTrace.from_dict` requires, and those the reader uses. */
export const TraceHeaderSchema = v.looseObject({
  trace_id: v.string(),
  session_id: v.string(),
  task_ids: v.optional(v.array(v.string()), () => []),
  agent_role: v.optional(v.nullable(v.string()), null),
  model: v.optional(v.nullable(v.string()), null),
  effort: v.optional(v.nullable(v.string()), null),
  spawn_ts: v.optional(v.number(), 0),
  end_ts: v.optional(v.nullable(v.number()), null),
  outcome: v.optional(v.string(), "unknown"),
  steps: v.optional(
    v.array(v.looseObject({ type: v.string(), timestamp: v.number() })),
    () => [],
  ),
  task_snapshots: v.optional(v.array(v.record(v.string(), v.unknown())), () => []),
});
export type TraceHeader = v.InferOutput<typeof TraceHeaderSchema>;

export interface LoadedTrace {
  header: TraceHeader;
  /** The trace exactly as parsed (field order, number spellings kept). */
  raw: PyObject;
  /** `path` or `path:line` it was read from. */
  source: string;
}

export interface TraceReadResult {
  traces: LoadedTrace[];
  warnings: string[];
}

export function tracesDir(sddDir: string): string {
  return join(sddDir, "traces");
}

/** Decode one parsed value as a trace, or explain why it is not one. */
export function decodeTrace(value: PyValue, source: string): LoadedTrace | string {
  if (!(value instanceof Map)) return `${source}: not a JSON object`;
  const r = v.safeParse(TraceHeaderSchema, toPlain(value));
  if (!r.success) {
    const issue = r.issues[0];
    const path = v.getDotPath(issue);
    return `${source}: not a trace (${path ? `${path}: ` : ""}${issue.message})`;
  }
  return { header: r.output, raw: value, source };
}

function readTraceFile(path: string, out: TraceReadResult): void {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    out.warnings.push(unreadableWarning(path, err));
    return;
  }
  let value: PyValue;
  try {
    value = parse(text);
  } catch (err) {
    out.warnings.push(`${path}: not JSON (${(err as Error).message})`);
    return;
  }
  const t = decodeTrace(value, path);
  if (typeof t === "string") out.warnings.push(t);
  else out.traces.push(t);
}

function readTraceLines(path: string, out: TraceReadResult): void {
  let lineNo = 0;
  let bad = 0;
  try {
    for (const line of readLines(path)) {
      lineNo++;
      if (line.trim() === "") continue;
      let value: PyValue;
      try {
        value = parse(line);
      } catch {
        bad++;
        continue;
      }
      const t = decodeTrace(value, `${path}:${lineNo}`);
      if (typeof t === "string") bad++;
      else out.traces.push(t);
    }
  } catch (err) {
    out.warnings.push(unreadableWarning(path, err));
  }
  if (bad > 0) out.warnings.push(`${path}: skipped ${bad} malformed line(s)`);
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/** Names of our per-trace files for a task: `<task_id>-<timestamp>.json`. */
function isOwnLayoutName(name: string, taskId: string): boolean {
  if (!name.startsWith(`${taskId}-`) || !name.endsWith(".json")) return false;
  const stamp = name.slice(taskId.length + 1, -".json".length);
  return /^[0-9][0-9A-Za-z._:-]*$/.test(stamp);
}

/**
 * Every trace recorded for a task, in reading order: the lines of
 * `<task_id>.jsonl`, then `<task_id>-<timestamp>.json` files by name. A
 * file name alone is not proof (task `T` would match `T-1-<ts>.json` of task
 * `T-1`), so a trace counts only when its `task_ids` name the task.
 */
export function readTracesForTask(sddDir: string, taskId: string): TraceReadResult {
  if (!isSafeTaskId(taskId)) throw new RangeError(`unsafe task id: ${JSON.stringify(taskId)}`);
  const dir = tracesDir(sddDir);
  const out: TraceReadResult = { traces: [], warnings: [] };
  readTraceLines(join(dir, `${taskId}.jsonl`), out);
  for (const name of listDir(dir)) {
    if (isOwnLayoutName(name, taskId)) readTraceFile(join(dir, name), out);
  }
  out.traces = out.traces.filter((t) => t.header.task_ids.includes(taskId));
  return out;
}

/**
 * The trace to replay: the one with the greatest `spawn_ts`, ties to the
 * first read (Python's `latest_for_task`). Several copies of ONE trace
 * (same `trace_id`: the spawn-time copy and the finalised copy) are first
 * merged into the most complete one — a finalised copy (with `end_ts`) is
 * never replaced by an unfinalised one — so the result carries the outcome
 * and result summary instead of the empty spawn-time snapshot.
 */
export function latestTraceForTask(sddDir: string, taskId: string): { trace: LoadedTrace | null; warnings: string[] } {
  const { traces, warnings } = readTracesForTask(sddDir, taskId);
  const byId = new Map<string, { first: number; best: LoadedTrace }>();
  traces.forEach((t, i) => {
    const seen = byId.get(t.header.trace_id);
    if (!seen) byId.set(t.header.trace_id, { first: i, best: t });
    else if (t.header.end_ts !== null || seen.best.header.end_ts === null) seen.best = t;
  });
  let chosen: { first: number; best: LoadedTrace } | null = null;
  for (const entry of byId.values()) {
    if (chosen === null) chosen = entry;
    else if (entry.best.header.spawn_ts > chosen.best.header.spawn_ts) chosen = entry;
    else if (entry.best.header.spawn_ts === chosen.best.header.spawn_ts && entry.first < chosen.first) chosen = entry;
  }
  return { trace: chosen?.best ?? null, warnings };
}

/** One trace by id: `trace-<id>.json` first, then a scan of every `*.jsonl` (last copy wins). */
export function readTraceById(sddDir: string, traceId: string): { trace: LoadedTrace | null; warnings: string[] } {
  if (!isSafeTaskId(traceId)) throw new RangeError(`unsafe trace id: ${JSON.stringify(traceId)}`);
  const dir = tracesDir(sddDir);
  const direct: TraceReadResult = { traces: [], warnings: [] };
  readTraceFile(join(dir, `trace-${traceId}.json`), direct);
  const hit = direct.traces.find((t) => t.header.trace_id === traceId);
  if (hit) return { trace: hit, warnings: [] };
  const scan: TraceReadResult = { traces: [], warnings: [] };
  for (const name of listDir(dir)) if (name.endsWith(".jsonl")) readTraceLines(join(dir, name), scan);
  const copies = scan.traces.filter((t) => t.header.trace_id === traceId);
  return { trace: copies.at(-1) ?? null, warnings: scan.warnings };
}

/** Whole-trace files (`trace-*.json` and ours), newest file first, then by `spawn_ts` descending. */
export function listTraces(sddDir: string, limit = 50): TraceReadResult {
  const dir = tracesDir(sddDir);
  const files = listDir(dir)
    .filter((n) => n.endsWith(".json"))
    .map((n) => {
      const path = join(dir, n);
      try {
        return { path, mtime: statSync(path).mtimeMs };
      } catch {
        return null;
      }
    })
    .filter((x): x is { path: string; mtime: number } => x !== null);
  const out: TraceReadResult = { traces: [], warnings: [] };
  const mtimeOf = new Map<string, number>();
  for (const f of files) {
    readTraceFile(f.path, out);
    mtimeOf.set(f.path, f.mtime);
  }
  out.traces.sort((a, b) => (mtimeOf.get(b.source)! - mtimeOf.get(a.source)!) || b.header.spawn_ts - a.header.spawn_ts);
  out.traces = out.traces.slice(0, Math.max(0, limit));
  return out;
}

/** The snapshot of `taskId` in the trace, else the first one, else null. */
export function snapshotFor(trace: LoadedTrace, taskId: string): PyObject | null {
  const snaps = trace.raw.get("task_snapshots");
  if (!Array.isArray(snaps)) return null;
  const objects = snaps.filter((s): s is PyObject => s instanceof Map);
  return objects.find((s) => s.get("id") === taskId) ?? objects[0] ?? null;
}

/**
 * What the task produced when the trace was recorded: our layout's top-level
 * `result_summary`, else the snapshot's. Null/absent is `""` — never
 * Python's `str(None)` = `"None"`, which would show up as a diff line.
 */
export function originalResultSummary(trace: LoadedTrace, taskId: string): string {
  const top = trace.raw.get("result_summary");
  if (top !== undefined && top !== null) return pyStr(top);
  const snap = snapshotFor(trace, taskId)?.get("result_summary");
  return snap === undefined || snap === null ? "" : pyStr(snap);
}
