import { NegativeError, UsageError } from "../../errors.ts";
import { ServerUnreachableError } from "../../server/errors.ts";
import { stopRun, type StopReport } from "../../session/stop.ts";
import { paint } from "../../render/ansi.ts";
import { defineCliCommand } from "../command.ts";
import { printJson, printLines } from "../output.ts";

/** `--timeout S`: seconds (fractions allowed), 0..86400 like the server accepts. */
export function parseTimeoutSeconds(raw: string, flag = "timeout"): number {
  const t = raw.trim();
  const n = /^\d+(\.\d+)?$/.test(t) ? Number(t) : Number.NaN;
  if (!Number.isFinite(n) || n > 86_400) throw new UsageError(`--${flag} needs seconds between 0 and 86400, got ${JSON.stringify(raw)}`);
  return n;
}

let shownSecond = -1;
/** A progress line on a terminal only, redrawn once per second. */
function progressLine(pid: number, elapsed: number): void {
  if (!process.stderr.isTTY || Math.floor(elapsed) === shownSecond) return;
  shownSecond = Math.floor(elapsed);
  process.stderr.write(`\rwaiting for pid ${pid} to exit… ${shownSecond}s\x1b[K`);
}

function endProgress(): void {
  if (process.stderr.isTTY) process.stderr.write("\r\x1b[K");
}

export default defineCliCommand({
  meta: { name: "stop", description: "Stop the running orchestrator (graceful by default) and save the session" },
  args: {
    force: { type: "boolean", alias: ["hard"], description: "End running agents now instead of letting them finish" },
    timeout: { type: "string", default: "30", description: "Seconds running agents may take to finish (graceful stop)" },
    "sdd-dir": { type: "string", default: ".sdd", description: "State directory" },
  },
  async run({ args, json }) {
    const timeoutSeconds = parseTimeoutSeconds(args.timeout);
    const force = Boolean(args.force);
    const report: StopReport = await stopRun(args["sdd-dir"], { force, timeoutSeconds, onWait: json ? undefined : progressLine });
    endProgress();

    if (!report.reachable) {
      // The stop could not be delivered; the diagnostic file is all we could save.
      throw new ServerUnreachableError(
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
      throw new NegativeError("stop_refused", `the server did not accept the stop: ${report.stop_detail}`, facts);
    }
    if (report.exited === false) {
      throw new NegativeError(
        "stop_timeout",
        `${report.pid_role} (pid ${report.pid}) is still running after ${report.waited_s}s; run 'bernstein stop --force' to end its agents now`,
        facts,
      );
    }
    if (json) {
      await printJson({ ok: true, ...report });
      return 0;
    }
    const lines: string[] = [];
    if (report.session_saved) {
      lines.push(
        `${paint("green", "Session saved")} to ${report.session_path} (${report.completed} done, ${report.pending} pending, ${report.open} open)`,
      );
    } else {
      lines.push(`${paint("yellow", "Session not saved")}: ${report.session_error}`);
    }
    lines.push(`${force ? "Hard" : "Graceful"} stop requested${force ? "" : ` (agents get up to ${report.timeout_s}s)`}: ${report.stop_detail}`);
    if (report.exited) lines.push(`${report.pid_role === "server" ? "Task server" : "Orchestrator"} (pid ${report.pid}) exited after ${report.waited_s}s.`);
    await printLines(...lines);
    return 0;
  },
});
