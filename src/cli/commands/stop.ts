import { UsageError } from "../../errors.ts";
import { defineCliCommand } from "../command.ts";

// PLACEHOLDER: replaced by the implementation of this command.
export default defineCliCommand({
  meta: { name: "stop", description: "Stop the running orchestrator (graceful by default) and save the session" },
  run() {
    throw new UsageError("'stop' is not implemented yet", "not_implemented");
  },
});
