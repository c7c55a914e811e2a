/** journal/row-keys.ts: each RunKey id names its key in the one table, and the envelope ids are the envelope's fields. */
import { expect, test } from "bun:test";
import { HASH_PROFILE_FIELD, NON_DETERMINISTIC_FIELDS } from "../../src/journal/hash-profiles.ts";
import { RUN_ROW_KEYS, RunKey } from "../../src/journal/row-keys.ts";

test("RunKey ids are the places of their names in RUN_ROW_KEYS, the envelope's other fields after them", () => {
  const name = (id: number) => RUN_ROW_KEYS.names[id - 1];
  expect([name(RunKey.Event), name(RunKey.PrevHash), name(RunKey.EventHash), name(RunKey.HashProfile)]).toEqual(["event", "prev_hash", "event_hash", HASH_PROFILE_FIELD]);
  const envelope = RUN_ROW_KEYS.names.slice(RunKey.FirstEnvelopeOnly - 1);
  expect(new Set([...envelope, "prev_hash", "event_hash"])).toEqual(new Set(NON_DETERMINISTIC_FIELDS));
  expect(RUN_ROW_KEYS.size).toBe(RunKey.FirstEnvelopeOnly - 1 + envelope.length);
});
