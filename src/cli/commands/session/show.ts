import { UsageError } from "../../../errors.ts";
import { defineCliCommand } from "../../command.ts";

// PLACEHOLDER: replaced by the implementation of this command.
export default defineCliCommand({
  meta: { name: "show", description: "Show the saved session state" },
  run() {
    throw new UsageError("'show' is not implemented yet", "not_implemented");
  },
});
