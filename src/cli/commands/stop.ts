import { STOP_FIELDS, STOP_UNREACHABLE_FIELDS } from "../stop-report.ts";
import { stopRun, type StopReport } from "../../session/stop.ts";
import { defineCliCommand } from "../command.ts";
import { printJson, printLines } from "../output.ts";
import { DEFAULT_STOP_TIMEOUT_S, parseTimeoutSeconds, stopDocument, stopFailure, stopLines, stopProgress } from "../stop-report.ts";
import { sddDirArgs } from "../args.ts";

export default defineCliCommand({
  docs: {
    exits: { 0: "stopped, the session saved", 1: "no task server answered (a diagnostic file is written instead), the stop was refused, or the process outlived the wait" },
    json: [
      { when: "when no task server answers", fields: STOP_UNREACHABLE_FIELDS, example: "bernstein stop" },
      { when: "when the server answers", fields: STOP_FIELDS, example: "bernstein stop", server: "stops" },
    ],
  },
  meta: { name: "stop", description: "Stop the running orchestrator (graceful by default) and save the session" },
  args: {
    force: { type: "boolean", alias: ["hard"], description: "End running agents now instead of letting them finish (also --hard)" },
    timeout: {
      type: "string",
      default: String(DEFAULT_STOP_TIMEOUT_S),
      description: "Seconds running agents may take to finish before they are sent SIGTERM (0: at once)",
    },
    grace: { type: "string", description: "Seconds signalled agents get between SIGTERM and SIGKILL (default: the run's --grace / stop_grace_s, 5)" },
    ...sddDirArgs,
  },
  async run({ args, json }) {
    const timeoutSeconds = parseTimeoutSeconds(args.timeout);
    const graceSeconds = args.grace === undefined ? null : parseTimeoutSeconds(args.grace, "grace");
    const force = Boolean(args.force);
    const progress = stopProgress(json);
    const report: StopReport = await stopRun(args["sdd-dir"], { force, timeoutSeconds, graceSeconds, onWait: progress.onWait });
    progress.end();

    const failure = stopFailure(report);
    if (failure !== null) throw failure;
    if (json) {
      await printJson(stopDocument(report));
      return 0;
    }
    await printLines(...stopLines(report));
    return 0;
  },
});
