import { UsageError } from "../../errors.ts";
import { defineCliCommand } from "../command.ts";

// PLACEHOLDER: replaced by the implementation of this command.
export default defineCliCommand({
  meta: { name: "status", description: "Show the task server, the run, its tasks and whether a resumable session exists" },
  run() {
    throw new UsageError("'status' is not implemented yet", "not_implemented");
  },
});
