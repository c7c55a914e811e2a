/**
 * JSON's structural bytes and the byte tables every row reader shares: the
 * one definition of each (the codec's scanners, pyjson's exact reference
 * and the renderers all read these).
 */
export const BACKSLASH = 0x5c;
export const COLON = 0x3a;
export const COMMA = 0x2c;
export const LBRACE = 0x7b;
export const LBRACKET = 0x5b;
export const MINUS = 0x2d;
export const QUOTE = 0x22;
export const RBRACE = 0x7d;
export const RBRACKET = 0x5d;
export const SPACE = 0x20;
export const TAB = 0x09;
export const LF = 0x0a;
export const CR = 0x0d;

/**
 * String byte classes: 0 plain (printable ASCII but `"` and `\`), 1 quote,
 * 2 backslash, 3 a control byte (never raw inside a JSON string), 4 a byte
 * of a UTF-8 sequence (>= 0x80; DEL 0x7f is plain for JSON but escaped by
 * Python's ensure_ascii writer, so it has class 5).
 */
export const STR_CLASS = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) STR_CLASS[c] = 3;
STR_CLASS[QUOTE] = 1;
STR_CLASS[BACKSLASH] = 2;
STR_CLASS[0x7f] = 5;
for (let c = 0x80; c < 0x100; c++) STR_CLASS[c] = 4;

/** The byte after a backslash that makes a two-byte escape JSON accepts (`\u` is read apart). */
export const SHORT_ESCAPE_VALUE = new Int16Array(256).fill(-1);
for (const [ch, v] of [['"', 0x22], ["\\", 0x5c], ["/", 0x2f], ["b", 0x08], ["f", 0x0c], ["n", 0x0a], ["r", 0x0d], ["t", 0x09]] as const) {
  SHORT_ESCAPE_VALUE[ch.charCodeAt(0)] = v;
}

/** The letter json.dumps writes after a backslash for a code unit below 0x80 (0: none; `/` is never escaped). */
export const SHORT_ESCAPE_LETTER = new Uint8Array(128);
for (let d = 0; d < 256; d++) {
  const v = SHORT_ESCAPE_VALUE[d]!;
  if (v >= 0 && d !== 0x2f) SHORT_ESCAPE_LETTER[v] = d;
}

/**
 * Nesting the fast readers take (the row's object is 1): one bound for
 * every reader of the subset, the exact reader's own (pyjson/parse.ts
 * DEFAULT_MAX_DEPTH), above what Python's json writes or reads (a
 * RecursionError near 995). So no row goes to the exact path for its depth
 * alone: there, a deep row's values and its re-indented text are garbage of
 * many times its size. The modules hold it as a constant (src/codec/scan.wat's
 * $object and $array, the kernels' frames and hook depths).
 */
export const MAX_DEPTH = 1000;

/** Code units Python's json.dumps writes with a two-byte escape, not `\u00XX`. */
export function hasShortEscape(v: number): boolean {
  return v === 0x08 || v === 0x09 || v === 0x0a || v === 0x0c || v === 0x0d || v === 0x22 || v === 0x5c;
}

/** FNV-1a of the bytes b[s, e): the hash of the byte layer's small lookup tables. */
export function fnv1a(b: Uint8Array, s: number, e: number): number {
  let h = 0x811c9dc5;
  for (let i = s; i < e; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  return h >>> 0;
}

/**
 * The bytes of the little-endian word x that are not plain string bytes
 * (printable ASCII but `"` and `\`), SWAR style: each such byte's high bit
 * set, 0 when all four are plain. The lowest flagged byte is the first
 * special one (a borrow or carry only runs upward, out of a byte that is
 * itself special); a higher one may be flagged wrongly.
 */
export function specialBytes(x: number): number {
  const q = x ^ 0x22222222;
  const bs = x ^ 0x5c5c5c5c;
  return (
    (((x - 0x20202020) & ~x) | // a byte < 0x20
      ((x + 0x01010101) | x) | // a byte >= 0x7f
      ((q - 0x01010101) & ~q) | // a quote
      ((bs - 0x01010101) & ~bs)) & // a backslash
    0x80808080
  );
}

/**
 * The first byte at or after p that is not a plain string byte, four at a
 * time. Unbounded: the caller's buffer holds such a byte (a line end, a
 * sentinel) before its end, and up to 3 bytes after it may be read.
 */
export function skipPlain(b: Uint8Array, dv: DataView, p: number): number {
  while (specialBytes(dv.getInt32(p, true)) === 0) p += 4;
  while (STR_CLASS[b[p]!] === 0) p++;
  return p;
}

/** The first byte at or after p that is not a space or a tab (the blanks a fast reader takes between tokens; other whitespace is the exact path's). */
export function skipBlanks(b: Uint8Array, p: number): number {
  let c = b[p];
  while (c === SPACE || c === TAB) c = b[++p];
  return p;
}

/** JSON whitespace as Python's json module skips it. */
export function isWsByte(c: number | undefined): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/** `a` copied into an array twice its length: the growth step of every tape and stack of the byte layer. */
export function doubled(a: Int32Array): Int32Array<ArrayBuffer> {
  const grown = new Int32Array(a.length * 2);
  grown.set(a);
  return grown;
}

export function isDigitByte(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

/** The span b[s, e) holds the bytes x[0, n), no more, no fewer. */
export function spanIs(b: Uint8Array, s: number, e: number, x: Uint8Array, n = x.length): boolean {
  if (e - s !== n) return false;
  for (let i = 0; i < n; i++) if (b[s + i] !== x[i]) return false;
  return true;
}

/** The string token b[s, e) (quotes included) is `name`'s bytes as written (a spelling with an escape is not). */
export function tokenIs(b: Uint8Array, s: number, e: number, name: Uint8Array): boolean {
  return spanIs(b, s + 1, e - 1, name);
}

/** Spans from this many bytes on are copied by memmove (below it, its call overhead costs more than the words). */
const MEMMOVE_FROM = 48;

/**
 * Copy within mem between non-overlapping spans of printable ASCII (the
 * only bytes the fast path ever copies). Eight bytes at a time through a
 * DataView for short spans, the last word overlapping the previous one
 * instead of a byte tail; memmove for long spans (MEMMOVE_FROM). Going
 * through float64 is exact here: a double's bits survive a load and a
 * store unless they are a NaN, and eight ASCII bytes (all below 0x80) can
 * never spell a NaN (that needs the top bits of the two high bytes set).
 */
export function copyBytes(b: Uint8Array, dv: DataView, dst: number, src: number, n: number): void {
  if (n >= 8) {
    if (n >= MEMMOVE_FROM) {
      b.copyWithin(dst, src, src + n);
      return;
    }
    const last = n - 8;
    for (let i = 0; i < last; i += 8) dv.setFloat64(dst + i, dv.getFloat64(src + i, true), true);
    dv.setFloat64(dst + last, dv.getFloat64(src + last, true), true);
    return;
  }
  if (n >= 4) {
    dv.setInt32(dst, dv.getInt32(src, true), true);
    dv.setInt32(dst + n - 4, dv.getInt32(src + n - 4, true), true);
    return;
  }
  for (let i = 0; i < n; i++) b[dst + i] = b[src + i]!;
}

/**
 * b[s, e) to `to` at o (another buffer, or a part of b apart from it);
 * returns the end. Never through a view: set(subarray) makes one per
 * call, and a view per row is garbage the engine collects late (several
 * megabytes of peak on a journal's rows). A short span by a byte loop; a
 * longer one by Buffer's native copy called on the plain array (a memcpy
 * with no view), as the engine copies a byte a nanosecond or two in a
 * loop.
 */
export function copyTo(b: Uint8Array, s: number, e: number, to: Uint8Array, o: number): number {
  if (e - s > COPY_LOOP_MAX) {
    (nativeCopy ??= Buffer.prototype.copy).call(b as Buffer, to, o, s, e);
    return o + e - s;
  }
  for (let i = s; i < e; i++) to[o++] = b[i]!;
  return o;
}

/** Spans up to this long are copied by copyTo's loop (the native call's fixed cost is about that many bytes' worth). */
const COPY_LOOP_MAX = 24;
/** Looked up on first use: the runtime sets up its Buffer when a program first touches it, and a verb that never copies a long span need not. */
let nativeCopy: typeof Buffer.prototype.copy | undefined;

/**
 * A copy of one span's bytes (a link's hash, say), compared with later
 * spans and made a string only when asked: a reader that follows a chain
 * row by row keeps the last row's hash here, not as a string per row.
 */
export class KeptSpan {
  bytes = new Uint8Array(64);
  len = 0;

  keep(b: Uint8Array, s: number, e: number): void {
    if (e - s > this.bytes.length) this.bytes = new Uint8Array(e - s);
    this.len = copyTo(b, s, e, this.bytes, 0);
  }

  /** The kept bytes equal b[s, e). */
  equals(b: Uint8Array, s: number, e: number): boolean {
    return spanIs(b, s, e, this.bytes, this.len);
  }

  /** The kept bytes as Latin-1 text (a plain ASCII span's string). */
  text(): string {
    return asciiText(this.bytes, 0, this.len);
  }
}

/** The array asciiText read last, and a Buffer over it: held weakly, so a dropped kernel's memory (a huge row's) is not kept alive by them. */
let readArray: WeakRef<Uint8Array> | null = null;
let readBuffer: WeakRef<Buffer> | null = null;

/**
 * The ASCII bytes mem[s, e) as a string (a lexeme the kernel asks about, an
 * id), made flat in one read: a string built a character at a time is a
 * rope of as many pieces, and Number() of it flattens it again. Read
 * through a Buffer over the array, made once per array: a decode of a
 * subarray makes a view per string.
 */
export function asciiText(mem: Uint8Array, s: number, e: number): string {
  let buf = readArray?.deref() === mem ? readBuffer!.deref() : undefined;
  if (buf === undefined) {
    buf = Buffer.from(mem.buffer, mem.byteOffset, mem.byteLength);
    readArray = new WeakRef(mem);
    readBuffer = new WeakRef(buf);
  }
  return buf.toString("latin1", s, e);
}
