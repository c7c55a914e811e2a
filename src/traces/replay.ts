import { structuredPatch } from "diff";
import { PyNum, pyStr, type PyObject, type PyValue } from "../pyjson/index.ts";
import { originalResultSummary, snapshotFor, type LoadedTrace } from "./reader.ts";

/**
 * Task-trace replay (spec §8.3): re-submit the task a trace recorded as a
 * new task (`[replay] <title>`), optionally on another model or with a hint,
 * wait for it, and diff its result summary against the original's. The
 * original task's record is never touched.
 */

/** The `POST /tasks` body of the replay task. */
export interface ReplayRequest {
  title: string;
  description: string;
  role: string;
  priority: number;
  scope: string;
  complexity: string;
  /** Omitted when neither `--model`, the snapshot nor the trace names one (never the string "None"). */
  model?: string;
  effort?: string;
}

export interface ReplayOptions {
  model?: string;
  extraContext?: string;
}

/** Thrown when a trace has no task snapshot to rebuild the task from. */
export class TraceWithoutSnapshotError extends Error {
  constructor(readonly traceId: string) {
    super(`trace ${traceId} does not contain any task snapshots to replay`);
    this.name = "TraceWithoutSnapshotError";
  }
}

/** `str(x)` of a present, non-null value; otherwise `undefined` (the caller picks a fallback). */
function strOf(v: PyValue | undefined): string | undefined {
  return v === undefined || v === null ? undefined : pyStr(v);
}

/** Python `int(x)` of a snapshot priority (int, integral float, bool, numeric string), else undefined. */
function intOf(v: PyValue | undefined): number | undefined {
  if (v === true || v === false) return v ? 1 : 0;
  if (v instanceof PyNum) {
    const n = v.toNumber();
    return Number.isFinite(n) ? Math.trunc(n) : undefined;
  }
  if (typeof v === "string" && /^\s*[+-]?\d+\s*$/.test(v)) return Number.parseInt(v, 10);
  return undefined;
}

/** Python `str.rstrip()`: trailing Unicode whitespace. */
function rstrip(s: string): string {
  return s.replace(/[\s\u001c-\u001f\u0085]+$/u, "");
}

export function buildReplayRequest(trace: LoadedTrace, taskId: string, options: ReplayOptions = {}): ReplayRequest {
  const snap: PyObject | null = snapshotFor(trace, taskId);
  if (snap === null) throw new TraceWithoutSnapshotError(trace.header.trace_id);
  const h = trace.header;
  const title = strOf(snap.get("title")) ?? h.task_ids[0] ?? h.trace_id;
  let description = strOf(snap.get("description")) ?? "";
  if (options.extraContext !== undefined && options.extraContext !== "") {
    description = `${rstrip(description)}\n\nReplay hint:\n${options.extraContext}`;
  }
  const req: ReplayRequest = {
    title: `[replay] ${title}`,
    description,
    role: strOf(snap.get("role")) ?? h.agent_role ?? "auto",
    priority: intOf(snap.get("priority")) ?? 2,
    scope: strOf(snap.get("scope")) ?? "medium",
    complexity: strOf(snap.get("complexity")) ?? "medium",
  };
  const model = options.model ?? strOf(snap.get("model")) ?? h.model ?? undefined;
  const effort = strOf(snap.get("effort")) ?? h.effort ?? undefined;
  if (model !== undefined) req.model = model;
  if (effort !== undefined) req.effort = effort;
  return req;
}

/** Python `str.splitlines()` (no keepends): every line boundary Python knows. */
export function pySplitlines(s: string): string[] {
  if (s === "") return [];
  const lines = s.split(/\r\n|[\n\r\v\f\u001c\u001d\u001e\u0085\u2028\u2029]/);
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/** difflib's `_format_range_unified`, from jsdiff's 1-based start. */
function formatRange(start: number, length: number): string {
  if (length === 1) return String(start);
  return `${length === 0 ? start - 1 : start},${length}`;
}

/**
 * A unified diff of two result summaries in the shape of Python's
 * `difflib.unified_diff(a.splitlines(), b.splitlines(), "original", "replay", lineterm="")`
 * joined by `\n`: `--- original`, `+++ replay`, `@@ -a,b +c,d @@` hunks with 3
 * context lines. `""` when the summaries have the same lines. Hunks come from
 * jsdiff (Myers); on inputs where difflib's SequenceMatcher picks another
 * alignment the hunks can differ, the headers and line format do not.
 */
export function resultSummaryDiff(original: string, replayed: string): string {
  const a = pySplitlines(original);
  const b = pySplitlines(replayed);
  const text = (lines: string[]) => lines.map((l) => l + "\n").join("");
  const patch = structuredPatch("original", "replay", text(a), text(b), "", "", { context: 3 });
  if (patch.hunks.length === 0) return "";
  const out = ["--- original", "+++ replay"];
  for (const h of patch.hunks) {
    out.push(`@@ -${formatRange(h.oldStart, h.oldLines)} +${formatRange(h.newStart, h.newLines)} @@`);
    for (const line of h.lines) if (!line.startsWith("\\")) out.push(line);
  }
  return out.join("\n");
}

/** Statuses after which the replay task will not change any more (spec §8.3 step 5). */
export const REPLAY_TERMINAL_STATUSES = ["done", "failed", "cancelled"] as const;

/** What the replay needs from a task server client (the real `TaskClient` fits). */
export interface ReplayTaskApi {
  createTask(body: ReplayRequest): Promise<{ id: string }>;
  getTask(id: string): Promise<{ status: string; result_summary?: string | null }>;
  /** Cancel the replay task with a reason (a replay that gives up must not leave work behind). */
  cancelTask(id: string, reason: string): Promise<{ status: string }>;
}

export type ReplayStatus = "done" | "failed" | "cancelled" | "timeout";

export interface ReplayOutcome {
  task_id: string;
  replay_task_id: string;
  status: ReplayStatus;
  original_result_summary: string;
  result_summary: string | null;
  diff: string;
  /** On timeout: whether the replay task was cancelled (false: it reached a terminal status first, or the cancel failed). */
  cancelled?: boolean;
  /** Why the cancel on timeout failed, when it did. */
  cancel_error?: string;
}

/** Everything decided before the server is contacted. */
export interface ReplayPlan {
  taskId: string;
  traceId: string;
  request: ReplayRequest;
  originalResultSummary: string;
}

/** Build the plan; throws `TraceWithoutSnapshotError` before anything is sent. */
export function prepareReplay(trace: LoadedTrace, taskId: string, options: ReplayOptions = {}): ReplayPlan {
  return {
    taskId,
    traceId: trace.header.trace_id,
    request: buildReplayRequest(trace, taskId, options),
    originalResultSummary: originalResultSummary(trace, taskId),
  };
}

export interface RunReplayOptions {
  timeoutSeconds: number;
  /** Poll interval (ms). */
  pollMs?: number;
  /** Called with each polled status of the replay task. */
  onProgress?: (event: { replayTaskId: string; status: string; elapsedSeconds: number }) => void;
}

/**
 * Create the replay task and wait (wall clock, up to the timeout) for a
 * terminal status. Errors of the client (server gone, task vanished)
 * propagate: a replay whose outcome cannot be observed is not a result.
 */
export async function runReplay(api: ReplayTaskApi, plan: ReplayPlan, options: RunReplayOptions): Promise<ReplayOutcome> {
  const original = plan.originalResultSummary;
  const taskId = plan.taskId;
  const created = await api.createTask(plan.request);
  const started = Date.now();
  const deadline = started + options.timeoutSeconds * 1000;
  const pollMs = options.pollMs ?? 250;
  const terminal = (task: { status: string; result_summary?: string | null }): ReplayOutcome => ({
    task_id: taskId,
    replay_task_id: created.id,
    status: task.status as ReplayStatus,
    original_result_summary: original,
    result_summary: task.result_summary ?? null,
    diff: resultSummaryDiff(original, task.result_summary ?? ""),
  });
  for (;;) {
    const task = await api.getTask(created.id);
    const elapsedSeconds = (Date.now() - started) / 1000;
    options.onProgress?.({ replayTaskId: created.id, status: task.status, elapsedSeconds });
    if ((REPLAY_TERMINAL_STATUSES as readonly string[]).includes(task.status)) return terminal(task);
    if (Date.now() >= deadline) return await giveUp(api, created.id, options.timeoutSeconds, terminal, { task_id: taskId, original });
    await Bun.sleep(Math.min(pollMs, Math.max(1, deadline - Date.now())));
  }
}

/**
 * The replay gives up: cancel its task so no orchestrator runs (and bills)
 * it later. When the task reached a terminal status in the meantime, that
 * status is the outcome after all.
 */
async function giveUp(
  api: ReplayTaskApi,
  id: string,
  timeoutSeconds: number,
  terminal: (t: { status: string; result_summary?: string | null }) => ReplayOutcome,
  facts: { task_id: string; original: string },
): Promise<ReplayOutcome> {
  const timedOut: ReplayOutcome = { task_id: facts.task_id, replay_task_id: id, status: "timeout", original_result_summary: facts.original, result_summary: null, diff: "" };
  try {
    await api.cancelTask(id, `replay gave up after ${timeoutSeconds}s without a result`);
    return { ...timedOut, cancelled: true };
  } catch (err) {
    const now = await api.getTask(id).catch(() => null);
    if (now && (REPLAY_TERMINAL_STATUSES as readonly string[]).includes(now.status)) return terminal(now);
    return { ...timedOut, cancelled: false, cancel_error: (err as Error).message };
  }
}
