import { UsageError } from "../../errors.ts";
import { defineCliCommand } from "../command.ts";

// PLACEHOLDER: replaced by the implementation of this command.
export default defineCliCommand({
  meta: { name: "run", description: "Plan a goal into tasks and run agents on them, recording the run journal" },
  run() {
    throw new UsageError("'run' is not implemented yet", "not_implemented");
  },
});
