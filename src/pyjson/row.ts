import { isUtf8 } from "node:buffer";
import { asciiText } from "../codec/bytes.ts";
import { numberEnd, skipValue, skipWsBytes, validateBytes, type MemberSpan } from "./bytes.ts";
import { decodeStringToken } from "./encode-bytes.ts";
import { parse } from "./parse.ts";
import { isPyWhitespace } from "./python.ts";
import { PyNum, PyRaw, type PyObject, type PyValue } from "./types.ts";

/**
 * One physical line of a journal as Python reads it (UTF-8 decode,
 * `str.strip()`, `json.loads`), in memory bounded by a small multiple of
 * the line: a line of `BYTE_PATH_MIN` bytes or more is validated at byte
 * level (bytes.ts) and becomes a row whose large array/object members stay
 * bytes (`PyRaw`, hashed and printed from the bytes). Shorter lines take
 * the tree parser. Both give the same verdict and the same error text.
 */

/**
 * Before reading a line this long, a full garbage collection: the pieces
 * the reader assembled it from, and the previous huge row, are garbage by
 * then, but the engine would collect them late (peak memory would count
 * them twice). A few milliseconds per multi-megabyte line.
 */
const GC_HINT_MIN = 4 << 20;

/** Lines this long (bytes) are read without a value tree. */
export const BYTE_PATH_MIN = 1 << 16;
/** Array/object members of such a row this long (bytes) stay `PyRaw`. */
export const RAW_MEMBER_MIN = 256;
/** String members this long stay `PyRaw` for a reader that only hashes or prints them (loadsLine's `rawStringMin`). */
export const RAW_STRING_MIN = 1 << 20;

export type LineValue =
  | { kind: "blank" }
  | { kind: "undecodable" }
  | { kind: "error"; message: string }
  | { kind: "value"; value: PyValue };

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const utf8Loose = new TextDecoder("utf-8", { ignoreBOM: true });

const BLANK: LineValue = { kind: "blank" };
const UNDECODABLE: LineValue = { kind: "undecodable" };

/** The code point at `p` of valid UTF-8, and its length. */
function codePointAt(b: Uint8Array, p: number): [number, number] {
  const c = b[p]!;
  if (c < 0x80) return [c, 1];
  if (c < 0xe0) return [((c & 0x1f) << 6) | (b[p + 1]! & 63), 2];
  if (c < 0xf0) return [((c & 0x0f) << 12) | ((b[p + 1]! & 63) << 6) | (b[p + 2]! & 63), 3];
  return [((c & 0x07) << 18) | ((b[p + 1]! & 63) << 12) | ((b[p + 2]! & 63) << 6) | (b[p + 3]! & 63), 4];
}

/** Python `str.strip()` of valid UTF-8 bytes, as a subarray. */
export function pyStripBytes(b: Uint8Array): Uint8Array {
  let a = 0;
  let e = b.length;
  while (a < e) {
    const [cp, n] = codePointAt(b, a);
    if (!isPyWhitespace(cp)) break;
    a += n;
  }
  while (e > a) {
    let s = e - 1;
    while (s > a && (b[s]! & 0xc0) === 0x80) s--;
    if (!isPyWhitespace(codePointAt(b, s)[0])) break;
    e = s;
  }
  return a === 0 && e === b.length ? b : b.subarray(a, e);
}

/** The tree of one validated member value, or its bytes when it is a large container (or a string of `rawStringMin` bytes or more). */
function memberValue(b: Uint8Array, m: MemberSpan, rawMin: number, rawStringMin = Infinity): PyValue {
  const c = b[m.valueStart];
  if (c === 0x22 && m.valueEnd - m.valueStart >= rawStringMin) return new PyRaw(b.subarray(m.valueStart, m.valueEnd), "string");
  if (c === 0x5b || c === 0x7b) {
    const bytes = b.subarray(m.valueStart, m.valueEnd);
    if (bytes.length >= rawMin) return new PyRaw(bytes, c === 0x5b ? "array" : "object");
    return parse(utf8Loose.decode(bytes));
  }
  // atoms directly from the (validated) bytes: no text of the value to parse again
  if (c === 0x22) return decodeStringToken(b, m.valueStart);
  switch (c) {
    case 0x6e: return null;
    case 0x74: return true;
    case 0x66: return false;
    case 0x4e: return new PyNum("NaN", true);
    case 0x49: return new PyNum("Infinity", true);
  }
  const num = { isFloat: false };
  if (numberEnd(b, m.valueStart, num) === m.valueEnd) return new PyNum(asciiText(b, m.valueStart, m.valueEnd), num.isFloat);
  return parse(utf8Loose.decode(b.subarray(m.valueStart, m.valueEnd))); // -Infinity
}

/**
 * `json.loads` of already stripped, valid UTF-8 `b` without a tree for its
 * large parts: an object's big array/object members become `PyRaw`; a big
 * top-level array or object that is not a row is one `PyRaw`. With
 * `rawStringMin`, an object's string members that long stay bytes too (a
 * `PyRaw` of kind "string": only for a caller that writes them out again
 * from their bytes, `journal record`). Throws `PyJsonError` exactly as
 * `parse()` would. The result keeps views of `b`.
 */
export function parseRowBytes(b: Uint8Array, rawMin = RAW_MEMBER_MIN, rawStringMin = Infinity): PyValue {
  const { members } = validateBytes(b);
  if (members === null) {
    let s = 0;
    while (b[s] === 0x20 || b[s] === 0x09 || b[s] === 0x0a || b[s] === 0x0d) s++;
    const c = b[s];
    if (c === 0x5b || c === 0x7b) {
      let e = b.length;
      while (e > s && (b[e - 1] === 0x20 || b[e - 1] === 0x09 || b[e - 1] === 0x0a || b[e - 1] === 0x0d)) e--;
      return new PyRaw(b.subarray(s, e), c === 0x5b ? "array" : "object");
    }
    return parse(utf8Loose.decode(b));
  }
  // dict semantics: a duplicate key keeps its first position and takes the last value
  const row: PyObject = new Map();
  for (const m of members) {
    const k = decodeStringToken(b, m.keyStart);
    row.set(k, memberValue(b, m, rawMin, DECODED_KEYS.has(k) ? Infinity : rawStringMin));
  }
  return row;
}

/** Members readers compare as strings (a journal row's envelope, event type and hash profile): never kept as bytes. */
const DECODED_KEYS = new Set(["ts", "elapsed_s", "index", "event", "prev_hash", "payload_hash", "event_hash", "hash_profile"]);

/** Lines at least this long take the byte path (tests lower it to cover every line). */
let byteMin = BYTE_PATH_MIN;

/** For tests: route every line (0) or none (Infinity) through the byte path; returns the previous bound. */
export function setBytePathMin(n: number): number {
  const prev = byteMin;
  byteMin = n;
  return prev;
}

/**
 * Decode, strip and parse one physical line (content bytes, no terminator)
 * the way Python's reader does. `transient`: the caller is done with the
 * value before `bytes` can change, or they never change (no copy).
 * `rawStringMin`: a long line's string members this long stay bytes
 * (parseRowBytes), for a caller that only hashes the row.
 */
export function loadsLine(bytes: Uint8Array, transient = false, rawStringMin = Infinity): LineValue {
  if (bytes.length === 0) return BLANK;
  if (bytes.length >= byteMin) {
    if (bytes.length >= GC_HINT_MIN) Bun.gc(true);
    if (!isUtf8(bytes)) return UNDECODABLE;
    // The row keeps views of its bytes (PyRaw): a view of a reader's reused buffer is copied first.
    const owned = transient || (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength);
    const t = pyStripBytes(owned ? bytes : bytes.slice());
    if (t.length === 0) return BLANK;
    try {
      return { kind: "value", value: parseRowBytes(t, RAW_MEMBER_MIN, rawStringMin) };
    } catch (err) {
      return { kind: "error", message: (err as Error).message };
    }
  }
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return UNDECODABLE;
  }
  let a = 0;
  let e = text.length;
  while (a < e && isPyWhitespace(text.charCodeAt(a))) a++;
  while (e > a && isPyWhitespace(text.charCodeAt(e - 1))) e--;
  if (a === e) return BLANK;
  if (a !== 0 || e !== text.length) text = text.slice(a, e);
  try {
    return { kind: "value", value: parse(text) };
  } catch (err) {
    return { kind: "error", message: (err as Error).message };
  }
}

export { materialize, rawIsEmpty } from "./parse.ts";

/** The first `n` elements of a `PyRaw` array (or none for an object), as trees. */
export function rawItems(raw: PyRaw, n: number): PyValue[] {
  const b = raw.bytes;
  const out: PyValue[] = [];
  if (raw.kind !== "array") return out;
  let p = skipWsBytes(b, 1);
  while (out.length < n && b[p] !== 0x5d) {
    const e = skipValue(b, p);
    out.push(parse(utf8Loose.decode(b.subarray(p, e))));
    p = skipWsBytes(b, e);
    if (b[p] === 0x2c) p = skipWsBytes(b, p + 1);
  }
  return out;
}

/** Member `key` of a `PyRaw` object (the last one, as json.loads keeps), as a tree; undefined when absent. */
export function rawGet(raw: PyRaw, key: string): PyValue | undefined {
  const b = raw.bytes;
  if (raw.kind !== "object") return undefined;
  let found: [number, number] | null = null;
  let p = skipWsBytes(b, 1);
  while (b[p] === 0x22) {
    const k = decodeStringToken(b, p);
    p = skipWsBytes(b, skipWsBytes(b, skipValue(b, p)) + 1);
    const e = skipValue(b, p);
    if (k === key) found = [p, e];
    p = skipWsBytes(b, e);
    if (b[p] === 0x2c) p = skipWsBytes(b, p + 1);
  }
  return found === null ? undefined : memberValue(b, { keyStart: 0, keyEnd: 0, valueStart: found[0], valueEnd: found[1] }, RAW_MEMBER_MIN);
}
