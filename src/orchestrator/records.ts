/**
 * What an attempt leaves behind besides the run journal: one step in the
 * agent's step journal (prompt in, invocation, result out) and the final
 * copy of its task trace.
 */
import { createHash } from "node:crypto";
import { isAbsolute, relative, sep } from "node:path";
import { pyFloat } from "../pyjson/types.ts";
import type { Task } from "../server/model.ts";
import { StepJournal } from "../steps/writer.ts";
import type { TraceRecorder } from "../traces/writer.ts";
import type { AttemptResult } from "./attempt.ts";

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

/** Append the attempt as one step: input hash = SHA-256 of the prompt. */
export function appendAgentStep(r: AttemptRecord): void {
  const j = StepJournal.open(r.sddDir, r.agentId);
  try {
    j.append({
      input_hash: createHash("sha256").update(r.prompt, "utf8").digest("hex"),
      model: r.model,
      prompt: r.prompt,
      tool_call: { adapter: r.adapter, argv: r.recordedArgv.map((a) => portablePath(a, r.workdir)), cwd: portablePath(r.workdir, r.workdir), task_id: r.task.id },
      tool_result: {
        exit_code: r.result.exitCode,
        outcome: r.result.outcome,
        result_summary: r.summary,
        cost_usd: pyFloat(r.result.costUsd),
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

/** Finalise the trace: outcome, result, the task as it now stands, gate steps. */
export function finalizeTrace(trace: TraceRecorder, result: AttemptResult, summary: string | null, after: Task): void {
  trace.finalize({
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
