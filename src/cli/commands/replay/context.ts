import type { ParsedArgs } from "citty";
import type { replayArgs } from "./args.ts";
import type { commonArgs } from "../../command.ts";

/**
 * What every replay verb handler receives. `positionals` are the words after
 * the verb (for `replay <ID>` they are `[ID]`), `args` the parsed flags.
 */
export interface ReplayContext {
  positionals: string[];
  args: ParsedArgs<typeof replayArgs & typeof commonArgs>;
  json: boolean;
  sddDir: string;
  rawArgs: string[];
}

/** A verb handler returns the exit code; expected failures throw BernsteinError. */
export type ReplayHandler = (ctx: ReplayContext) => Promise<number>;
