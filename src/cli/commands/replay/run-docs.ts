import type { CommandDocs } from "../../../json-fields.ts";
import { REPLAY_VERIFY_FIELDS } from "../../../journal/verdict.ts";
import { PROJECTION_FIELDS } from "../../../replay/fast-project.ts";
import { RUN_JSON_FIELDS } from "../../../replay/run-json.ts";
import { AGENT_VIEW_FIELDS } from "../../../steps/verdict.ts";
import { CHAIN_FIELDS } from "./show.ts";
import { TIMELINE_FIELDS } from "./timeline.ts";

/**
 * What `replay latest` and `replay <RUN_ID>` print under `--as-json`, one
 * document per operation (each declared where it is built), with `run` the
 * word the examples use for the run.
 */
export function runDocs(run: "latest" | "$RUN"): CommandDocs {
  return {
    json: [
      { fields: RUN_JSON_FIELDS, example: `bernstein replay ${run} --limit 3` },
      { when: "with --verify", fields: REPLAY_VERIFY_FIELDS, example: `bernstein replay ${run} --verify` },
      { when: "with --from-step N", fields: PROJECTION_FIELDS, example: `bernstein replay ${run} --from-step 2` },
      { when: "with --with-previous", fields: CHAIN_FIELDS, example: `bernstein replay ${run} --with-previous --limit 1` },
      { when: "with --html", fields: TIMELINE_FIELDS, example: `bernstein replay ${run} --html timeline.html --force` },
    ],
    exits: { 0: "shown, or verified whole", 1: "--verify: a chain break, partial coverage or a seal mismatch", 3: "no such run, or its journal cannot be read" },
  };
}

/** `replay <AGENT_ID> --as-json`. */
export const AGENT_DOCS: CommandDocs = {
  exits: { 0: "the step journal verifies", 1: "it does not (chain or head)", 3: "no such agent" },
  json: [{ fields: AGENT_VIEW_FIELDS, example: "bernstein replay $AGENT --limit 2" }],
};
