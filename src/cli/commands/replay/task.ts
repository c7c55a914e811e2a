import { InputError, NegativeError, UsageError } from "../../../errors/index.ts";
import { jsonDoc, type CommandDocs } from "../../../json-fields.ts";
import { TaskClient, requireServer } from "../../../server/client.ts";
import { paint } from "../../../render/ansi.ts";
import { isSafeTaskId, latestTraceForTask, tracesDir } from "../../../traces/reader.ts";
import { prepareReplay, runReplay, TraceWithoutSnapshotError, type ReplayOutcome, type ReplayPlan } from "../../../traces/replay.ts";
import { log } from "../../log.ts";
import { printJson, printLines } from "../../output.ts";
import { progressLine } from "../../progress.ts";
import { parseTimeoutSeconds } from "../../stop-report.ts";
import type { ReplayContext } from "./context.ts";
import { REPLAY_TARGETS, REPLAY_VERBS } from "./verbs.ts";
import { refuseFlags } from "./flags.ts";

/** Seconds to wait for the replayed task when `--timeout` is not given (Python polls 30 s). */
export const DEFAULT_REPLAY_TIMEOUT_S = 30;

function colourDiff(diff: string): string[] {
  return diff.split("\n").map((line) => {
    if (line.startsWith("---") || line.startsWith("+++")) return paint("bold", line);
    if (line.startsWith("@@")) return paint("cyan", line);
    if (line.startsWith("-")) return paint("red", line);
    if (line.startsWith("+")) return paint("green", line);
    return line;
  });
}

/**
 * `bernstein replay <TASK_ID> [--model M] [--extra-context TEXT] [--timeout S]`:
 * re-run a task recorded in `<sdd>/traces` as a new task on the running
 * server and diff the result summaries. Reached when no run or agent journal
 * has that id.
 */
export async function runTaskReplay(ctx: ReplayContext): Promise<number> {
  refuseFlags(ctx, REPLAY_TARGETS.TASK_ID!.flags, "replay <TASK_ID>");
  const taskId = ctx.positionals[0] ?? "";
  if (!isSafeTaskId(taskId)) {
    throw new UsageError(`invalid task id ${JSON.stringify(taskId)}: must match ^[A-Za-z0-9_.-]{1,64}$`, "invalid_task_id");
  }
  const timeoutSeconds = ctx.args.timeout === undefined ? DEFAULT_REPLAY_TIMEOUT_S : parseTimeoutSeconds(ctx.args.timeout);
  if (ctx.args.model !== undefined && ctx.args.model.trim() === "") throw new UsageError("--model needs a model name");

  const { trace, warnings } = latestTraceForTask(ctx.sddDir, taskId);
  for (const w of warnings) log.warn(w);
  if (trace === null) {
    throw new InputError("trace_not_found", `No trace found for task: ${taskId} (looked in ${tracesDir(ctx.sddDir)})`, { task_id: taskId });
  }
  let plan: ReplayPlan;
  try {
    plan = prepareReplay(trace, taskId, { model: ctx.args.model, extraContext: ctx.args["extra-context"] });
  } catch (err) {
    if (err instanceof TraceWithoutSnapshotError) throw new InputError("trace_without_snapshot", err.message, { task_id: taskId, trace_id: err.traceId });
    throw err;
  }
  const client = new TaskClient(requireServer(ctx.sddDir));

  const progress = progressLine();
  let outcome: ReplayOutcome;
  try {
    outcome = await runReplay(
      {
        createTask: (body) => client.createTask(body),
        getTask: async (id) => {
          const t = await client.getTask(id);
          if (t === null) throw new NegativeError("replay_task_lost", `the replay task ${id} disappeared from the server`, { task_id: taskId, replay_task_id: id });
          return t;
        },
        cancelTask: (id, reason) => client.setStatus(id, "cancelled", reason),
      },
      plan,
      {
        timeoutSeconds,
        onProgress: ctx.json ? undefined : (e) => progress.draw(`replay task ${e.replayTaskId}: ${e.status} (${e.elapsedSeconds.toFixed(0)}s)`),
      },
    );
  } finally {
    progress.clear();
  }

  const ok = outcome.status === "done";
  if (ctx.json) {
    if (ok) await printJson({ ok, ...outcome });
    else {
      const [error, detail] =
        outcome.status === "timeout"
          ? ["replay_timeout", `the replay task did not finish within ${timeoutSeconds}s; ${outcome.cancelled ? "it was cancelled" : `it could not be cancelled (${outcome.cancel_error})`}`]
          : [outcome.status === "cancelled" ? "replay_cancelled" : "replay_failed", `the replay task ended ${outcome.status}`];
      await printJson({ ok, error, detail, ...outcome });
    }
    return ok ? 0 : 1;
  }
  const lines = [`Replay task created: ${outcome.replay_task_id} (replaying ${taskId}, trace ${plan.traceId})`];
  if (outcome.status === "timeout") {
    lines.push(
      paint(
        "yellow",
        outcome.cancelled
          ? `Replay task did not finish within ${timeoutSeconds}s; it was cancelled on the server.`
          : `Replay task did not finish within ${timeoutSeconds}s and could not be cancelled (${outcome.cancel_error}); cancel it with POST /tasks/${outcome.replay_task_id}/status.`,
      ),
    );
  } else {
    if (!ok) lines.push(paint("red", `Replay task ${outcome.status}.`));
    if (outcome.diff === "") lines.push("Replay completed with no result-summary diff.");
    else lines.push(...colourDiff(outcome.diff));
  }
  await printLines(...lines);
  return ok ? 0 : 1;
}

/** `replay <TASK_ID> --as-json`: `ok` (with error and detail when not done), then the outcome (docs/cli/replay.md). */
export const TASK_DOCS: CommandDocs = {
  exits: { 0: "the replay finished done", 1: "it failed, was cancelled or timed out, or no task server answers", 3: "no trace of that task" },
  json: [
    jsonDoc({ example: "bernstein replay design-api --timeout 1", server: "needs" }, [
      ["ok", "boolean", "The replay task finished done"],
      ["error?", "string", "replay_timeout, replay_failed or replay_cancelled"],
      ["detail?", "string", "One line saying how it ended"],
      ["task_id", "string", "The traced task replayed"],
      ["replay_task_id", "string", "The task the replay created on the server"],
      ["status", "\"done\" | \"failed\" | \"cancelled\" | \"timeout\"", "How it ended"],
      ["original_result_summary", "string", "The traced run's result summary"],
      ["result_summary", "string | null", "The replay's"],
      ["diff", "string", "A unified diff of the two summaries (\"\" when equal or none)"],
      ["cancelled?", "boolean", "On timeout: the replay task was cancelled"],
      ["cancel_error?", "string", "On timeout: why the cancel failed"],
    ]),
  ],
};
