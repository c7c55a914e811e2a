import { isLowerHex64 } from "../hex.ts";
import { pyStr } from "../pyjson/python.ts";
import { eventHash, hashProfileOf, payloadHash } from "./hash.ts";
import { DEFAULT_PROFILE, type HashProfile } from "./hash-profiles.ts";
import type { JournalRow } from "./reader.ts";

/**
 * The exact check of one journal row (spec §1.9), with Python's semantics:
 * the one reference every exact caller uses (the exact verifier's walk, and
 * the fast engine's ranges for the rows its kernel does not take).
 */

export type FailureKind = "prev_hash break" | "event_hash mismatch" | "hash format" | "profile";

export interface RowCheck {
  /** Python `str()` of the stored fields. */
  eventType: string;
  storedHash: string;
  storedPrev: string;
  profile: HashProfile;
  /** The unknown-hash_profile message, which precedes any link check in Python's walk. */
  profileError: string | null;
  /** Null when it cannot be computed (unknown hash_profile) or in links-only mode. */
  payloadHash: string | null;
  /** The event hash the row must store; null when the payload hash is. */
  expected: string | null;
  /** What failed (null: the row checks out); `message` without the `step N: ` prefix. */
  failure: { kind: FailureKind; message: string } | null;
}

const FORMAT = "event_hash is not a 64-character lowercase hex SHA-256 digest";

/**
 * Check `row` at position `index` against the previous row's event hash
 * `prev` (null: the row's own stored prev_hash, for a range's first row,
 * whose link the stitcher checks). `linksOnly`: links and the hash format
 * only, never a payload hash (and no hash_profile lookup).
 */
export function checkRow(row: JournalRow, prev: string | null, index: number, linksOnly = false): RowCheck {
  const eventType = pyStr(row.get("event"), "");
  const storedHash = pyStr(row.get("event_hash"), "");
  const storedPrev = pyStr(row.get("prev_hash"), "");
  let profile = DEFAULT_PROFILE;
  let profileError: string | null = null;
  if (!linksOnly) {
    try {
      profile = hashProfileOf(row);
    } catch (err) {
      profileError = (err as Error).message;
    }
  }
  const ph = linksOnly || profileError !== null ? null : payloadHash(eventType, row, profile);
  const link = prev ?? storedPrev;
  const expected = ph === null ? null : eventHash(link, eventType, ph, index, profile);
  const check: RowCheck = { eventType, storedHash, storedPrev, profile, profileError, payloadHash: ph, expected, failure: null };
  if (profileError !== null) check.failure = { kind: "profile", message: profileError };
  else if (storedPrev !== link) check.failure = { kind: "prev_hash break", message: "prev_hash break" };
  else if (linksOnly ? !isLowerHex64(storedHash) : storedHash !== expected) {
    check.failure = linksOnly ? { kind: "hash format", message: FORMAT } : { kind: "event_hash mismatch", message: "event_hash mismatch" };
  }
  return check;
}
