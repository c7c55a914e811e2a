import { UsageError } from "../../../errors.ts";
import { defineCliCommand } from "../../command.ts";

// PLACEHOLDER: replaced by the implementation of this command.
export default defineCliCommand({
  meta: { name: "start", description: "Start the task server in the foreground" },
  run() {
    throw new UsageError("'start' is not implemented yet", "not_implemented");
  },
});
