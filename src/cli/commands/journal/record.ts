import { UsageError } from "../../../errors.ts";
import { defineCliCommand } from "../../command.ts";

// PLACEHOLDER: replaced by the implementation of this command.
export default defineCliCommand({
  meta: { name: "record", description: "Append events to a run journal" },
  run() {
    throw new UsageError("'record' is not implemented yet", "not_implemented");
  },
});
