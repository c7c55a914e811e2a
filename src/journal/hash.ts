import { canonical, sha256Parts, sha256PartsAsync } from "../pyjson/encode.ts";
import type { PyValue } from "../pyjson/types.ts";
import { sha256Hex } from "../hex.ts";
import { DEFAULT_PROFILE, HASH_PROFILE_FIELD, journalProfile, UnknownHashProfileError, type HashProfile, type Payload } from "./hash-profiles.ts";

/**
 * The two hash pre-images of the run journal (spec §1.4, §1.5):
 *
 *   payload_hash = sha256(canonical({payload minus envelope fields, "event": type}))
 *   event_hash   = sha256(canonical({"event_type", "index", "payload_hash", "prev_hash"}))
 *
 * where canonical is the row's `hash_profile` (hash-profiles.ts; absent =
 * py-json-v1 = `json.dumps(v, sort_keys=True, separators=(",", ":"))`).
 * Row fields outside the payload hash are not authenticated by the chain.
 */

export { HASH_PROFILE_FIELD, NON_DETERMINISTIC_FIELDS, UnknownHashProfileError, type HashProfile, type Payload } from "./hash-profiles.ts";
export { sha256Hex };

/**
 * The exact bytes (as a string; py-json-v1 output is ASCII) that are hashed
 * into `payload_hash`. Keys named like envelope fields are left out; a key
 * named `event` is replaced by the event type.
 */
export function payloadPreimage(eventType: string, payload: Payload, profile: HashProfile = DEFAULT_PROFILE): string {
  return profile
    .payloadPreimage(eventType, payload)
    .map((p) => (typeof p === "string" ? p : canonical(p)))
    .join("");
}

export function payloadHash(eventType: string, payload: Payload, profile: HashProfile = DEFAULT_PROFILE): string {
  return sha256Parts(profile.payloadPreimage(eventType, payload));
}

/** `payloadHash`, taking turns of the event loop while a long `PyRaw` value is hashed (a signal is taken meanwhile). */
export function payloadHashAsync(eventType: string, payload: Payload, profile: HashProfile = DEFAULT_PROFILE): Promise<string> {
  return sha256PartsAsync(profile.payloadPreimage(eventType, payload));
}

/** The event pre-image: `{"event_type":…,"index":…,"payload_hash":…,"prev_hash":…}` in the profile's spelling. */
export function eventPreimage(
  prevHash: string,
  eventType: string,
  payloadHashHex: string,
  index: number,
  profile: HashProfile = DEFAULT_PROFILE,
): string {
  return profile.eventPreimage(prevHash, eventType, payloadHashHex, index);
}

/** SHA-256 hex of `eventPreimage(...)` (same arguments). */
export function eventHash(...args: Parameters<typeof eventPreimage>): string {
  return sha256Hex(eventPreimage(...args));
}

/**
 * The hash profile a row declares: absent means the default (py-json-v1);
 * a value that names no journal profile (or is not a string) fails closed.
 */
export function hashProfileOf(row: Map<string, PyValue>): HashProfile {
  const p = row.get(HASH_PROFILE_FIELD);
  if (p === undefined) return DEFAULT_PROFILE;
  if (typeof p !== "string") throw new UnknownHashProfileError(String(canonical(p)));
  return journalProfile(p);
}
