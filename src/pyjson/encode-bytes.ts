import { asciiText, BACKSLASH, copyTo, LBRACE, LBRACKET, QUOTE, RBRACE, RBRACKET, doubled } from "../codec/bytes.ts";
import { jsonStringEnd, scannedString, Spell, stringCut, stringTokenEnd } from "../codec/row-index.ts";
import { literalAt, numberEnd, skipValue, skipWsBytes } from "./bytes.ts";
import { compareCodePoints } from "./order.ts";
import { canonicalNumber } from "./float.ts";
import { HEX_BYTES, hex4 } from "../hex.ts";

/**
 * Python's `json.dumps` of a value given as (validated) JSON bytes,
 * written straight into a growable byte buffer: no value tree. Object
 * members are buffered to sort them (`sort_keys`, code point order) or to
 * apply `json.loads`' duplicate-key rule (first position, last value);
 * arrays stream, and with `onChunk` the output is handed over in pieces
 * whenever no buffered object is open. With `onChunk`, an object whose
 * output reaches `streamObjectMin` is not buffered: it is begun again, its
 * members' order worked out from their keys first, then each written from
 * the input in that order, so it streams like an array. Output equals
 * `dumps(parse(text), options)` (pinned by differential tests and the
 * Python oracle).
 */
export interface ByteDumpsOptions {
  sortKeys: boolean;
  itemSep: string;
  keySep: string;
  indent: number | null;
  ensureAscii: boolean;
  rawNumbers: boolean;
  /** Nesting level of the value in its document (indentation of nested lines). */
  level?: number;
}

/** `json.dumps(v, sort_keys=True, separators=(",", ":"))`. */
export const CANONICAL_OPTIONS: ByteDumpsOptions = {
  sortKeys: true,
  itemSep: ",",
  keySep: ":",
  indent: null,
  ensureAscii: true,
  rawNumbers: false,
};

const latin1 = new TextDecoder("latin1");
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

/** A growable byte buffer. */
export class ByteSink {
  buf: Uint8Array;
  len = 0;
  constructor(initial = 1 << 16) {
    this.buf = new Uint8Array(initial);
  }
  reserve(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }
  byte(c: number): void {
    if (this.len === this.buf.length) this.reserve(1);
    this.buf[this.len++] = c;
  }
  bytes(src: Uint8Array, s = 0, e = src.length): void {
    this.reserve(e - s);
    // never a view: millions of them would be garbage the GC lets pile up
    this.len = copyTo(src, s, e, this.buf, this.len);
  }
  /** ASCII text. */
  ascii(t: string): void {
    this.reserve(t.length);
    for (let i = 0; i < t.length; i++) this.buf[this.len++] = t.charCodeAt(i);
  }
  /** Text as UTF-8 (lone surrogates as U+FFFD, as TextEncoder writes them). */
  text(t: string): void {
    this.reserve(3 * t.length);
    this.len += textEncoder.encodeInto(t, this.buf.subarray(this.len)).written;
  }
  view(): Uint8Array {
    return this.buf.subarray(0, this.len);
  }
}

const textEncoder = new TextEncoder();

const FLOAT_CACHE_MAX = 4096;
/** Scratch output of isCanonicalFloat. */
let canonicalProbe: ByteSink;
const floatCache = new Map<string, string>();

canonicalProbe = new ByteSink(128);

/**
 * Python's repr of the float literal b[s, e) when it is plain decimal
 * (`I.F`, no exponent) with at most 15 significant digits in repr's
 * fixed-notation range: then the shortest round-trip digits are the
 * literal's own (15 digits always round-trip), minus trailing fraction
 * zeros. Returns false for anything else (the general path decides).
 */
function plainFloat(b: Uint8Array, s: number, e: number, out: ByteSink): boolean {
  let p = s;
  if (b[p] === 0x2d) p++;
  let dot = -1;
  for (let i = p; i < e; i++) {
    const c = b[i]!;
    if (c === 0x2e) dot = i;
    else if (c < 0x30 || c > 0x39) return false;
  }
  if (dot < 0) return false;
  let fracEnd = e;
  while (fracEnd > dot + 2 && b[fracEnd - 1] === 0x30) fracEnd--;
  const intDigits = dot - p;
  let sig: number;
  if (intDigits === 1 && b[p] === 0x30) {
    let z = dot + 1;
    while (z < fracEnd && b[z] === 0x30) z++;
    if (z === fracEnd) {
      // zero: 0.0 / -0.0
      sig = 0;
    } else {
      if (z - (dot + 1) > 3) return false; // below 1e-4: scientific
      sig = fracEnd - z;
    }
  } else {
    if (intDigits > 16) return false;
    sig = intDigits + (fracEnd - dot - 1);
    // trailing zeros of the integer part are not significant, but count them (conservative)
  }
  if (sig > 15) return false;
  out.bytes(b, s, fracEnd);
  return true;
}

/** Is the float literal b[s, e) spelled as Python's repr spells its value? (No garbage for plain decimals.) */
export function isCanonicalFloat(b: Uint8Array, s: number, e: number): boolean {
  const probe = canonicalProbe;
  probe.len = 0;
  if (e - s <= 64 && plainFloat(b, s, e, probe)) return probe.len === e - s;
  const raw = asciiText(b, s, e);
  return canonicalNumber(raw, true) === raw;
}

function floatText(raw: string): string {
  let t = floatCache.get(raw);
  if (t === undefined) {
    t = canonicalNumber(raw, true);
    if (floatCache.size < FLOAT_CACHE_MAX) floatCache.set(raw, t);
  }
  return t;
}

/** `\uXXXX` (lowercase hex, as json.dumps writes it) for the code unit `u` at o[l]; returns the end. */
export function writeUnicodeEscape(o: Uint8Array, l: number, u: number): number {
  o[l++] = BACKSLASH;
  o[l++] = 0x75;
  o[l++] = HEX_BYTES[(u >> 12) & 15]!;
  o[l++] = HEX_BYTES[(u >> 8) & 15]!;
  o[l++] = HEX_BYTES[(u >> 4) & 15]!;
  o[l++] = HEX_BYTES[u & 15]!;
  return l;
}

function escapeUnit(out: ByteSink, u: number): void {
  out.reserve(6);
  out.len = writeUnicodeEscape(out.buf, out.len, u);
}

/** A code unit below 0x80 as Python escapes it (`"`, `\`, controls), or written plain. */
function asciiUnit(out: ByteSink, u: number, ensureAscii: boolean): void {
  if (u === QUOTE) out.ascii('\\"');
  else if (u === BACKSLASH) out.ascii("\\\\");
  else if (u >= 0x20) {
    if (u === 0x7f && ensureAscii) escapeUnit(out, u);
    else out.byte(u);
  } else {
    switch (u) {
      case 0x0a: out.ascii("\\n"); break;
      case 0x0d: out.ascii("\\r"); break;
      case 0x09: out.ascii("\\t"); break;
      case 0x08: out.ascii("\\b"); break;
      case 0x0c: out.ascii("\\f"); break;
      default: escapeUnit(out, u);
    }
  }
}

function utf8Unit(out: ByteSink, cp: number): void {
  if (cp < 0x800) {
    out.byte(0xc0 | (cp >> 6));
    out.byte(0x80 | (cp & 63));
  } else if (cp < 0x10000) {
    out.byte(0xe0 | (cp >> 12));
    out.byte(0x80 | ((cp >> 6) & 63));
    out.byte(0x80 | (cp & 63));
  } else {
    out.byte(0xf0 | (cp >> 18));
    out.byte(0x80 | ((cp >> 12) & 63));
    out.byte(0x80 | ((cp >> 6) & 63));
    out.byte(0x80 | (cp & 63));
  }
}

/** A long plain run is copied in slices this long when the sink is watched (encodeStringToken's onFull). */
const RUN_SLICE = 1 << 16;

/**
 * Re-encode the string token at `pos` (validated) the way Python's encoder
 * writes the decoded string; returns the offset past its closing quote.
 * With `onFull`, the sink is handed to it whenever it holds `fullAt` bytes
 * or more (between two characters), so a long string is never whole in it.
 */
export function encodeStringToken(b: Uint8Array, pos: number, out: ByteSink, ensureAscii: boolean, onFull: ((out: ByteSink) => void) | null = null, fullAt = Infinity): number {
  out.byte(QUOTE);
  const p = encodeStringBody(b, pos + 1, Infinity, out, ensureAscii, onFull, fullAt);
  out.byte(QUOTE);
  return p + 1;
}

/**
 * encodeStringToken's characters from `p` (a character's start in a
 * validated token's body), without the quotes: up to the closing quote, or
 * up to the first character that starts at or past `stop`, so a caller can
 * re-encode a long string a stretch at a time. Returns where it stopped
 * (the closing quote, or that character).
 */
export function encodeStringBody(b: Uint8Array, p: number, stop: number, out: ByteSink, ensureAscii: boolean, onFull: ((out: ByteSink) => void) | null = null, fullAt = Infinity): number {
  for (;;) {
    if (p >= stop) return p;
    if (out.len >= fullAt) onFull!(out);
    // copy a run of plain printable ASCII
    const runStart = p;
    let c = b[p]!;
    while (c >= 0x20 && c < 0x7f && c !== QUOTE && c !== BACKSLASH) c = b[++p]!;
    if (onFull !== null && p - runStart > RUN_SLICE) {
      for (let s = runStart; s < p; s += RUN_SLICE) {
        out.bytes(b, s, Math.min(p, s + RUN_SLICE));
        if (out.len >= fullAt) onFull(out);
      }
    } else if (p > runStart) out.bytes(b, runStart, p);
    if (c === QUOTE) return p;
    if (c === BACKSLASH) {
      const e = b[p + 1]!;
      if (e !== 0x75) {
        switch (e) {
          case 0x22: out.ascii('\\"'); break;
          case 0x5c: out.ascii("\\\\"); break;
          case 0x2f: out.byte(0x2f); break;
          case 0x62: out.ascii("\\b"); break;
          case 0x66: out.ascii("\\f"); break;
          case 0x6e: out.ascii("\\n"); break;
          case 0x72: out.ascii("\\r"); break;
          case 0x74: out.ascii("\\t"); break;
        }
        p += 2;
        continue;
      }
      const u = hex4(b, p + 2);
      p += 6;
      if (u < 0x80) asciiUnit(out, u, ensureAscii);
      else if (ensureAscii) escapeUnit(out, u);
      else if (u >= 0xd800 && u <= 0xdbff && b[p] === BACKSLASH && b[p + 1] === 0x75) {
        const lo = hex4(b, p + 2);
        if (lo >= 0xdc00 && lo <= 0xdfff) {
          utf8Unit(out, 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00));
          p += 6;
        } else escapeUnit(out, u);
      } else if (u >= 0xd800 && u <= 0xdfff) escapeUnit(out, u);
      else utf8Unit(out, u);
      continue;
    }
    if (c === 0x7f) {
      if (ensureAscii) escapeUnit(out, c);
      else out.byte(c);
      p++;
      continue;
    }
    // a non-ASCII UTF-8 sequence (validated)
    let cp: number;
    let n: number;
    if (c < 0xe0) {
      cp = ((c & 0x1f) << 6) | (b[p + 1]! & 63);
      n = 2;
    } else if (c < 0xf0) {
      cp = ((c & 0x0f) << 12) | ((b[p + 1]! & 63) << 6) | (b[p + 2]! & 63);
      n = 3;
    } else {
      cp = ((c & 0x07) << 18) | ((b[p + 1]! & 63) << 12) | ((b[p + 2]! & 63) << 6) | (b[p + 3]! & 63);
      n = 4;
    }
    if (!ensureAscii) out.bytes(b, p, p + n);
    else if (cp > 0xffff) {
      const v = cp - 0x10000;
      escapeUnit(out, 0xd800 + (v >> 10));
      escapeUnit(out, 0xdc00 + (v & 0x3ff));
    } else escapeUnit(out, cp);
    p += n;
  }
}

/** The decoded JS string of the (validated) string token at `pos`. */
export function decodeStringToken(b: Uint8Array, pos: number): string {
  const end = stringTokenEnd(b, pos);
  if ((scannedString.flags & Spell.Escaped) === 0) return utf8.decode(b.subarray(pos + 1, end - 1));
  // JSON.parse decodes the same escapes (lone surrogates included) for a validated token
  return JSON.parse(utf8.decode(b.subarray(pos, end))) as string;
}

/**
 * decodeStringToken in pieces of about `piece` bytes of the token, for a
 * reader that needs only part of a long string or reads it once: joined,
 * the pieces are the decoded string. A piece ends only between whole
 * escapes and whole UTF-8 sequences, so decoding it alone gives its code
 * units of the whole; it may still end with the first half of a surrogate
 * pair whose second half starts the next piece.
 */
export function* decodeStringPieces(b: Uint8Array, pos: number, piece = 1 << 16): Generator<string> {
  const end = stringTokenEnd(b, pos) - 1;
  const escaped = (scannedString.flags & Spell.Escaped) !== 0;
  let s = pos + 1;
  while (s < end) {
    const e = stringCut(b, s, s + piece, end, escaped);
    const text = utf8.decode(b.subarray(s, e));
    yield escaped && hasEscape(b, s, e) ? (JSON.parse('"' + text + '"') as string) : text;
    s = e;
  }
}

function hasEscape(b: Uint8Array, s: number, e: number): boolean {
  for (let i = s; i < e; i++) if (b[i] === BACKSLASH) return true;
  return false;
}

/**
 * Code point order of the key tokens [as, ae) and [bs, be) (quotes
 * included). UTF-8 byte order is code point order, so keys without escapes
 * compare as bytes; others are decoded.
 */
function compareKeyTokens(b: Uint8Array, as: number, ae: number, bs: number, be: number): number {
  if (hasEscape(b, as, ae) || hasEscape(b, bs, be)) return compareCodePoints(decodeStringToken(b, as), decodeStringToken(b, bs));
  let p = as + 1;
  let q = bs + 1;
  const pe = ae - 1;
  const qe = be - 1;
  while (p < pe && q < qe) {
    const x = b[p]!;
    const y = b[q]!;
    if (x !== y) return x < y ? -1 : 1;
    p++;
    q++;
  }
  return pe - p - (qe - q);
}

/** Objects this small are sorted by insertion sort into a shared buffer (no garbage per object). */
const SMALL_OBJECT = 16;

function keyCmp(b: Uint8Array, keys: Int32Array, base: number, i: number, j: number): number {
  return compareKeyTokens(b, keys[2 * (base + i)]!, keys[2 * (base + i) + 1]!, keys[2 * (base + j)]!, keys[2 * (base + j) + 1]!);
}

/** The output of `memberOrder`: member indices, in the order they are written. */
let orderOut = new Int32Array(SMALL_OBJECT);

/** memberOrder for sort_keys and a small object: insertion sort, then the last of each run of equal keys. */
function smallSortedOrder(b: Uint8Array, keys: Int32Array, base: number, n: number): number {
  const o = orderOut;
  for (let i = 0; i < n; i++) {
    let j = i - 1;
    // stable: an equal key stays after the earlier one
    while (j >= 0 && keyCmp(b, keys, base, o[j]!, i) > 0) {
      o[j + 1] = o[j]!;
      j--;
    }
    o[j + 1] = i;
  }
  let m = 0;
  for (let i = 0; i < n; i++) {
    if (i + 1 < n && keyCmp(b, keys, base, o[i]!, o[i + 1]!) === 0) continue; // a later duplicate wins
    o[m++] = o[i]!;
  }
  return m;
}

/**
 * The member order an object is written in: sorted by key (last duplicate
 * wins), or insertion order with each duplicate key at its first position
 * carrying its last value. Returns -1 when it is the input order
 * unchanged, else the number of members written, whose indices are then
 * in `memberOrderOut()[0, count)`. `keys` holds each member's key token
 * [start, end) at 2 * (base + i).
 */
export function memberOrder(b: Uint8Array, keys: Int32Array, base: number, n: number, sortKeys: boolean): number {
  if (n < 2) return -1;
  // already strictly ascending: sorted, no duplicates (no allocation: the common case)
  let ascending = true;
  for (let k = 2 * base + 2; k < 2 * (base + n) && ascending; k += 2) {
    if (compareKeyTokens(b, keys[k - 2]!, keys[k - 1]!, keys[k]!, keys[k + 1]!) >= 0) ascending = false;
  }
  if (ascending) return -1;
  if (n <= SMALL_OBJECT) {
    if (sortKeys) return smallSortedOrder(b, keys, base, n);
    // insertion order: unchanged unless two keys are equal (pairwise, no garbage)
    let dup = false;
    for (let i = 1; i < n && !dup; i++) for (let j = 0; j < i && !dup; j++) if (keyCmp(b, keys, base, j, i) === 0) dup = true;
    if (!dup) return -1;
  }
  return sortedRuns(b, keys, base, n, sortKeys);
}

/**
 * memberOrder's general case. A function of its own: its comparison
 * closure makes the engine allocate a scope per call, which the common
 * cases above must not pay for.
 */
function sortedRuns(b: Uint8Array, keys: Int32Array, base: number, n: number, sortKeys: boolean): number {
  const cmp = (i: number, j: number): number => keyCmp(b, keys, base, i, j);
  const idx: number[] = new Array(n);
  for (let i = 0; i < n; i++) idx[i] = i;
  idx.sort((x, y) => cmp(x, y) || x - y);
  // runs of equal keys: [first index, last index]
  const runs: [number, number][] = [];
  let dup = false;
  for (let i = 0; i < n; ) {
    let j = i;
    while (j + 1 < n && cmp(idx[i]!, idx[j + 1]!) === 0) j++;
    if (j > i) dup = true;
    runs.push([idx[i]!, idx[j]!]);
    i = j + 1;
  }
  if (!sortKeys) {
    if (!dup) return -1;
    runs.sort((x, y) => x[0] - y[0]);
  }
  if (orderOut.length < runs.length) orderOut = new Int32Array(runs.length);
  for (let i = 0; i < runs.length; i++) orderOut[i] = runs[i]![1];
  return runs.length;
}

/** Where `memberOrder` left its result. */
export function memberOrderOut(): Int32Array {
  return orderOut;
}

/**
 * Objects whose output reaches this long are written member by member in
 * their output order rather than buffered whole to reorder them (with
 * `onChunk` only: a buffered object is the one thing that holds a huge
 * value's output in memory). Tests lower it to cover small objects.
 */
let streamObjectMin = 1 << 20;

/** For tests: the size from which objects stream; returns the previous one. */
export function setStreamObjectMin(n: number): number {
  const prev = streamObjectMin;
  streamObjectMin = n;
  return prev;
}

/** Thrown inside a buffered object whose output grew too long to buffer; caught where it began. */
const TOO_LONG = new Error("object too long to buffer");

/**
 * Encode the validated JSON value at b[pos]. With `onChunk`, finished
 * output is handed over (and the sink emptied) whenever no buffered object
 * is open and more than `chunkBytes` are waiting.
 */
export class BytesEncoder {
  private openObjects = 0;
  /** Sink length past which the outermost buffered object is too long to buffer (with onChunk). */
  private bailAt = Infinity;
  /** A word view of `b` for skipping strings, made when a long object is first met. */
  private dv: DataView | null = null;
  private readonly newlines: string[] = [];
  private readonly num = { isFloat: false };
  constructor(
    private readonly b: Uint8Array,
    private readonly opts: ByteDumpsOptions,
    readonly out: ByteSink = new ByteSink(),
    private readonly onChunk: ((bytes: Uint8Array) => void) | null = null,
    private readonly chunkBytes = 1 << 16,
  ) {}

  /** encodeStringToken's hand-over outside any buffered object: a long string streams too. */
  private readonly handOver = (out: ByteSink): void => {
    this.onChunk!(out.view());
    out.len = 0;
  };

  /** A buffered object's output passed streamObjectMin: it is begun again streamed (see object). */
  private readonly tooLong = (): void => {
    throw TOO_LONG;
  };

  /**
   * The string token at `pos`: handed over as the sink fills when nothing
   * buffered is open; inside a buffered object, stopped once that object is
   * too long to buffer.
   */
  private string(pos: number): number {
    if (this.onChunk === null) return encodeStringToken(this.b, pos, this.out, this.opts.ensureAscii);
    if (this.openObjects > 0) return encodeStringToken(this.b, pos, this.out, this.opts.ensureAscii, this.tooLong, this.bailAt);
    return encodeStringToken(this.b, pos, this.out, this.opts.ensureAscii, this.handOver, this.chunkBytes);
  }

  private nl(level: number): string {
    if (this.opts.indent === null) return "";
    return (this.newlines[level] ??= "\n" + " ".repeat(this.opts.indent * level));
  }

  private maybeFlush(): void {
    if (this.onChunk !== null && this.openObjects === 0 && this.out.len >= this.chunkBytes) {
      this.onChunk(this.out.view());
      this.out.len = 0;
    }
  }

  /** Hand over whatever is left. */
  finish(): void {
    if (this.onChunk !== null && this.out.len > 0) {
      this.onChunk(this.out.view());
      this.out.len = 0;
    }
  }

  /** Encode the value at `pos`; returns the offset past it. */
  value(pos: number, level = this.opts.level ?? 0): number {
    const b = this.b;
    const c = b[pos];
    if (c === QUOTE) return this.string(pos);
    if (c === LBRACKET) return this.array(pos, level);
    if (c === LBRACE) return this.object(pos, level);
    const lit = literalAt(b, pos);
    if (lit !== null) {
      this.out.bytes(lit);
      return pos + lit.length;
    }
    const e = numberEnd(b, pos, this.num);
    if (this.opts.rawNumbers) this.out.bytes(b, pos, e);
    else if (!this.num.isFloat) {
      if (e - pos === 2 && b[pos] === 0x2d && b[pos + 1] === 0x30) this.out.byte(0x30);
      else this.out.bytes(b, pos, e);
    } else if (!plainFloat(b, pos, e, this.out)) this.out.ascii(floatText(asciiText(b, pos, e)));
    return e;
  }

  private array(pos: number, level: number): number {
    const b = this.b;
    const out = this.out;
    let p = skipWsBytes(b, pos + 1);
    if (b[p] === RBRACKET) {
      out.ascii("[]");
      return p + 1;
    }
    out.byte(LBRACKET);
    const nl = this.nl(level + 1);
    for (let i = 0; ; i++) {
      if (i > 0) out.ascii(this.opts.itemSep);
      if (nl) out.ascii(nl);
      p = skipWsBytes(b, this.value(p, level + 1));
      if (out.len > this.bailAt) throw TOO_LONG;
      this.maybeFlush();
      if (b[p] === RBRACKET) break;
      p = skipWsBytes(b, p + 1); // the comma
    }
    out.ascii(this.nl(level));
    out.byte(RBRACKET);
    return p + 1;
  }

  // Open objects' members, one stack for all levels: key token [start, end) and output segment [start, end)
  // (a streamed object's: its value's input span).
  private keys = new Int32Array(256);
  private segs = new Int32Array(256);
  private top = 0;
  /** Scratch copy of an object being reordered (shared: the copy is used up before any nested object is written). */
  private copyBuf = new Uint8Array(1024);

  private push(keyStart: number, keyEnd: number, segStart: number, segEnd: number): void {
    if (2 * this.top + 2 > this.keys.length) {
      this.keys = doubled(this.keys);
      this.segs = doubled(this.segs);
    }
    this.keys[2 * this.top] = keyStart;
    this.keys[2 * this.top + 1] = keyEnd;
    this.segs[2 * this.top] = segStart;
    this.segs[2 * this.top + 1] = segEnd;
    this.top++;
  }

  private object(pos: number, level: number): number {
    const b = this.b;
    const out = this.out;
    let p = skipWsBytes(b, pos + 1);
    if (b[p] === RBRACE) {
      out.ascii("{}");
      return p + 1;
    }
    if (this.onChunk === null || this.openObjects > 0) return this.bufferedObject(p, level);
    // Outside any buffered object: buffered while its output stays short (most objects), else begun
    // again streamed. Measuring the output costs nothing where a look ahead would read it twice.
    const start = out.len;
    const base = this.top;
    this.bailAt = start + streamObjectMin;
    try {
      return this.bufferedObject(p, level);
    } catch (err) {
      if (err !== TOO_LONG) throw err;
      out.len = start;
      this.top = base;
      this.openObjects = 0;
      this.bailAt = Infinity;
      return this.streamedObject(p, level, (this.dv ??= new DataView(b.buffer, b.byteOffset, b.byteLength)));
    } finally {
      this.bailAt = Infinity;
    }
  }

  /** The object whose first key is at `p`, written into the sink and reordered there. */
  private bufferedObject(p: number, level: number): number {
    const b = this.b;
    const out = this.out;
    this.openObjects++;
    const start = out.len;
    const base = this.top;
    out.byte(LBRACE);
    const nl = this.nl(level + 1);
    for (let i = 0; ; i++) {
      if (i > 0) out.ascii(this.opts.itemSep);
      if (nl) out.ascii(nl);
      const segStart = out.len;
      const keyStart = p;
      p = this.string(p);
      const keyEnd = p;
      out.ascii(this.opts.keySep);
      p = skipWsBytes(b, skipWsBytes(b, p) + 1); // the colon
      p = skipWsBytes(b, this.value(p, level + 1));
      this.push(keyStart, keyEnd, segStart, out.len);
      if (out.len > this.bailAt) throw TOO_LONG;
      if (b[p] === RBRACE) break;
      p = skipWsBytes(b, p + 1);
    }
    const count = memberOrder(b, this.keys, base, this.top - base, this.opts.sortKeys);
    if (count >= 0) {
      const order = memberOrderOut();
      // rewrite the members in their output order from a copy of the object's bytes
      const size = out.len - start;
      if (this.copyBuf.length < size) this.copyBuf = new Uint8Array(Math.max(size, 2 * this.copyBuf.length));
      const copy = this.copyBuf;
      const src = out.buf;
      if (size <= 256) for (let i = 0; i < size; i++) copy[i] = src[start + i]!;
      else copy.set(src.subarray(start, out.len));
      out.len = start;
      out.byte(LBRACE);
      for (let i = 0; i < count; i++) {
        if (i > 0) out.ascii(this.opts.itemSep);
        if (nl) out.ascii(nl);
        const m = base + order[i]!;
        out.bytes(copy, this.segs[2 * m]! - start, this.segs[2 * m + 1]! - start);
      }
    }
    this.top = base;
    out.ascii(this.nl(level));
    out.byte(RBRACE);
    this.openObjects--;
    this.maybeFlush();
    return p + 1;
  }

  /**
   * A long object from its first key at `p`: the members' key and value
   * spans are found first (values skipped, not encoded), their output
   * order worked out as for a buffered object, then each member is
   * encoded from the input in that order, the sink handed over as it
   * fills. Returns the offset past the object.
   */
  private streamedObject(p: number, level: number, dv: DataView): number {
    const b = this.b;
    const out = this.out;
    const base = this.top;
    for (;;) {
      const keyStart = p;
      const keyEnd = jsonStringEnd(b, dv, p, b.length);
      p = skipWsBytes(b, skipWsBytes(b, keyEnd) + 1); // the colon
      const valueEnd = skipValue(b, p, dv);
      this.push(keyStart, keyEnd, p, valueEnd);
      p = skipWsBytes(b, valueEnd);
      if (b[p] === RBRACE) break;
      p = skipWsBytes(b, p + 1);
    }
    const n = this.top - base;
    let count = memberOrder(b, this.keys, base, n, this.opts.sortKeys);
    let order: Int32Array | null = null;
    if (count >= 0) order = memberOrderOut().slice(0, count); // nested objects reuse memberOrderOut
    else count = n;
    const nl = this.nl(level + 1);
    out.byte(LBRACE);
    for (let i = 0; i < count; i++) {
      if (i > 0) out.ascii(this.opts.itemSep);
      if (nl) out.ascii(nl);
      // this.keys/segs may be reallocated by nested objects: read them afresh
      const m = 2 * (base + (order === null ? i : order[i]!));
      this.string(this.keys[m]!);
      out.ascii(this.opts.keySep);
      this.value(this.segs[m]!, level + 1);
      this.maybeFlush();
    }
    this.top = base;
    out.ascii(this.nl(level));
    out.byte(RBRACE);
    this.maybeFlush();
    return p + 1;
  }
}

/** `dumps(parse(b[pos..]))` as bytes, for a validated value. */
export function dumpsBytes(b: Uint8Array, pos: number, opts: ByteDumpsOptions): Uint8Array {
  const e = new BytesEncoder(b, opts);
  e.value(pos);
  return e.out.view();
}

/** The same, as a string (ASCII output decodes byte for byte). */
export function dumpsBytesText(b: Uint8Array, pos: number, opts: ByteDumpsOptions): string {
  const bytes = dumpsBytes(b, pos, opts);
  return opts.ensureAscii ? latin1.decode(bytes) : utf8.decode(bytes);
}

