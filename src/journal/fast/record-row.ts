import { canonical, compareCodePoints, dumps, encodeString } from "../../pyjson/encode.ts";
import { codePointOrder } from "../../pyjson/order.ts";
import { canonicalNumber, floatRepr } from "../../pyjson/float.ts";
import { PyNum, type PyLike } from "../../pyjson/types.ts";
import { COLON, COMMA, LBRACE, RBRACE } from "../../codec/bytes.ts";
import { ByteSink } from "../../pyjson/encode-bytes.ts";

/**
 * The writer's hot path for batches (`EventJournal.recordMany`, used by
 * `journal record` from stdin): one row line and its hashes built with as
 * little work per event as the exact encoder allows.
 *
 *  - a top-level atomic value (string, number, bool, null) is encoded once:
 *    its text is the same in the row (`json.dumps(row)`) and in the payload
 *    pre-image (`sort_keys`, compact separators); compound values are
 *    encoded twice, once per form;
 *  - key encodings and float spellings repeat from event to event: cached
 *    (bounded);
 *  - timestamps in Python's fixed-notation range use the engine's shortest
 *    round-trip digits directly (what floatRepr computes the long way).
 *
 * Same bytes as the generic `buildRow` (pinned by tests); rows whose payload
 * overwrites an envelope field (`ts`, `elapsed_s`, `index`) are left to it.
 */

const KEY_CACHE_MAX = 4096;
const keyText = new Map<string, string>();
const FLOAT_CACHE_MAX = 4096;
const floatText = new Map<string, string>();

function encodeKey(k: string): string {
  let t = keyText.get(k);
  if (t === undefined) {
    t = encodeString(k);
    if (keyText.size < KEY_CACHE_MAX) keyText.set(k, t);
  }
  return t;
}

/** Python's repr of a float, fast in the fixed-notation range. */
export function fastFloatRepr(x: number): string {
  const a = x < 0 ? -x : x;
  if (a >= 1e-4 && a < 1e16) {
    const s = String(x);
    return Number.isInteger(x) ? s + ".0" : s;
  }
  return floatRepr(x);
}

/**
 * Python's `round(x, 3)`. Away from a tie, the integer nearest to x*1000 is
 * Math.round of the (rounded) product, and k/1000 is the double nearest to
 * the decimal k/1000, which is what Python returns; near a tie (and for
 * huge or odd values) the exact routine decides.
 */
export function fastRound3(x: number, exact: (x: number, n: number) => number): number {
  const y = x * 1000;
  if (x >= 0 && y < 1e12) {
    const f = y - Math.floor(y);
    if (Math.abs(f - 0.5) > 1e-6) return Math.round(y) / 1000;
  }
  return exact(x, 3);
}

function canonicalFloatLexeme(raw: string): string {
  let t = floatText.get(raw);
  if (t === undefined) {
    t = canonicalNumber(raw, true);
    if (floatText.size < FLOAT_CACHE_MAX) floatText.set(raw, t);
  }
  return t;
}

/** The text of an atomic value (identical in row and pre-image), or null for arrays/objects. */
function atomText(v: PyLike): string | null {
  if (v === null || v === undefined) return "null";
  switch (typeof v) {
    case "string":
      return encodeString(v);
    case "boolean":
      return v ? "true" : "false";
    case "number":
      if (Number.isInteger(v) && !Object.is(v, -0)) return Number.isSafeInteger(v) ? String(v) : BigInt(v).toString();
      return fastFloatRepr(v);
    case "bigint":
      return v.toString();
  }
  if (v instanceof PyNum) {
    if (!v.isFloat) return v.raw === "-0" ? "0" : v.raw;
    return canonicalFloatLexeme(v.raw);
  }
  return null;
}

const ENVELOPE_OVERWRITES = new Set(["ts", "elapsed_s", "index"]);

// Reused per call (the writer is single-threaded).
let keys: string[] = [];
let canon: string[] = [];
let order: number[] = [];

/** Objects up to this many members take the string path with an insertion sort (no allocation); wider ones wideRecordLine. */
const INSERTION_SORT_MAX = 32;

/**
 * Drop the first m entries of the reused arrays: a member's canonical text
 * may be a rope of millions of pieces (a huge list), which the array would
 * otherwise keep alive until a later row overwrote it, and every collection
 * until then would mark it.
 */
function forget(m: number): void {
  for (let i = 0; i < m; i++) {
    keys[i] = "";
    canon[i] = "";
  }
}

/** `order[0, m)` = the member indices sorted by `keys`, for a small object (no allocation). */
function insertionSortOrder(m: number): void {
  for (let i = 0; i < m; i++) order[i] = i;
  for (let i = 1; i < m; i++) {
    const x = order[i]!;
    const kx = keys[x]!;
    let j = i - 1;
    while (j >= 0 && compareCodePoints(keys[order[j]!]!, kx) > 0) {
      order[j + 1] = order[j]!;
      j--;
    }
    order[j + 1] = x;
  }
}

export interface RecordLine {
  /** The row line with its "\n": text, or ASCII bytes for a wide object. */
  line: string | Uint8Array;
  eventHash: string;
}

/**
 * The row line (with its "\n") and event hash of one event, or null when the
 * payload overwrites an envelope field (the generic path handles that).
 * `entries` must already be validated (`validateRecordInput`).
 */
export function recordLine(
  event: string,
  entries: readonly (readonly [string, PyLike])[],
  index: number,
  prevHash: string,
  ts: number,
  elapsed: number,
): RecordLine | null {
  const n = entries.length;
  if (n > INSERTION_SORT_MAX) return wideRecordLine(event, entries, index, prevHash, ts, elapsed);
  if (keys.length < n + 1) {
    keys = new Array(n + 1);
    canon = new Array(n + 1);
    order = new Array(n + 1);
  }
  let rowTail = "";
  let m = 0;
  for (let i = 0; i < n; i++) {
    const [k, v] = entries[i]!;
    if (v === undefined) continue;
    if (ENVELOPE_OVERWRITES.has(k)) {
      forget(m);
      return null;
    }
    const ek = encodeKey(k);
    const atom = atomText(v);
    rowTail += ", " + ek + ": " + (atom ?? dumps(v));
    keys[m] = k;
    canon[m] = ek + ":" + (atom ?? canonical(v));
    m++;
  }
  const eventText = encodeString(event);
  keys[m] = "event";
  canon[m] = '"event":' + eventText;
  m++;
  // sort the payload members by key (code points), "event" included
  insertionSortOrder(m);
  let pre = "{" + canon[order[0]!]!;
  for (let i = 1; i < m; i++) pre += "," + canon[order[i]!]!;
  pre += "}";
  forget(m);
  // py-json-v1 pre-images are ASCII: the string is its UTF-8 bytes
  const ph = Bun.SHA256.hash(pre, "hex") as string;
  const { head, eh } = envelope(eventText, index, prevHash, ph, ts, elapsed);
  return { line: head + rowTail + "}\n", eventHash: eh };
}

/** The row's envelope text (up to its event hash's closing quote) and its event hash. */
function envelope(eventText: string, index: number, prevHash: string, ph: string, ts: number, elapsed: number): { head: string; eh: string } {
  const prevText = encodeString(prevHash);
  const eh = Bun.SHA256.hash(
    '{"event_type":' + eventText + ',"index":' + index + ',"payload_hash":"' + ph + '","prev_hash":' + prevText + "}",
    "hex",
  ) as string;
  const head =
    '{"ts": ' +
    fastFloatRepr(ts) +
    ', "elapsed_s": ' +
    fastFloatRepr(elapsed) +
    ', "index": ' +
    index +
    ', "event": ' +
    eventText +
    ', "prev_hash": ' +
    prevText +
    ', "payload_hash": "' +
    ph +
    '", "event_hash": "' +
    eh +
    '"';
  return { head, eh };
}

/**
 * recordLine for an object of many members, in time n log n and memory a
 * small multiple of the row: the member texts are written as ASCII bytes
 * (every text here is ensure_ascii), not appended to a string (a string of
 * a million appends is slow to flatten), and the keys sorted natively
 * (codePointOrder).
 */
function wideRecordLine(...[event, entries, index, prevHash, ts, elapsed]: Parameters<typeof recordLine>): RecordLine | null {
  const n = entries.length;
  keys = new Array<string>(n + 1);
  const encKeys = new Array<string>(n + 1);
  const canonVals = new Array<string>(n + 1);
  const tail = new ByteSink(1 << 20);
  let m = 0;
  for (let i = 0; i < n; i++) {
    const [k, v] = entries[i]!;
    if (v === undefined) continue;
    if (ENVELOPE_OVERWRITES.has(k)) return null;
    const ek = encodeString(k);
    const atom = atomText(v);
    tail.ascii(", ");
    tail.ascii(ek);
    tail.ascii(": ");
    tail.ascii(atom ?? dumps(v));
    keys[m] = k;
    encKeys[m] = ek;
    canonVals[m] = atom ?? canonical(v);
    m++;
  }
  const eventText = encodeString(event);
  keys[m] = "event";
  encKeys[m] = '"event"';
  canonVals[m] = eventText;
  m++;
  // sort the payload members by key (code points), "event" included
  const sorted = codePointOrder(keys, m);
  keys = [];
  const pre = new ByteSink(tail.len + 64);
  pre.byte(LBRACE);
  for (let i = 0; i < m; i++) {
    const j = sorted[i]!;
    if (i > 0) pre.byte(COMMA);
    pre.ascii(encKeys[j]!);
    pre.byte(COLON);
    pre.ascii(canonVals[j]!);
  }
  pre.byte(RBRACE);
  const ph = Bun.SHA256.hash(pre.view(), "hex") as string;
  const { head, eh } = envelope(eventText, index, prevHash, ph, ts, elapsed);
  const line = new Uint8Array(head.length + tail.len + 2);
  for (let i = 0; i < head.length; i++) line[i] = head.charCodeAt(i);
  line.set(tail.view(), head.length);
  line[line.length - 2] = RBRACE;
  line[line.length - 1] = 10;
  return { line, eventHash: eh };
}
