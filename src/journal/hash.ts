import {
  canonical,
  canonicalizer,
  canonicalPart,
  compareCodePoints,
  encodeString,
  sha256Parts,
  UnknownHashProfileError,
  type PreimagePart,
} from "../pyjson/encode.ts";
import { DEFAULT_HASH_PROFILE, type PyLike, type PyValue } from "../pyjson/types.ts";
import { sha256Hex } from "../hex.ts";

/**
 * The two hash pre-images of the run journal (spec §1.4, §1.5):
 *
 *   payload_hash = sha256(canonical({payload minus envelope fields, "event": type}))
 *   event_hash   = sha256(canonical({"event_type", "index", "payload_hash", "prev_hash"}))
 *
 * where canonical is the row's `hash_profile` (absent = py-json-v1 =
 * `json.dumps(v, sort_keys=True, separators=(",", ":"))`). Row fields
 * outside the payload hash are not authenticated by the chain.
 */

/** Envelope fields excluded from the payload hash, sorted. */
export const NON_DETERMINISTIC_FIELDS: readonly string[] = Object.freeze([
  "elapsed_s",
  "event_hash",
  "index",
  "payload_hash",
  "prev_hash",
  "ts",
]);

const EXCLUDED = new Set<string>(NON_DETERMINISTIC_FIELDS);

export const HASH_PROFILE_FIELD = "hash_profile";
export const PY_JSON_V1 = DEFAULT_HASH_PROFILE;

export type Payload = Map<string, PyValue> | Record<string, PyLike>;

export { sha256Hex };

function entriesOf(payload: Payload): [string, PyLike][] {
  if (payload instanceof Map) return [...payload.entries()];
  return Object.entries(payload).filter(([, v]) => v !== undefined);
}

/**
 * The exact bytes (as a string; py-json-v1 output is ASCII) that are hashed
 * into `payload_hash`. Keys named like envelope fields are left out; a key
 * named `event` is replaced by the event type.
 */
export function payloadPreimage(eventType: string, payload: Payload, profile: string = PY_JSON_V1): string {
  return payloadParts(eventType, payload, profile)
    .map((p) => (typeof p === "string" ? p : canonical(p)))
    .join("");
}

/**
 * The payload pre-image in pieces: a huge row's large members (`PyRaw`)
 * stay bytes, hashed from them in chunks (src/pyjson/encode-bytes.ts).
 */
function payloadParts(eventType: string, payload: Payload, profile: string): PreimagePart[] {
  if (profile !== PY_JSON_V1) {
    const projected = new Map<string, PyLike>();
    for (const [k, v] of entriesOf(payload)) if (!EXCLUDED.has(k)) projected.set(k, v);
    projected.set("event", eventType);
    return [canonicalizer(profile)(projected as unknown as PyLike)];
  }
  // py-json-v1 fast path: sort the top-level keys once, encode values with
  // the canonical encoder (which sorts nested objects itself).
  const isMap = payload instanceof Map;
  const keys: string[] = [];
  if (isMap) {
    for (const k of payload.keys()) if (!EXCLUDED.has(k) && k !== "event") keys.push(k);
  } else {
    for (const k of Object.keys(payload)) {
      if (!EXCLUDED.has(k) && k !== "event" && payload[k] !== undefined) keys.push(k);
    }
  }
  keys.push("event");
  keys.sort(compareCodePoints);
  const parts: PreimagePart[] = [];
  let out = "{";
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    if (i > 0) out += ",";
    out += encodeString(k);
    out += ":";
    if (k === "event") out += encodeString(eventType);
    else {
      const part = canonicalPart((isMap ? payload.get(k) : (payload as Record<string, PyLike>)[k]) as PyLike);
      if (typeof part === "string") out += part;
      else {
        parts.push(out, part);
        out = "";
      }
    }
  }
  parts.push(out + "}");
  return parts;
}

export function payloadHash(eventType: string, payload: Payload, profile: string = PY_JSON_V1): string {
  return sha256Parts(payloadParts(eventType, payload, profile));
}

/** `{"event_type":…,"index":…,"payload_hash":…,"prev_hash":…}` (keys already in sorted order). */
export function eventPreimage(
  prevHash: string,
  eventType: string,
  payloadHashHex: string,
  index: number,
  profile: string = PY_JSON_V1,
): string {
  if (profile !== PY_JSON_V1) {
    const obj = new Map<string, PyLike>([
      ["prev_hash", prevHash],
      ["event_type", eventType],
      ["payload_hash", payloadHashHex],
      ["index", index],
    ]);
    return canonicalizer(profile)(obj as unknown as PyLike);
  }
  return (
    '{"event_type":' +
    encodeString(eventType) +
    ',"index":' +
    String(index) +
    ',"payload_hash":' +
    encodeString(payloadHashHex) +
    ',"prev_hash":' +
    encodeString(prevHash) +
    "}"
  );
}

/** SHA-256 hex of `eventPreimage(...)` (same arguments). */
export function eventHash(...args: Parameters<typeof eventPreimage>): string {
  return sha256Hex(eventPreimage(...args));
}

/**
 * The hash profile a row declares: absent means py-json-v1; a value that
 * names no known profile (or is not a string) fails closed.
 */
export function hashProfileOf(row: Map<string, PyValue>): string {
  const p = row.get(HASH_PROFILE_FIELD);
  if (p === undefined) return PY_JSON_V1;
  if (typeof p !== "string") throw new UnknownHashProfileError(String(canonical(p)));
  canonicalizer(p); // throws UnknownHashProfileError for an unknown profile
  return p;
}

export { UnknownHashProfileError };
