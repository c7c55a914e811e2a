import { jsonFields, type JsonFields } from "../json-fields.ts";
import { NegativeError, UsageError, type BernsteinError } from "../errors/index.ts";
import { paint } from "../render/ansi.ts";
import { ServerUnreachableError } from "../server/errors.ts";
import type { StopReport } from "../session/stop.ts";
import { progressLine } from "./progress.ts";

/**
 * How a `stopRun` report is judged and shown, shared by `bernstein stop` and
 * `bernstein wrap-up --stop` so both say and exit the same for the same stop.
 */

/**
 * Seconds running agents may take to finish when `--timeout` is not given
 * (stop, wrap-up --stop): none, they are sent SIGTERM at once and get the
 * run's grace window (`run --grace`, `stop_grace_s`, 5 s) before SIGKILL, so
 * a stop fits a container's 10 s budget. `--timeout S` lets them finish first.
 */
export const DEFAULT_STOP_TIMEOUT_S = 0;

/** `--timeout S`: seconds (fractions allowed), 0..86400 like the server accepts. */
export function parseTimeoutSeconds(raw: string, flag = "timeout"): number {
  const t = raw.trim();
  const n = /^\d+(\.\d+)?$/.test(t) ? Number(t) : Number.NaN;
  if (!Number.isFinite(n) || n > 86_400) throw new UsageError(`--${flag} needs seconds between 0 and 86400, got ${JSON.stringify(raw)}`);
  return n;
}

/**
 * A progress line while waiting for the stopped process: on a terminal only,
 * redrawn once per second, erased by `end()`. No-ops under `--as-json`.
 */
export function stopProgress(json: boolean): { onWait: ((pid: number, elapsed: number) => void) | undefined; end(): void } {
  const line = progressLine();
  let shownSecond = -1;
  return {
    onWait: json
      ? undefined
      : (pid, elapsed) => {
          if (Math.floor(elapsed) === shownSecond) return;
          shownSecond = Math.floor(elapsed);
          line.draw(`waiting for pid ${pid} to exit… ${shownSecond}s`);
        },
    end: () => line.clear(),
  };
}

/**
 * The expected failure a stop report amounts to, or null when the run was
 * stopped: server unreachable (fallback written), stop refused, or the
 * process still running after the wait (all exit 1).
 */
export function stopFailure(report: StopReport): BernsteinError | null {
  if (!report.reachable) {
    // The stop could not be delivered; the diagnostic file is all we could save.
    return new ServerUnreachableError(
      `cannot reach the task server (${report.reason}); wrote ${report.fallback_path} instead ` +
        `(${report.fallback.open_tasks} open, ${report.fallback.claimed_tasks} claimed ticket(s)) — it is a diagnostic, not a resumable session`,
      {
        url: report.url,
        fallback_written: true,
        fallback_path: report.fallback_path,
        stopped_at: report.fallback.stopped_at,
        open_tasks: report.fallback.open_tasks,
        claimed_tasks: report.fallback.claimed_tasks,
      },
    );
  }
  const facts = { ...report };
  if (!report.stop_accepted) {
    return new NegativeError("stop_refused", `the server did not accept the stop: ${report.stop_detail}`, facts);
  }
  if (report.exited === false) {
    return new NegativeError(
      "stop_timeout",
      `${report.pid_role} (pid ${report.pid}) is still running after ${report.waited_s}s; run 'bernstein stop --force' to end its agents now`,
      facts,
    );
  }
  return null;
}

/** `stopDocument` of a stop the server took (docs/cli/stop.md; `stop_refused`/`stop_timeout` add error and detail). */
export const STOP_FIELDS: JsonFields = jsonFields([
  ["ok", "boolean", "The run (or server) was stopped"],
  ["error?", "\"stop_refused\" | \"stop_timeout\"", "The server did not accept the stop, or the process outlived the wait"],
  ["detail?", "string", "One line saying what failed"],
  ["reachable", "true", "The task server answered"],
  ["url", "string", "Its URL"],
  ["session_saved", "boolean", "session.json was written"],
  ["session_path", "string | null", "Where"],
  ["session_error", "string | null", "Why it was not (the stop still went ahead)"],
  ["completed", "number", "Tasks done"],
  ["pending", "number", "Tasks pending"],
  ["open", "number", "Tasks open"],
  ["counts_from", "\"final_session\" | \"stop_request\"", "Where the counts come from: the run's final save, or the task list when the stop was asked"],
  ["stop_accepted", "boolean", "The server accepted POST /stop"],
  ["stop_detail", "string", "What it said"],
  ["force", "boolean", "--force: agents killed at once"],
  ["timeout_s", "number", "--timeout: seconds agents could finish first"],
  ["grace_s", "number | null", "Seconds between SIGTERM and SIGKILL"],
  ["pid", "number | null", "The process waited for"],
  ["pid_role", "\"orchestrator\" | \"server\" | null", "What it is"],
  ["exited", "boolean | null", "It exited within the wait"],
  ["waited_s", "number", "Seconds waited"],
]);

/** `stopDocument` when no task server answers (`server_unreachable`, exit 1). */
export const STOP_UNREACHABLE_FIELDS: JsonFields = jsonFields([
  ["ok", "false", "Nothing could be stopped"],
  ["error", "\"server_unreachable\"", "No task server answered"],
  ["detail", "string", "Why, and where the diagnostic file went"],
  ["url", "string | null", "The URL tried"],
  ["fallback_written", "true", "The diagnostic session_state.json was written"],
  ["fallback_path", "string", "Where"],
  ["stopped_at", "number", "When (seconds since the epoch)"],
  ["open_tasks", "number", "Open tasks it lists"],
  ["claimed_tasks", "number", "Claimed tickets it lists"],
]);

/** The JSON document `bernstein stop --as-json` prints for this report (success or failure). */
export function stopDocument(report: StopReport): Record<string, unknown> {
  const err = stopFailure(report);
  if (err !== null) return { ok: false, error: err.code, detail: err.message, ...err.facts };
  return { ok: true, ...report };
}

/** Human lines for a successful stop (`stopFailure(report) === null`); failures are reported as errors. */
export function stopLines(report: StopReport): string[] {
  if (!report.reachable) return [];
  const lines: string[] = [];
  if (report.session_saved) {
    lines.push(
      `${paint("green", "Session saved")} to ${report.session_path} (${report.completed} done, ${report.pending} pending, ${report.open} open)`,
    );
  } else {
    lines.push(`${paint("yellow", "Session not saved")}: ${report.session_error}`);
  }
  const force = report.force;
  const window = report.grace_s === null ? "" : `, then ${report.grace_s}s after SIGTERM`;
  const allowance = report.timeout_s > 0 ? `agents get up to ${report.timeout_s}s to finish${window}` : `agents signalled now${window}`;
  lines.push(`${force ? "Hard" : "Graceful"} stop requested${force ? "" : ` (${allowance})`}: ${report.stop_detail}`);
  if (report.exited) lines.push(`${report.pid_role === "server" ? "Task server" : "Orchestrator"} (pid ${report.pid}) exited after ${report.waited_s}s.`);
  return lines;
}
