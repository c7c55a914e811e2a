/**
 * What an attempt leaves behind besides the run journal: one step in the
 * agent's step journal (prompt in, invocation, result out) and the final
 * copy of its task trace.
 */
import { createHash } from "node:crypto";
import { isAbsolute, relative, sep } from "node:path";
import { pyFloat } from "../pyjson/types.ts";
import type { Task } from "../server/model.ts";
import { StepJournal, type StepInput } from "../steps/writer.ts";
import type { TraceRecorder } from "../traces/writer.ts";
import type { AttemptResult } from "./attempt.ts";
import type { ToolCall } from "./result.ts";

export interface AttemptRecord {
  sddDir: string;
  agentId: string;
  adapter: string;
  recordedArgv: string[];
  workdir: string;
  task: Task;
  model: string | null;
  effort: string | null;
  prompt: string;
  result: AttemptResult;
  summary: string | null;
  /** The steps of the first tool calls, as appended live while the agent ran (live-stream.ts). */
  toolCallsJournaled?: readonly StepInput[];
}

/** The step of one tool call the CLI reported: the same row whether appended live or at reap. */
export function toolCallStep(call: ToolCall, taskId: string, model: string | null, effort: string | null): StepInput {
  return {
    input_hash: sha256(`${call.name}\n${call.input}`),
    model,
    prompt: null,
    tool_call: { name: call.name, input: call.input, task_id: taskId },
    // A refused call says why (`permission_denied`, `no_write_tool`): status `denied`.
    tool_result: { status: call.status, output: call.output, ...(call.refused ? { reason: call.refused } : {}) },
    ...(effort ? { effort } : {}),
  };
}

function sameStep(a: StepInput, b: StepInput): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * A recorded path as it reads inside the project: the workdir is `.`, a
 * path under it is relative, and our own executable is `bernstein`, so a
 * step journal (and a receipt made from it) does not carry the producing
 * machine's directories. Other absolute paths (system tools) stay as given.
 */
export function portablePath(arg: string, workdir: string): string {
  if (arg === process.execPath) return "bernstein";
  if (!isAbsolute(arg)) return arg;
  if (arg === workdir) return ".";
  const rel = relative(workdir, arg);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel.split(sep).join("/") : arg;
}

const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

/**
 * Append the attempt: first one step per tool call the CLI reported (so
 * the agent view's TOOL column names them), then the invocation step with
 * input hash = SHA-256 of the prompt, the result, tokens and cost.
 */
export function appendAgentStep(r: AttemptRecord): void {
  const j = StepJournal.open(r.sddDir, r.agentId);
  try {
    // Calls already appended live (live-stream.ts) are not written twice; one whose final word
    // differs from its live row (a denial an older claude reports only in its result) is written again.
    const live = r.toolCallsJournaled ?? [];
    r.result.toolCalls.forEach((call, i) => {
      const step = toolCallStep(call, r.task.id, r.model, r.effort);
      if (i < live.length && sameStep(live[i]!, step)) return;
      j.append(step);
    });
    const t = r.result.tokens;
    j.append({
      input_hash: sha256(r.prompt),
      model: r.model,
      prompt: r.prompt,
      tool_call: { name: r.adapter, adapter: r.adapter, argv: r.recordedArgv.map((a) => portablePath(a, r.workdir)), cwd: portablePath(r.workdir, r.workdir), task_id: r.task.id },
      tool_result: {
        exit_code: r.result.exitCode,
        outcome: r.result.outcome,
        result_summary: r.summary,
        cost_usd: pyFloat(r.result.costUsd),
        cost_source: r.result.costSource,
        tokens: t ? { input: t.input, cached_input: t.cached, output: t.output } : null,
        session_id: r.result.sessionId,
        tool_calls: r.result.toolCalls.length,
        failed_signals: r.result.failedSignals,
        duration_s: pyFloat(Math.round((r.result.endedAt - r.result.startedAt) * 1000) / 1000),
      },
      // `effort` is versioned by omission: absent from the row and the hash when unset.
      ...(r.effort ? { effort: r.effort } : {}),
    });
  } finally {
    j.close();
  }
}

/**
 * Finalise the trace: outcome, result, the task as it now stands, the tool
 * calls the CLI reported, gate steps, and what the attempt cost and changed
 * (`filesChanged` read from the work tree by the caller).
 */
export function finalizeTrace(trace: TraceRecorder, result: AttemptResult, summary: string | null, after: Task, adapter: string, filesChanged: string[]): void {
  trace.finalize({
    usage: {
      adapter,
      reportedModel: result.reportedModel,
      tokens: result.tokens,
      costUsd: result.costUsd,
      costSource: result.costSource,
      toolCalls: result.toolCalls,
      messages: result.messages,
      filesChanged,
    },
    endTs: result.endedAt,
    outcome: result.outcome === "success" ? "success" : "failed",
    resultSummary: summary,
    tasks: [after],
    steps: result.gates.map((g) => ({
      type: "verify" as const,
      timestamp: result.endedAt,
      detail: `gate ${g.name}: ${g.exit_code === 0 ? "passed" : g.timed_out ? "timed out" : `exit ${g.exit_code}`}`,
    })),
  });
}
