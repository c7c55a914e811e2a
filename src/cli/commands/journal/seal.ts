import { UsageError } from "../../../errors.ts";
import { defineCliCommand } from "../../command.ts";

// PLACEHOLDER: replaced by the implementation of this command.
export default defineCliCommand({
  meta: { name: "seal", description: "Seal a run journal's head and event count" },
  run() {
    throw new UsageError("'seal' is not implemented yet", "not_implemented");
  },
});
