/**
 * Writing task traces (`AgentTrace`, spec §8.1) for every agent attempt, in
 * both layouts the readers know:
 *
 *  - Python's: `<sdd>/traces/trace-<trace_id>.json` (whole trace,
 *    `json.dumps(trace)` default separators, ASCII escapes, + "\n";
 *    rewritten atomically) and one line appended to `<task_id>.jsonl` per
 *    write, so a spawn and its finalisation give two lines (as in Python);
 *  - ours: `<task_id>-<YYYYMMDDTHHMMSSmmmZ>.json` (spawn time, UTC), the
 *    finalised trace only, indent 2, with a top-level `result_summary`.
 *
 * Field order is the dataclass order, then our `result_summary`. The
 * finalised copy's `task_snapshots` are refreshed from the task after the
 * attempt (status, result_summary), a deliberate difference from Python,
 * whose snapshots stay as they were at spawn: task-trace replay diffs
 * against the recorded result, so the trace must carry it.
 */
import { appendFileSync } from "node:fs";
import { ensurePrivateDir, PRIVATE_FILE_MODE } from "../server/paths.ts";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { writeFileAtomic } from "../fsutil/atomic.ts";
import { dumps } from "../pyjson/encode.ts";
import { pyFloat, pyInt, type PyLike } from "../pyjson/types.ts";
import type { Task } from "../server/model.ts";

export type TraceOutcome = "success" | "failed" | "unknown";
export type TraceStepType = "spawn" | "orient" | "plan" | "edit" | "verify" | "complete" | "fail" | "compact";

export interface TraceStep {
  type: TraceStepType;
  timestamp: number;
  detail: string;
  duration_ms?: number;
}

export interface TraceStart {
  taskIds: string[];
  /** The agent id (Python: the worker session id). */
  sessionId: string;
  role: string;
  model: string | null;
  effort: string | null;
  spawnTs: number;
  logPath: string;
  tasks: Task[];
  settings: Record<string, PyLike>;
}

export interface TraceEnd {
  endTs: number;
  outcome: TraceOutcome;
  resultSummary: string | null;
  /** The tasks as they stand after the attempt. */
  tasks: Task[];
  /** Steps between spawn and the final complete/fail (e.g. verify). */
  steps?: TraceStep[];
}

export function tracesDir(sddDir: string): string {
  return join(sddDir, "traces");
}

/** 16 hex characters, like `uuid4().hex[:16]`. */
export function newTraceId(): string {
  return randomBytes(8).toString("hex");
}

/** `20260102T030405123Z` (UTC, ms): sortable, filename-safe. */
export function traceStamp(unixSeconds: number): string {
  return new Date(Math.round(unixSeconds * 1000)).toISOString().replace(/[-:]/g, "").replace(".", "");
}

function stepObject(s: TraceStep): Record<string, PyLike> {
  return {
    type: s.type,
    timestamp: pyFloat(s.timestamp),
    detail: s.detail,
    files: [],
    tokens: 0,
    duration_ms: pyFloat(s.duration_ms ?? 0),
    turn_number: 0,
    allocated_budget: 0,
    consumed_this_turn: 0,
    remaining_budget: 0,
    compaction_correlation_id: "",
    compaction_tokens_before: 0,
    compaction_tokens_after: 0,
    compaction_reason: "",
  };
}

const float = (n: number | null): PyLike => (n === null ? null : pyFloat(n));

/** A task record as a trace snapshot (numbers spelled as Python would). */
export function taskSnapshot(t: Task): Record<string, PyLike> {
  return {
    id: t.id,
    title: t.title,
    description: t.description,
    role: t.role,
    tenant_id: t.tenant_id,
    priority: pyInt(t.priority),
    scope: t.scope,
    complexity: t.complexity,
    status: t.status,
    depends_on: [...t.depends_on],
    model: t.model,
    effort: t.effort,
    assigned_agent: t.assigned_agent,
    result_summary: t.result_summary,
    fail_reason: t.fail_reason,
    cost_usd: pyFloat(t.cost_usd),
    attempts: pyInt(t.attempts),
    created_at: float(t.created_at),
    updated_at: float(t.updated_at),
    claimed_at: float(t.claimed_at),
    completed_at: float(t.completed_at),
  };
}

/** One agent attempt's trace, written at spawn and again at finalisation. */
export class TraceRecorder {
  readonly traceId: string;
  private readonly dir: string;
  private readonly start: TraceStart;
  private readonly spawnStep: TraceStep;

  constructor(sddDir: string, start: TraceStart) {
    this.dir = tracesDir(sddDir);
    this.traceId = newTraceId();
    this.start = start;
    this.spawnStep = {
      type: "spawn",
      timestamp: start.spawnTs,
      detail: `Spawned ${start.role} agent (${start.model ?? "None"}/${start.effort ?? "None"}) for tasks: ${start.taskIds.join(", ")}`,
    };
  }

  private traceObject(end: TraceEnd | null): Record<string, PyLike> {
    const steps = [this.spawnStep, ...(end?.steps ?? [])];
    if (end) {
      steps.push({
        type: end.outcome === "success" ? "complete" : "fail",
        timestamp: end.endTs,
        detail: `Agent exited with outcome: ${end.outcome}`,
        duration_ms: Math.max(0, (end.endTs - this.start.spawnTs) * 1000),
      });
    }
    return {
      trace_id: this.traceId,
      session_id: this.start.sessionId,
      task_ids: [...this.start.taskIds],
      agent_role: this.start.role,
      model: this.start.model,
      effort: this.start.effort,
      spawn_ts: pyFloat(this.start.spawnTs),
      end_ts: end ? pyFloat(end.endTs) : null,
      steps: steps.map(stepObject),
      outcome: end ? end.outcome : "unknown",
      log_path: this.start.logPath,
      task_snapshots: (end ? end.tasks : this.start.tasks).map(taskSnapshot),
      total_allocated_budget: 0,
      total_consumed: 0,
      turn_count: 0,
      settings_snapshot: this.start.settings,
      result_summary: end ? end.resultSummary : null,
    };
  }

  private writePythonLayout(obj: Record<string, PyLike>): void {
    ensurePrivateDir(this.dir);
    const line = dumps(obj) + "\n";
    writeFileAtomic(join(this.dir, `trace-${this.traceId}.json`), line, { mode: PRIVATE_FILE_MODE });
    for (const id of this.start.taskIds) appendFileSync(join(this.dir, `${id}.jsonl`), line, { mode: PRIVATE_FILE_MODE });
  }

  /** The spawn-time copy (outcome unknown, no end_ts). */
  writeSpawn(): void {
    this.writePythonLayout(this.traceObject(null));
  }

  /** The final copy in both layouts. Returns the path of our per-task file(s). */
  finalize(end: TraceEnd): string[] {
    const obj = this.traceObject(end);
    this.writePythonLayout(obj);
    const pretty = dumps(obj, { indent: 2 }) + "\n";
    const stamp = traceStamp(this.start.spawnTs);
    return this.start.taskIds.map((id) => {
      const p = join(this.dir, `${id}-${stamp}.json`);
      writeFileAtomic(p, pretty, { mode: PRIVATE_FILE_MODE });
      return p;
    });
  }
}
