/**
 * Entry point of the `bernstein` binary. `--version` is answered before any
 * other module is loaded, so it costs only the runtime's start-up.
 */
import { VERSION } from "../version.ts";

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
  // console.log, not process.stdout: the Node stream would double the start-up time.
  console.log(VERSION);
} else if (process.env.BERNSTEIN_INTERNAL_WATCHDOG) {
  // An orchestrator's agent watchdog (src/orchestrator/watchdog.ts), never a command.
  void import("../orchestrator/watchdog.ts").then((m) => m.watch(process.env.BERNSTEIN_INTERNAL_WATCHDOG!));
} else {
  void import("./app.ts").then((m) => m.main(argv));
}
