import { jsonDoc, type CommandDocs } from "../../../json-fields.ts";
import { RefusalError } from "../../../errors/index.ts";
import { repairJournalTail } from "../../../journal/repair.ts";
import { printJson, printLines } from "../../output.ts";
import type { ReplayContext } from "./context.ts";
import { REPLAY_TARGETS, REPLAY_VERBS } from "./verbs.ts";
import { expectPositionals, refuseFlags } from "./flags.ts";
import { sealFor } from "./seal-source.ts";
import { resolveNamedRun } from "./target.ts";

const USAGE = "bernstein replay repair <RUN_ID> [--seal FILE] [--sdd-dir DIR] [--as-json]";

/**
 * `bernstein replay repair <RUN_ID>`: cut a torn trailing fragment (one
 * unterminated final line: what a killed writer leaves) so the run can be
 * resumed, saving it beside the journal; nothing else. The journal
 * core refuses middle corruption and a surviving journal that disagrees
 * with the run's seal (`<run_dir>/seal.json` or `--seal F`) before touching
 * a byte (RefusalError `repair_refused`, exit 2). Exit 0 when repaired or
 * when there was nothing to repair.
 */
export async function runRepair(ctx: ReplayContext): Promise<number> {
  const [id] = expectPositionals(ctx, 1, USAGE);
  refuseFlags(ctx, REPLAY_VERBS.repair!.flags, "replay repair");
  const run = resolveNamedRun(ctx, id!, true);
  const { seal } = sealFor(ctx, run);
  let result;
  try {
    result = await repairJournalTail(run.journal, { seal, sddDir: ctx.sddDir });
  } catch (err) {
    // Prose keeps Python's "Repair refused:" lead; JSON keeps the library's detail as is.
    if (!ctx.json && err instanceof RefusalError && err.code === "repair_refused") {
      throw new RefusalError(err.code, `Repair refused: ${err.message}`, err.facts);
    }
    throw err;
  }
  if (ctx.json) {
    await printJson({
      ok: true,
      run_id: run.runId,
      journal: run.journal,
      repaired: result.repaired,
      removed_line_indices: result.removed_line_indices,
      event_count: result.event_count,
      head: result.head,
      saved_fragment: result.saved_fragment ?? null,
      removed_bytes: result.removed_bytes ?? 0,
    });
    return 0;
  }
  const state = `head=${result.head || "(empty)"} events=${result.event_count}`;
  if (!result.repaired) {
    await printLines("Nothing to repair: journal tail is intact.", state);
    return 0;
  }
  await printLines(
    `Repaired: truncated torn tail (physical line(s): ${result.removed_line_indices.join(", ")}).`,
    state,
    `journal now resumable: bernstein replay ${run.runId}`,
    `removed fragment (${result.removed_bytes} bytes) saved to ${result.saved_fragment}`,
  );
  return 0;
}

/** `replay repair --as-json` (docs/cli/replay.md). */
export const REPAIR_DOCS: CommandDocs = {
  exits: { 0: "the journal ends whole", 2: "refused (repair_refused): corruption before the tail, or a seal that disagrees; nothing is touched" },
  json: [
    jsonDoc({ example: "bernstein replay repair $RUN" }, [
      ["ok", "true", "The journal ends whole (repaired or already intact)"],
      ["run_id", "string", "The run repaired"],
      ["journal", "string", "Its journal.jsonl"],
      ["repaired", "boolean", "A torn tail was cut"],
      ["removed_line_indices", "number[]", "Lines cut"],
      ["event_count", "number", "Events the journal holds now"],
      ["head", "string", "Its head hash now"],
      ["saved_fragment", "string | null", "Where the cut bytes were saved"],
      ["removed_bytes", "number", "Bytes cut"],
    ]),
  ],
};
