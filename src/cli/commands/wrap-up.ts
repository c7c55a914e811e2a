import { jsonDoc } from "../../json-fields.ts";
import { BernsteinError, UsageError } from "../../errors/index.ts";
import { paint } from "../../render/ansi.ts";
import { captureWrapUp } from "../../session/capture.ts";
import { stopRun, type StopReport } from "../../session/stop.ts";
import type { WrapUpBrief } from "../../session/wrapup.ts";
import { defineCliCommand } from "../command.ts";
import { printJson, printLines } from "../output.ts";
import { DEFAULT_STOP_TIMEOUT_S, parseTimeoutSeconds, stopDocument, stopFailure, stopLines, stopProgress } from "../stop-report.ts";
import { sddDirArgs } from "../args.ts";

/**
 * `wrap-up --stop` once the brief is written: the success document
 * `{ok, path, ...brief, stop}`, or the error to raise. A stop that fails
 * fails the command with the code and exit status `bernstein stop` would
 * have (exit 1); the brief stays written and is in the error's facts, with
 * `stop` exactly as `bernstein stop --as-json` prints it.
 */
export function wrapUpStopOutcome(
  path: string,
  brief: WrapUpBrief,
  report: StopReport,
): { ok: true; document: Record<string, unknown> } | { ok: false; error: BernsteinError } {
  const stop = stopDocument(report);
  const failure = stopFailure(report);
  if (failure === null) return { ok: true, document: { ok: true, path, ...brief, stop } };
  return {
    ok: false,
    error: new BernsteinError(
      failure.code,
      `wrap-up brief written to ${path}, but the run was not stopped: ${failure.message}`,
      failure.exitCode,
      { path, ...brief, stop },
    ),
  };
}

function briefLines(path: string, brief: WrapUpBrief): string[] {
  return [
    `Wrap-up brief written to ${path}`,
    "",
    paint("bold", "Changes"),
    brief.changes_summary,
    "",
    paint("bold", "Learnings"),
    ...(brief.learnings.length ? brief.learnings.map((l) => `- ${l}`) : ["(none)"]),
    "",
    paint("bold", "Next session"),
    brief.next_session_brief,
    "",
    paint("bold", "Diff stat"),
    brief.git_diff_stat,
  ];
}

export default defineCliCommand({
  docs: {
    exits: { 0: "written (and stopped)", 1: "the task server cannot be reached (nothing written or stopped), or the stop failed (the brief is kept)" },
    json: [
      jsonDoc({ example: "bernstein wrap-up", server: "needs" }, [
        ["ok", "true", "The brief was written (and with --stop, the run stopped)"],
        ["path", "string", "Its file under .sdd/sessions/"],
        ["timestamp", "number", "When (seconds since the epoch)"],
        ["session_id", "string", "The session it sums up"],
        ["completed_task_ids", "string[]", "Tasks done"],
        ["changes_summary", "string", "What changed"],
        ["git_diff_stat", "string", "git diff --stat of the work tree"],
        ["learnings", "string[]", "What the run learned"],
        ["next_session_brief", "string", "What the next session should start from"],
        ["stop?", "object", "--stop: the stop, as `bernstein stop --as-json` prints it"],
      ]),
    ],
  },
  meta: { name: "wrap-up", description: "Write a wrap-up brief under .sdd/sessions; with --stop, then stop the run" },
  args: {
    stop: {
      type: "boolean",
      description: "Once the brief is written, stop the run gracefully as 'bernstein stop' does (exit 1 if it cannot be stopped)",
    },
    timeout: { type: "string", description: `With --stop: seconds running agents may take to finish before they are sent SIGTERM (default ${DEFAULT_STOP_TIMEOUT_S}: at once)` },
    ...sddDirArgs,
  },
  async run({ args, json }) {
    const sddDir = args["sdd-dir"];
    const stop = Boolean(args.stop);
    // Refused rather than ignored: a timeout nobody waits for would look like a stop.
    if (args.timeout !== undefined && !stop) {
      throw new UsageError("--timeout does not apply without --stop", "flag_not_applicable", { flags: ["--timeout"] });
    }
    const timeoutSeconds = args.timeout === undefined ? DEFAULT_STOP_TIMEOUT_S : parseTimeoutSeconds(args.timeout);

    let captured: Awaited<ReturnType<typeof captureWrapUp>>;
    try {
      captured = await captureWrapUp(sddDir);
    } catch (err) {
      // No brief, no stop: say so in the one document (`stop: null`, not attempted).
      if (stop && err instanceof BernsteinError) throw new BernsteinError(err.code, err.message, err.exitCode, { ...err.facts, stop: null });
      throw err;
    }
    const { path, brief } = captured;

    if (!stop) {
      if (json) await printJson({ ok: true, path, ...brief });
      else await printLines(...briefLines(path, brief));
      return 0;
    }

    // The brief first, so it is on screen while the run winds down.
    if (!json) await printLines(...briefLines(path, brief), "");
    const progress = stopProgress(json);
    const report = await stopRun(sddDir, { force: false, timeoutSeconds, onWait: progress.onWait });
    progress.end();
    const outcome = wrapUpStopOutcome(path, brief, report);
    if (!outcome.ok) throw outcome.error;
    if (json) await printJson(outcome.document);
    else await printLines(paint("bold", "Stop"), ...stopLines(report));
    return 0;
  },
});
