import { existsSync } from "node:fs";
import { join } from "node:path";
import { validateRunId } from "../../../journal/paths.ts";
import { UsageError } from "../../../errors/index.ts";
import { closest } from "../../suggest.ts";
import { VERB_NAMES } from "./verbs.ts";
import { assertJournalExists, resolveRun, type RunRef } from "../../../replay/discovery.ts";
import { log } from "../../log.ts";
import type { ReplayContext } from "./context.ts";

/**
 * `bernstein replay <ID>`: decide what ID names, in this order:
 *  0. `--html [OUT]` → the run's timeline page (the run, or `latest`, then OUT);
 *     `--follow` → the run's events as they are appended (replay/follow.ts);
 *  1. `--verify` / `--from-step` → run-journal operation on the run (or `latest`);
 *  2. `list` → the run list;
 *  3. `<sdd>/runtime/journal/<ID>` exists → the agent step-journal view;
 *  4. `latest`, or `<sdd>/runs/<ID>/journal.jsonl` exists → the run display;
 *  5. a task with a trace under `<sdd>/traces` → task-trace replay;
 *  6. otherwise `unknown_target` (exit 2, listing the verbs), or
 *     `journal_missing` (exit 3) when the run directory exists without a journal.
 * An ID that is no valid run id and names no agent journal is refused
 * (`invalid_run_id`, exit 2) before anything touches the file system with it.
 */
export async function runTarget(ctx: ReplayContext): Promise<number> {
  const id = ctx.positionals[0];
  if (ctx.args.html) {
    if (id === undefined) throw new UsageError("usage: bernstein replay <RUN_ID | latest> --html [OUT | -]");
    if (ctx.args.verify || ctx.args["from-step"] !== undefined) throw new UsageError("--html is its own operation (it verifies the journal first); give it without --verify / --from-step");
    const { runTimeline } = await import("./timeline.ts");
    return runTimeline(ctx, resolveNamedRun(ctx, id, true));
  }
  if (id === undefined || ctx.positionals.length !== 1) throw new UsageError("usage: bernstein replay <RUN_ID | AGENT_ID | TASK_ID | latest | list>");

  if (ctx.args.follow) {
    const { followRun } = await import("./follow.ts");
    return followRun(ctx, resolveNamedRun(ctx, id, true));
  }

  if (ctx.args.verify || ctx.args["from-step"] !== undefined) {
    if (ctx.args.verify && ctx.args["from-step"] !== undefined) {
      throw new UsageError("--verify and --from-step are separate operations; give one of them");
    }
    // --verify checks a missing journal against its seal itself (a deleted, sealed journal is a verdict).
    const run = resolveNamedRun(ctx, id, !ctx.args.verify);
    const ops = await import("./run-ops.ts");
    return ctx.args.verify ? ops.verifyRun(ctx, run) : ops.projectRun(ctx, run);
  }

  if (id === "list") {
    ctx.positionals = [];
    const { runList } = await import("./list.ts");
    return runList(ctx);
  }

  if (isPathComponent(id) && existsSync(join(ctx.sddDir, "runtime", "journal", id))) {
    const { runAgentView } = await import("./agent-view.ts");
    return runAgentView(ctx);
  }

  if (id === "latest") {
    const { showRun } = await import("./show.ts");
    return showRun(ctx, resolveNamedRun(ctx, id, true));
  }
  validateRunId(id);
  const run = resolveRun(ctx.sddDir, id, { requireJournal: false });
  if (existsSync(run.journal)) {
    const { showRun } = await import("./show.ts");
    return showRun(ctx, run);
  }
  // A word that is no run, no agent and no traced task is most likely a mistyped verb:
  // say so before the task-replay flags are checked against it.
  const { latestTraceForTask } = await import("../../../traces/reader.ts");
  if (latestTraceForTask(ctx.sddDir, id).trace === null) {
    assertJournalExistsIfRunDir(run);
    throw unknownTarget(id, ctx.sddDir);
  }
  const { runTaskReplay } = await import("./task.ts");
  return runTaskReplay(ctx);
}

function assertJournalExistsIfRunDir(run: RunRef): void {
  if (existsSync(run.runDir)) assertJournalExists(run);
}

/** `unknown_target` (exit 2): names what was looked for and lists the verbs, with the closest one. */
function unknownTarget(id: string, sddDir: string): UsageError {
  const hint = closest(id, [...VERB_NAMES]);
  return new UsageError(
    `'${id}' is not a replay command, and no run, agent journal or task trace has that id under ${sddDir}` +
      `${hint ? ` (did you mean 'bernstein replay ${hint}'?)` : ""}; commands: ${VERB_NAMES.join(", ")}; see 'bernstein replay list'`,
    "unknown_target",
    { target: id, commands: VERB_NAMES, ...(hint ? { suggestion: hint } : {}) },
  );
}

/** A single path component: never `.`/`..`, no separators, no NUL. */
function isPathComponent(s: string): boolean {
  return s !== "" && s !== "." && s !== ".." && !/[/\\\0]/.test(s);
}

/**
 * Resolve a run id or `latest` for run-journal operations. `latest` is
 * announced on stderr (never inside the JSON on stdout).
 */
export function resolveNamedRun(ctx: ReplayContext, id: string, requireJournal: boolean): RunRef {
  const { unreadable, ...run } = resolveRun(ctx.sddDir, id, { requireJournal });
  for (const u of unreadable ?? []) log.warn(`latest: skipped run ${u.runId}, whose start could not be read (${u.reason})`);
  if (id === "latest") log.info(`Replaying latest run: ${run.runId}`);
  return run;
}
