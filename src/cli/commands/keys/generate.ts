import { UsageError } from "../../../errors.ts";
import { defineCliCommand } from "../../command.ts";

// PLACEHOLDER: replaced by the implementation of this command.
export default defineCliCommand({
  meta: { name: "generate", description: "Generate an Ed25519 key pair for signing receipts" },
  run() {
    throw new UsageError("'generate' is not implemented yet", "not_implemented");
  },
});
