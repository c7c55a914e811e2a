import { UsageError } from "../../../errors.ts";
import { defineCliCommand } from "../../command.ts";

// PLACEHOLDER: replaced by the implementation of this command.
export default defineCliCommand({
  meta: { name: "verify", description: "Verify a run journal's Merkle chain, coverage and seal" },
  run() {
    throw new UsageError("'verify' is not implemented yet", "not_implemented");
  },
});
