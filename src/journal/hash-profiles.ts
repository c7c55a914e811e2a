import { canonical, canonicalPart, compareCodePoints, encodeString, type PreimagePart } from "../pyjson/encode.ts";
import { jcs } from "../pyjson/jcs.ts";
import type { PyLike, PyValue } from "../pyjson/types.ts";

/**
 * The one hash-profile registry. A `hash_profile` names how the bytes that
 * are hashed (or signed) are spelled; every place that decides by that
 * name — the journal writer, verify (exact and fast), seal files, the
 * lineage spine and run receipts — looks it up here and is handed the
 * profile as a value (as transparency-dev/merkle hands a `LogHasher` to its
 * verifiers), never comparing names itself. A new profile is one entry here.
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

/** The member of a row, seal file, `spine.head` or run receipt that names its profile. */
export const HASH_PROFILE_FIELD = "hash_profile";

/** A run-journal payload: a parsed row, or what the writer is given. */
export type Payload = Map<string, PyValue> | Record<string, PyLike>;

export interface HashProfile {
  /** The name a `hash_profile` member carries. */
  readonly name: string;
  /** Canonical text of a value (a receipt's binding block; the generic pre-images below). */
  readonly canonical: (value: PyLike) => string;
  /**
   * The payload pre-image of a run-journal row (spec §1.4): the payload
   * minus the envelope fields, with `event` set to the event type, in
   * pieces (a `PyRaw` piece is hashed from its bytes).
   */
  readonly payloadPreimage: (eventType: string, payload: Payload) => PreimagePart[];
  /** The event pre-image (spec §1.5) over `{event_type, index, payload_hash, prev_hash}`. */
  readonly eventPreimage: (prevHash: string, eventType: string, payloadHashHex: string, index: number) => string;
  /** Run-journal rows and seal files may name it: the writer records it, verify recomputes hashes with it. */
  readonly journal: boolean;
  /**
   * The fast verifiers (the WebAssembly kernel and the byte-level row
   * scanners) hash rows of this profile themselves. They take only rows
   * that carry no `hash_profile` member, i.e. rows of `DEFAULT_PROFILE`;
   * the rest go the exact path.
   */
  readonly fastKernels: boolean;
  /** A run receipt's binding block may be canonicalised with it. */
  readonly receiptBinding: boolean;
  /** A lineage spine's `spine.head` may name it (a legacy spine names none). */
  readonly spineHead: boolean;
  /** The spine's HMAC tags under it are checked here (false: links and entry hashes only; tags reported unsupported). */
  readonly spineTags: boolean;
}

function entriesOf(payload: Payload): [string, PyLike][] {
  if (payload instanceof Map) return [...payload.entries()];
  return Object.entries(payload).filter(([, v]) => v !== undefined);
}

/** Any profile's payload pre-image: the projected payload, canonicalised whole. */
function genericPayload(canon: (v: PyLike) => string): HashProfile["payloadPreimage"] {
  return (eventType, payload) => {
    const projected = new Map<string, PyLike>();
    for (const [k, v] of entriesOf(payload)) if (!EXCLUDED.has(k)) projected.set(k, v);
    projected.set("event", eventType);
    return [canon(projected as unknown as PyLike)];
  };
}

function genericEvent(canon: (v: PyLike) => string): HashProfile["eventPreimage"] {
  return (prevHash, eventType, payloadHashHex, index) =>
    canon(
      new Map<string, PyLike>([
        ["prev_hash", prevHash],
        ["event_type", eventType],
        ["payload_hash", payloadHashHex],
        ["index", index],
      ]) as unknown as PyLike,
    );
}

/**
 * py-json-v1's payload pre-image: the top-level keys sorted once, values
 * encoded with the canonical encoder (which sorts nested objects itself);
 * a huge row's large members (`PyRaw`) stay bytes.
 */
function pyJsonV1Payload(eventType: string, payload: Payload): PreimagePart[] {
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
      const part = canonicalPart((isMap ? payload.get(k) : payload[k]) as PyLike);
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

/** `{"event_type":…,"index":…,"payload_hash":…,"prev_hash":…}` (keys already in sorted order). */
function pyJsonV1Event(prevHash: string, eventType: string, payloadHashHex: string, index: number): string {
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

/** `json.dumps(v, sort_keys=True, separators=(",", ":"))`, ASCII-escaped: the journal's, the spine's legacy and the receipts' default. */
export const PY_JSON_V1: HashProfile = Object.freeze({
  name: "py-json-v1",
  canonical,
  payloadPreimage: pyJsonV1Payload,
  eventPreimage: pyJsonV1Event,
  journal: true,
  fastKernels: true,
  receiptBinding: true,
  spineHead: false,
  spineTags: true,
});

/** RFC 8785 (JCS): run receipts may bind with it; a spine under it keeps CJ-raw entry hashes and RFC 8785 tags (not checked here); journal rows may not name it. */
export const JCS_V2: HashProfile = Object.freeze({
  name: "jcs-v2",
  canonical: jcs,
  payloadPreimage: genericPayload(jcs),
  eventPreimage: genericEvent(jcs),
  journal: false,
  fastKernels: false,
  receiptBinding: true,
  spineHead: true,
  spineTags: false,
});

/** Every profile, in the order error messages list them. */
export const HASH_PROFILES: readonly HashProfile[] = Object.freeze([PY_JSON_V1, JCS_V2]);

/** The profile of a row, seal, spine or receipt that names none. */
export const DEFAULT_PROFILE: HashProfile = PY_JSON_V1;

type Use = "journal" | "fastKernels" | "receiptBinding" | "spineHead";

/** The profile named `name` if it may be used for `use`, else undefined. */
export function hashProfile(name: unknown, use: Use): HashProfile | undefined {
  return HASH_PROFILES.find((p) => p.name === name && p[use]);
}

/** Names of the profiles usable for `use`. */
export function profileNames(use: Use): string[] {
  return HASH_PROFILES.filter((p) => p[use]).map((p) => p.name);
}

export class UnknownHashProfileError extends Error {
  constructor(profile: string) {
    super(`unknown hash_profile ${JSON.stringify(profile)}: refusing to verify (known: ${profileNames("journal").join(", ")})`);
    this.name = "UnknownHashProfileError";
  }
}

/** The journal profile named `name`; any other name fails closed (UnknownHashProfileError). */
export function journalProfile(name: string): HashProfile {
  const p = hashProfile(name, "journal");
  if (p === undefined) throw new UnknownHashProfileError(name);
  return p;
}
