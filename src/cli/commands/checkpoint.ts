import { UsageError } from "../../errors.ts";
import { defineCliCommand } from "../command.ts";

// PLACEHOLDER: replaced by the implementation of this command.
export default defineCliCommand({
  meta: { name: "checkpoint", description: "Write a checkpoint of the current session under .sdd/sessions" },
  run() {
    throw new UsageError("'checkpoint' is not implemented yet", "not_implemented");
  },
});
