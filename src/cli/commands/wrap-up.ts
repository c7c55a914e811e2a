import { UsageError } from "../../errors.ts";
import { defineCliCommand } from "../command.ts";

// PLACEHOLDER: replaced by the implementation of this command.
export default defineCliCommand({
  meta: { name: "wrap-up", description: "Write a wrap-up brief of the session under .sdd/sessions" },
  run() {
    throw new UsageError("'wrap-up' is not implemented yet", "not_implemented");
  },
});
