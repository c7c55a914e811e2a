import { stopRun, type StopReport } from "../../session/stop.ts";
import { defineCliCommand } from "../command.ts";
import { printJson, printLines } from "../output.ts";
import { DEFAULT_STOP_TIMEOUT_S, parseTimeoutSeconds, stopDocument, stopFailure, stopLines, stopProgress } from "../stop-report.ts";
import { sddDirArgs } from "../args.ts";

export default defineCliCommand({
  meta: { name: "stop", description: "Stop the running orchestrator (graceful by default) and save the session" },
  args: {
    force: { type: "boolean", alias: ["hard"], description: "End running agents now instead of letting them finish (also --hard)" },
    timeout: { type: "string", default: String(DEFAULT_STOP_TIMEOUT_S), description: "Seconds running agents may take to finish (graceful stop)" },
    ...sddDirArgs,
  },
  async run({ args, json }) {
    const timeoutSeconds = parseTimeoutSeconds(args.timeout);
    const force = Boolean(args.force);
    const progress = stopProgress(json);
    const report: StopReport = await stopRun(args["sdd-dir"], { force, timeoutSeconds, onWait: progress.onWait });
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
