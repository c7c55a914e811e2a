import { UsageError } from "../../../errors.ts";
import type { ReplayContext } from "./context.ts";

// PLACEHOLDER: replaced by the implementation of this verb.
export async function runList(_ctx: ReplayContext): Promise<number> {
  throw new UsageError("'replay list' is not implemented yet", "not_implemented");
}
