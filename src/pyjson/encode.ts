import { canonicalNumber, floatRepr } from "./float.ts";
import { ByteSink, BytesEncoder, CANONICAL_OPTIONS, dumpsBytesText, encodeStringBody, encodeStringToken, type ByteDumpsOptions } from "./encode-bytes.ts";
import { skipWsBytes } from "./bytes.ts";
import { LBRACKET, QUOTE as QUOTE_BYTE, RBRACKET } from "../codec/bytes.ts";
import { sortEntries, sortKeys } from "./order.ts";
import { PyNum, PyRaw, type PyLike } from "./types.ts";
import { HEX_DIGITS as HEX } from "../hex.ts";

/**
 * Python's `json.dumps` for py-json values and plain JS values.
 * Defaults match Python: `ensure_ascii=True`, separators `", "`/`": "`
 * (`","`/`": "` when indenting), insertion order unless `sortKeys`.
 */
export interface DumpsOptions {
  sortKeys?: boolean;
  separators?: readonly [string, string];
  indent?: number | null;
  ensureAscii?: boolean;
  /** Print parsed numbers as recorded (display), not re-spelled (hashing). */
  rawNumbers?: boolean;
  /** Nesting level the value starts at (its nested lines are indented for it). */
  level?: number;
}

function hex4(c: number): string {
  return "\\u" + HEX[(c >> 12) & 15] + HEX[(c >> 8) & 15] + HEX[(c >> 4) & 15] + HEX[c & 15];
}

/** Characters that `ensure_ascii` output spells as themselves. */
const ASCII_PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** `"..."` with Python's escaping. */
export function encodeString(s: string, ensureAscii = true): string {
  if (ASCII_PLAIN.test(s)) return '"' + s + '"';
  let out = '"';
  let start = 0;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    let rep: string | null = null;
    if (c === 0x22) rep = '\\"';
    else if (c === 0x5c) rep = "\\\\";
    else if (c < 0x20) {
      switch (c) {
        case 0x0a: rep = "\\n"; break;
        case 0x0d: rep = "\\r"; break;
        case 0x09: rep = "\\t"; break;
        case 0x08: rep = "\\b"; break;
        case 0x0c: rep = "\\f"; break;
        default: rep = hex4(c);
      }
    } else if (c > 0x7e) {
      if (ensureAscii) rep = hex4(c);
      else if (c >= 0xd800 && c <= 0xdfff) {
        // Raw output cannot carry a lone surrogate in UTF-8: escape it.
        const isHigh = c <= 0xdbff;
        const next = i + 1 < n ? s.charCodeAt(i + 1) : 0;
        if (isHigh && next >= 0xdc00 && next <= 0xdfff) {
          i++;
          continue;
        }
        rep = hex4(c);
      }
    }
    if (rep !== null) {
      if (i > start) out += s.slice(start, i);
      out += rep;
      start = i + 1;
    }
  }
  if (start < n) out += s.slice(start);
  return out + '"';
}

export { compareCodePoints } from "./order.ts";

function numberLexeme(v: number): string {
  if (Number.isInteger(v) && !Object.is(v, -0)) {
    return Number.isSafeInteger(v) ? String(v) : BigInt(v).toString();
  }
  return floatRepr(v);
}

/** A line break and `n` spaces, made once per width: a deep value would make one per container (garbage as large as its output). */
const lineBreaks: string[] = [];
const LINE_BREAKS_KEPT = 256;
function lineBreak(n: number): string {
  if (n >= LINE_BREAKS_KEPT) return "\n" + " ".repeat(n);
  return (lineBreaks[n] ??= "\n" + " ".repeat(n));
}

export function dumps(value: PyLike, options: DumpsOptions = {}): string {
  const indent = options.indent ?? null;
  const ensureAscii = options.ensureAscii ?? true;
  const sortKeys = options.sortKeys ?? false;
  const rawNumbers = options.rawNumbers ?? false;
  const [itemSep, keySep] = options.separators ?? (indent === null ? [", ", ": "] : [",", ": "]);
  const parts: string[] = [];

  const entriesOf = (v: object): [string, PyLike][] => {
    let entries: [string, PyLike][];
    if (v instanceof Map) entries = [...(v as Map<string, PyLike>).entries()];
    else entries = Object.entries(v as Record<string, PyLike>).filter(([, x]) => x !== undefined);
    if (sortKeys) sortEntries(entries);
    return entries;
  };

  const emit = (v: PyLike, level: number): void => {
    if (v === null || v === undefined) {
      parts.push("null");
      return;
    }
    switch (typeof v) {
      case "string":
        parts.push(encodeString(v, ensureAscii));
        return;
      case "boolean":
        parts.push(v ? "true" : "false");
        return;
      case "number":
        parts.push(numberLexeme(v));
        return;
      case "bigint":
        parts.push(v.toString());
        return;
    }
    if (v instanceof PyNum) {
      parts.push(rawNumbers ? v.raw : canonicalNumber(v.raw, v.isFloat));
      return;
    }
    if (v instanceof PyRaw) {
      parts.push(dumpsBytesText(v.bytes, 0, { sortKeys, itemSep, keySep, indent, ensureAscii, rawNumbers, level }));
      return;
    }
    const nl = indent === null ? "" : lineBreak(indent * (level + 1));
    const nlClose = indent === null ? "" : lineBreak(indent * level);
    const between = itemSep + nl;
    if (Array.isArray(v)) {
      if (v.length === 0) {
        parts.push("[]");
        return;
      }
      parts.push("[");
      for (let i = 0; i < v.length; i++) {
        parts.push(i === 0 ? nl : between);
        emit(v[i], level + 1);
      }
      parts.push(nlClose, "]");
      return;
    }
    const entries = entriesOf(v as object);
    if (entries.length === 0) {
      parts.push("{}");
      return;
    }
    parts.push("{");
    for (let i = 0; i < entries.length; i++) {
      const [k, x] = entries[i]!;
      parts.push(i === 0 ? nl : between);
      parts.push(encodeString(k, ensureAscii), keySep);
      emit(x, level + 1);
    }
    parts.push(nlClose, "}");
  };

  emit(value, options.level ?? 0);
  return parts.join("");
}

/**
 * `dumps(raw, options)` of a `PyRaw` value, handed to `onText` in pieces
 * encoded from its bytes (each piece ends between complete values or
 * characters, never inside a UTF-8 sequence): a huge value is never one text.
 */
export function dumpsRawStream(raw: PyRaw, options: DumpsOptions, onText: (text: string) => void): void {
  const indent = options.indent ?? null;
  const [itemSep, keySep] = options.separators ?? (indent === null ? [", ", ": "] : [",", ": "]);
  const byteOpts = { sortKeys: options.sortKeys ?? false, itemSep, keySep, indent, ensureAscii: options.ensureAscii ?? true, rawNumbers: options.rawNumbers ?? false, level: options.level ?? 0 };
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  const e = new BytesEncoder(raw.bytes, byteOpts, new ByteSink(), (chunk) => onText(decoder.decode(chunk)));
  e.value(0);
  e.finish();
}

/**
 * `dumps(value, options)` of an object handed over in pieces of about
 * 64 KiB (`onText`): its `PyRaw` members stream from their bytes, so a
 * huge row is printed without ever being one string.
 */
export function dumpsStream(value: Map<string, PyLike>, options: DumpsOptions, onText: (text: string) => void): void {
  const level = options.level ?? 0;
  const indent = options.indent ?? null;
  const [itemSep, keySep] = options.separators ?? (indent === null ? [", ", ": "] : [",", ": "]);
  const ensureAscii = options.ensureAscii ?? true;
  const nl = indent === null ? "" : "\n" + " ".repeat(indent * (level + 1));
  const entries = [...value].filter(([, v]) => v !== undefined);
  if (options.sortKeys) sortEntries(entries);
  if (entries.length === 0) return onText("{}");
  let text = "{";
  entries.forEach(([k, v], i) => {
    text += (i === 0 ? "" : itemSep) + nl + encodeString(k, ensureAscii) + keySep;
    if (v instanceof PyRaw) {
      onText(text);
      text = "";
      dumpsRawStream(v, { ...options, level: level + 1 }, onText);
    } else if (v instanceof Map && holdsRaw(v)) {
      // a huge row inside a document (replay diff's two rows): streamed as well
      onText(text);
      text = "";
      dumpsStream(v, { ...options, level: level + 1 }, onText);
    } else {
      text += dumps(v, { ...options, level: level + 1 });
      if (text.length >= 1 << 16) {
        onText(text);
        text = "";
      }
    }
  });
  onText(text + (indent === null ? "" : "\n" + " ".repeat(indent * level)) + "}");
}

/**
 * A canonicaliser turns a value into the exact bytes that are hashed.
 * `py-json-v1` = `json.dumps(v, sort_keys=True, separators=(",", ":"))`.
 */
export type Canonicalizer = (value: PyLike) => string;

/**
 * `dumps(value, {sortKeys: true, separators: [",", ":"]})`, specialised:
 * the verifier canonicalises every payload value of every row, so this
 * avoids the general encoder's per-call setup.
 */
function canonicalText(v: PyLike): string {
  if (v === null || v === undefined) return "null";
  switch (typeof v) {
    case "string":
      return encodeString(v, true);
    case "boolean":
      return v ? "true" : "false";
    case "number":
      return numberLexeme(v);
    case "bigint":
      return v.toString();
  }
  if (v instanceof PyNum) return canonicalNumber(v.raw, v.isFloat);
  if (v instanceof PyRaw) return dumpsBytesText(v.bytes, 0, CANONICAL_OPTIONS);
  if (Array.isArray(v)) {
    if (v.length === 0) return "[]";
    let out = "[" + canonicalText(v[0]);
    for (let i = 1; i < v.length; i++) out += "," + canonicalText(v[i]);
    return out + "]";
  }
  let keys: string[];
  let get: (k: string) => PyLike;
  if (v instanceof Map) {
    const m = v as Map<string, PyLike>;
    keys = [...m.keys()];
    get = (k) => m.get(k);
  } else {
    const o = v as Record<string, PyLike>;
    keys = Object.keys(o).filter((k) => o[k] !== undefined);
    get = (k) => o[k];
  }
  if (keys.length === 0) return "{}";
  sortKeys(keys);
  let out = "{";
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    out += (i === 0 ? "" : ",") + encodeString(k, true) + ":" + canonicalText(get(k));
  }
  return out + "}";
}

const pyJsonV1: Canonicalizer = canonicalText;

/** Canonical py-json-v1 text (sorted keys, compact, ASCII-escaped). */
export function canonical(value: PyLike): string {
  return pyJsonV1(value);
}

const encoder = new TextEncoder();
export function canonicalBytes(value: PyLike): Uint8Array {
  return encoder.encode(pyJsonV1(value));
}

/** A pre-image in pieces: text, or a `PyRaw` value to be written canonically from its bytes. */
export type PreimagePart = string | PyRaw;

/** The canonical text of `v`, or `v` itself when it is a `PyRaw` (hashed from its bytes later). */
export function canonicalPart(v: PyLike): PreimagePart {
  return v instanceof PyRaw ? v : canonical(v);
}

/**
 * Feed pre-image pieces to `hasher`: a `PyRaw` streams through the byte
 * encoder in chunks, so a huge value is never one string.
 */
export function hashParts(parts: readonly PreimagePart[], hasher: Bun.CryptoHasher): void {
  writeParts(parts, (piece) => hasher.update(piece));
}

/**
 * The pieces' text handed to `put` in order: text as it is, a `PyRaw`
 * encoded canonically from its bytes in chunks (valid during the call).
 */
export function writeParts(parts: readonly PreimagePart[], put: (piece: string | Uint8Array) => void): void {
  let text = "";
  for (const p of parts) {
    if (typeof p === "string") {
      text += p;
      continue;
    }
    if (text) put(text);
    text = "";
    if (p.kind === "string") {
      encodeStringPieces(p.bytes, new ByteSink(), put);
      continue;
    }
    const e = new BytesEncoder(p.bytes, CANONICAL_OPTIONS, new ByteSink(), put);
    e.value(0);
    e.finish();
  }
  if (text) put(text);
}

/** Lowercase hex SHA-256 of the joined pieces (what `sha256(join(parts))` gives, without joining). */
export function sha256Parts(parts: readonly PreimagePart[]): string {
  if (parts.every((p) => typeof p === "string")) return Bun.SHA256.hash(parts.join(""), "hex") as string;
  const h = new Bun.CryptoHasher("sha256");
  hashParts(parts, h);
  return h.digest("hex");
}

/**
 * `canonical(value)` as pieces: an object (Map or plain) whose member
 * values include a `PyRaw` is split at those members; anything else is one
 * piece.
 */
export function canonicalParts(value: PyLike): PreimagePart[] {
  if (!(value instanceof Map)) return [canonicalPart(value)];
  const m = value as Map<string, PyLike>;
  let raw = false;
  for (const v of m.values()) if (v instanceof PyRaw) raw = true;
  if (!raw) return [canonical(value)];
  const keys = sortKeys([...m.keys()].filter((k) => m.get(k) !== undefined));
  const parts: PreimagePart[] = [];
  let text = "{";
  keys.forEach((k, i) => {
    text += (i === 0 ? "" : ",") + encodeString(k, true) + ":";
    const v = m.get(k)!;
    if (v instanceof PyRaw) {
      parts.push(text, v);
      text = "";
    } else text += canonical(v);
  });
  parts.push(text + "}");
  return parts;
}

/** Does the object (Map) hold a `PyRaw` member value? */
export function holdsRaw(value: unknown): boolean {
  if (!(value instanceof Map)) return false;
  for (const v of value.values()) if (v instanceof PyRaw) return true;
  return false;
}

/**
 * `dumps(row)` (default separators, ensure_ascii, insertion order) of an
 * object whose members include `PyRaw` values, as UTF-8 bytes (ASCII)
 * written into one buffer sized for the result: a huge row is never a
 * string. `tail` is appended (the line's "\n").
 */
export function dumpsRowBytes(row: Map<string, PyLike>, tail = ""): Uint8Array {
  let size = 64 + tail.length;
  for (const v of row.values()) if (v instanceof PyRaw) size += v.bytes.length + (v.bytes.length >> 3);
  const sink = new ByteSink(size);
  writeRow(row, tail, sink, null, 0);
  return sink.view();
}

/**
 * `dumpsRowBytes(row, tail)` handed over in pieces of about `chunkBytes`
 * (`onChunk`, a view valid during the call): a huge row is never whole in
 * memory (but for an object member, which is held to apply the duplicate-key
 * rule). The pieces joined are exactly `dumpsRowBytes(row, tail)`.
 */
export function dumpsRowChunks(row: Map<string, PyLike>, tail: string, onChunk: (bytes: Uint8Array) => void, chunkBytes = 1 << 20): void {
  const sink = new ByteSink(Math.min(chunkBytes, 1 << 16) * 2);
  writeRow(row, tail, sink, onChunk, chunkBytes);
  if (sink.len > 0) onChunk(sink.view());
}

/** Input bytes of a long value encoded between two turns of the event loop (see encodeRawAsync). */
const YIELD_BYTES = 4 << 20;

/** One turn of the event loop: a signal handler waiting for it runs now. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * `BytesEncoder(raw.bytes, opts, sink, onChunk, chunkBytes).value(0)`, then
 * `finish()` (everything handed over): the same bytes, but an array is
 * encoded element by element with a turn of the event loop every few
 * megabytes of input, so a signal is taken within moments however long the
 * value (an object, or one element, is encoded in one go). For layouts
 * without indentation (the row and the pre-image).
 */
export async function encodeRawAsync(raw: PyRaw, opts: ByteDumpsOptions, sink: ByteSink, onChunk: (bytes: Uint8Array) => void, chunkBytes = 1 << 20): Promise<void> {
  const b = raw.bytes;
  if (raw.kind === "string" && opts.ensureAscii) return encodeStringAsync(b, sink, onChunk, chunkBytes);
  const e = new BytesEncoder(b, opts, sink, onChunk, chunkBytes);
  if (raw.kind !== "array" || opts.indent !== null) {
    e.value(0);
    e.finish();
    return;
  }
  let p = skipWsBytes(b, 1);
  if (b[p] === RBRACKET) {
    sink.ascii("[]");
    e.finish();
    return;
  }
  sink.byte(LBRACKET);
  let turn = p + YIELD_BYTES;
  for (let i = 0; ; i++) {
    if (i > 0) sink.ascii(opts.itemSep);
    p = skipWsBytes(b, e.value(p, 1));
    if (sink.len >= chunkBytes) e.finish();
    if (p >= turn) {
      await nextTurn();
      turn = p + YIELD_BYTES;
    }
    if (b[p] === RBRACKET) break;
    p = skipWsBytes(b, p + 1); // the comma
  }
  sink.byte(RBRACKET);
  e.finish();
}

/** An onFull for encodeStringToken/Body: the sink's bytes to `onChunk`, the sink emptied. */
function handingOver(onChunk: (bytes: Uint8Array) => void): (out: ByteSink) => void {
  return (out) => {
    onChunk(out.view());
    out.len = 0;
  };
}

/**
 * The string token `b` (validated), re-encoded with ensure_ascii as
 * `encodeStringToken` does, handed over whenever about `chunkBytes` are
 * written, with a turn of the event loop every few megabytes of input: a
 * string of hundreds of megabytes is never whole in memory twice, and a
 * signal is taken meanwhile.
 */
async function encodeStringAsync(b: Uint8Array, sink: ByteSink, onChunk: (bytes: Uint8Array) => void, chunkBytes: number): Promise<void> {
  const end = b.length - 1; // the closing quote
  const handOver = handingOver(onChunk);
  sink.byte(QUOTE_BYTE);
  for (let p = 1; ; ) {
    p = encodeStringBody(b, p, p + YIELD_BYTES, sink, true, handOver, chunkBytes);
    if (p >= end) break;
    await nextTurn();
  }
  sink.byte(QUOTE_BYTE);
  handOver(sink);
}

/**
 * The string token `b` (validated) re-encoded as encodeStringToken does,
 * handed over whenever about `chunkBytes` are written (between two
 * characters), then the rest: a string hashed or printed where no signal
 * needs taking meanwhile is never whole in the sink.
 */
export function encodeStringPieces(b: Uint8Array, sink: ByteSink, onChunk: (bytes: Uint8Array) => void, chunkBytes = 1 << 16, ensureAscii = true): void {
  const handOver = handingOver(onChunk);
  encodeStringToken(b, 0, sink, ensureAscii, handOver, chunkBytes);
  handOver(sink);
}

/** `dumpsRowChunks`, taking a turn of the event loop every few megabytes (encodeRawAsync). */
export async function dumpsRowChunksAsync(row: Map<string, PyLike>, tail: string, onChunk: (bytes: Uint8Array) => void, chunkBytes = 1 << 20): Promise<void> {
  const sink = new ByteSink(Math.min(chunkBytes, 1 << 16) * 2);
  for (const part of rowParts(row, tail)) {
    if (typeof part === "string") sink.ascii(part);
    else await encodeRawAsync(part, ROW_OPTIONS, sink, onChunk, chunkBytes);
  }
  if (sink.len > 0) onChunk(sink.view());
}

/** A row's line in Python's writer spelling as pieces: ASCII text, and the raw values to encode between them. */
function* rowParts(row: Map<string, PyLike>, tail: string): Generator<string | PyRaw> {
  let text = "{";
  let first = true;
  for (const [k, v] of row) {
    if (v === undefined) continue;
    text += (first ? "" : ", ") + encodeString(k, true) + ": ";
    first = false;
    if (v instanceof PyRaw) {
      yield text;
      text = "";
      yield v;
    } else text += dumps(v);
  }
  yield text + "}" + tail;
}

/** `sha256Parts`, taking a turn of the event loop every few megabytes of a `PyRaw` piece (encodeRawAsync). */
export async function sha256PartsAsync(parts: readonly PreimagePart[]): Promise<string> {
  const h = new Bun.CryptoHasher("sha256");
  let text = "";
  for (const p of parts) {
    if (typeof p === "string") {
      text += p;
      continue;
    }
    if (text) h.update(text);
    text = "";
    await encodeRawAsync(p, CANONICAL_OPTIONS, new ByteSink(), (chunk) => h.update(chunk), 1 << 16);
  }
  if (text) h.update(text);
  return h.digest("hex");
}

const ROW_OPTIONS: ByteDumpsOptions = { sortKeys: false, itemSep: ", ", keySep: ": ", indent: null, ensureAscii: true, rawNumbers: false };

function writeRow(row: Map<string, PyLike>, tail: string, sink: ByteSink, onChunk: ((bytes: Uint8Array) => void) | null, chunkBytes: number): void {
  for (const part of rowParts(row, tail)) {
    if (typeof part === "string") {
      sink.ascii(part);
      continue;
    }
    const e = new BytesEncoder(part.bytes, ROW_OPTIONS, sink, onChunk, chunkBytes);
    e.value(0);
    e.finish();
  }
}

const STOP = Symbol("preview complete");

/**
 * The start of `renderJson(raw, null)` (compact, raw UTF-8, numbers as
 * recorded) for human output: at most `maxChars` UTF-16 units, then "…".
 * Encoding stops once enough is written (an open object is written whole
 * first), so a huge value costs no more than its bytes.
 */
export function previewJson(raw: PyRaw, maxChars = 200): string {
  const opts = { sortKeys: false, itemSep: ", ", keySep: ": ", indent: null, ensureAscii: false, rawNumbers: true };
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  let text = "";
  const e = new BytesEncoder(raw.bytes, opts, new ByteSink(4096), (chunk) => {
    text += decoder.decode(chunk);
    if (text.length > maxChars) throw STOP;
  }, 1024);
  try {
    e.value(0);
    e.finish();
  } catch (err) {
    if (err !== STOP) throw err;
  }
  return text.length > maxChars ? text.slice(0, maxChars) + "\u2026" : text;
}
