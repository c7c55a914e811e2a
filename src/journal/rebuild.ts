import { InputError } from "../errors/index.ts";
import { checkInput } from "../fsutil/input.ts";
import { pyStr } from "../pyjson/python.ts";
import { eventHash, hashProfileOf, payloadHash, type HashProfile } from "./hash.ts";
import { readJournalSync } from "./reader.ts";

/**
 * `--from-step N` (spec §5): the state after the first N usable rows,
 * recomputed from the rows' content (stored hashes are not consulted, so a
 * tampered journal still projects). Discarded lines are invisible. Output
 * depends only on the file bytes, so it is identical across invocations.
 */
export interface RebuiltState {
  /** Event types of the prefix, as Python `str()` of each row's `event`. */
  events: string[];
  /** Recomputed chain head over the prefix ("" for no rows). */
  head_hash: string;
  /** `max(0, min(N, usable rows))`. */
  step_count: number;
}

export function rebuildStateSync(path: string, fromStep: number): RebuiltState {
  const upper = Number.isFinite(fromStep) ? Math.max(0, Math.trunc(fromStep)) : fromStep > 0 ? Infinity : 0;
  const events: string[] = [];
  let head = "";
  // Even a projection of 0 steps refuses a FIFO, device or directory (input_not_regular_file).
  checkInput(path, { what: "journal" });
  if (upper === 0) return { events, head_hash: head, step_count: 0 };
  for (const item of readJournalSync(path)) {
    if (item.kind !== "row") continue;
    const i = events.length;
    const row = item.row;
    const eventType = pyStr(row.get("event"), "");
    let profile: HashProfile;
    try {
      profile = hashProfileOf(row);
    } catch (err) {
      throw new InputError("unknown_hash_profile", `step ${i} (physical line ${item.line}): ${(err as Error).message}`, {
        path,
        step_index: i,
      });
    }
    head = eventHash(head, eventType, payloadHash(eventType, row, profile), i, profile);
    events.push(eventType);
    if (events.length >= upper) break;
  }
  return { events, head_hash: head, step_count: events.length };
}

export async function rebuildState(path: string, fromStep: number): Promise<RebuiltState> {
  return rebuildStateSync(path, fromStep);
}
