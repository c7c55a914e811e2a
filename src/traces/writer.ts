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
  files?: string[];
  tokens?: number;
  turn_number?: number;
  /** Ours, after the spec's keys: the tool call this step records. */
  tool_call?: TraceToolCall;
}

/** One tool call the agent's CLI reported, with its input and outcome (bounded texts). */
export interface TraceToolCall {
  name: string;
  input: string;
  /** "ok", "error", "denied" (refused by the CLI), or null when the CLI never reported the result. */
  status: string | null;
  output: string | null;
  /** Why a denied call was refused: `permission_denied` or `no_write_tool`. */
  refused?: string;
}

/** What the attempt did, beyond upstream's fields (written after them). */
export interface TraceUsage {
  /** The model the CLI said it used, when it said. */
  reportedModel: string | null;
  /** The adapter that ran the agent (claude, codex, gemini, script, command). */
  adapter: string;
  tokens: { input: number; cached: number; output: number } | null;
  costUsd: number;
  costSource: string;
  toolCalls: TraceToolCall[];
  /** The assistant's text messages, each after the first `afterTools` tool calls. */
  messages?: { afterTools: number; text: string }[];
  /** Files the work tree shows changed between the attempt's start and end. */
  filesChanged: string[];
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
  /** The adapter that runs the agent, named in the spawn step. */
  adapter?: string;
}

export interface TraceEnd {
  endTs: number;
  outcome: TraceOutcome;
  resultSummary: string | null;
  /** The tasks as they stand after the attempt. */
  tasks: Task[];
  /** Steps between spawn and the final complete/fail (e.g. verify). */
  steps?: TraceStep[];
  /** Tool calls, files, tokens, cost; absent = none known (the trace reads as before). */
  usage?: TraceUsage;
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
    files: [...(s.files ?? [])],
    tokens: pyInt(s.tokens ?? 0),
    duration_ms: pyFloat(s.duration_ms ?? 0),
    turn_number: pyInt(s.turn_number ?? 0),
    allocated_budget: 0,
    consumed_this_turn: 0,
    remaining_budget: 0,
    compaction_correlation_id: "",
    compaction_tokens_before: 0,
    compaction_tokens_after: 0,
    compaction_reason: "",
    ...(s.tool_call ? { tool_call: { name: s.tool_call.name, input: s.tool_call.input, status: s.tool_call.status, output: s.tool_call.output, ...(s.tool_call.refused ? { reason: s.tool_call.refused } : {}) } } : {}),
  };
}

/** Upstream's step type for a tool, by what its name says it does: reading is `orient`, a to-do list `plan`, anything else `edit`. */
export function toolStepType(name: string): TraceStepType {
  const n = name.toLowerCase();
  if (/todo|plan/.test(n)) return "plan";
  if (/^(read|read_file|read_many_files|glob|grep|ls|list_directory|search_file_content|web_?fetch|web_?search|google_web_search|notebookread)$/.test(n)) return "orient";
  return "edit";
}

const modelName = (m: string | null): string => m ?? "CLI default";

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

  constructor(sddDir: string, start: TraceStart) {
    this.dir = tracesDir(sddDir);
    this.traceId = newTraceId();
    this.start = start;
  }

  /**
   * Upstream's spawn detail, naming the model actually used: the
   * configured one, else the one the CLI reported, else "CLI default"
   * (never "None"); likewise the effort ("default" when unset).
   */
  private spawnStep(model: string | null): TraceStep {
    const via = this.start.adapter ? ` via ${this.start.adapter}` : "";
    return {
      type: "spawn",
      timestamp: this.start.spawnTs,
      detail: `Spawned ${this.start.role} agent (${modelName(model)}/${this.start.effort ?? "default"})${via} for tasks: ${this.start.taskIds.join(", ")}`,
    };
  }

  private traceObject(end: TraceEnd | null): Record<string, PyLike> {
    const u = end?.usage;
    const model = this.start.model ?? u?.reportedModel ?? null;
    const totalTokens = u?.tokens ? u.tokens.input + u.tokens.output : 0;
    // The transcript: the assistant's messages (`plan` steps, the text as detail) between its tool calls, in order.
    const turns: TraceStep[] = [];
    const messages = u?.messages ?? [];
    const say = (upTo: number) => {
      for (const m of messages) {
        if (m.afterTools === upTo) turns.push({ type: "plan", timestamp: end!.endTs, detail: m.text, turn_number: turns.length + 1 });
      }
    };
    (u?.toolCalls ?? []).forEach((call, i) => {
      say(i);
      turns.push({ type: toolStepType(call.name), timestamp: end!.endTs, detail: `${call.name}: ${call.status ?? "no result reported"}`, turn_number: turns.length + 1, tool_call: call });
    });
    say(u?.toolCalls.length ?? 0);
    const toolSteps = turns;
    const steps = [this.spawnStep(model), ...toolSteps, ...(end?.steps ?? [])];
    const durationMs = end ? Math.max(0, (end.endTs - this.start.spawnTs) * 1000) : 0;
    if (end) {
      steps.push({
        type: end.outcome === "success" ? "complete" : "fail",
        timestamp: end.endTs,
        detail: `Agent exited with outcome: ${end.outcome}`,
        duration_ms: durationMs,
        files: u?.filesChanged ?? [],
        tokens: totalTokens,
      });
    }
    return {
      trace_id: this.traceId,
      session_id: this.start.sessionId,
      task_ids: [...this.start.taskIds],
      agent_role: this.start.role,
      model,
      effort: this.start.effort,
      spawn_ts: pyFloat(this.start.spawnTs),
      end_ts: end ? pyFloat(end.endTs) : null,
      steps: steps.map(stepObject),
      outcome: end ? end.outcome : "unknown",
      log_path: this.start.logPath,
      task_snapshots: (end ? end.tasks : this.start.tasks).map(taskSnapshot),
      total_allocated_budget: 0,
      total_consumed: pyInt(totalTokens),
      turn_count: pyInt(toolSteps.length),
      settings_snapshot: this.start.settings,
      result_summary: end ? end.resultSummary : null,
      ...(u
        ? {
            adapter: u.adapter,
            reported_model: u.reportedModel,
            duration_ms: pyFloat(durationMs),
            tokens: u.tokens ? { input: pyInt(u.tokens.input), cached_input: pyInt(u.tokens.cached), output: pyInt(u.tokens.output) } : null,
            cost_usd: pyFloat(u.costUsd),
            cost_source: u.costSource,
            files_changed: [...u.filesChanged],
          }
        : {}),
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
