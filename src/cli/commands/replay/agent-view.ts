import { UsageError } from "../../../errors.ts";
import type { ReplayContext } from "./context.ts";

// PLACEHOLDER: replaced by the implementation of this verb.
export async function runAgentView(_ctx: ReplayContext): Promise<number> {
  throw new UsageError("'replay agent-view' is not implemented yet", "not_implemented");
}
