import { KeyTable } from "../codec/row-index.ts";
import { HASH_PROFILE_FIELD, NON_DETERMINISTIC_FIELDS } from "./hash-profiles.ts";

/** Each named key's id: its place in RUN_ROW_KEYS, from 1; from FirstEnvelopeOnly on, the other envelope members (hash-profiles.ts NON_DETERMINISTIC_FIELDS). */
export const enum RunKey { Event = 1, PrevHash, EventHash, HashProfile, FirstEnvelopeOnly }

/**
 * The run-journal row's named top-level keys, as the codec's index finds
 * them: one table, so every reader of a run row on the index (the record
 * path's input check, the run receipt's canonical check, follow's JSON)
 * asks for a key by the same id. `event` first, then the two links and the
 * profile, then the rest of the envelope the payload pre-image leaves out.
 * A reader that needs more names lists them after these (the ids above hold).
 */
export const RUN_ROW_KEY_NAMES: readonly string[] = [
  "event",
  "prev_hash",
  "event_hash",
  HASH_PROFILE_FIELD,
  ...NON_DETERMINISTIC_FIELDS.filter((k) => k !== "prev_hash" && k !== "event_hash"),
];
export const RUN_ROW_KEYS = new KeyTable(RUN_ROW_KEY_NAMES);
