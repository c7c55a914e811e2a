import { isUtf8 } from "node:buffer";
import { ByteSink, writeUnicodeEscape } from "../pyjson/encode-bytes.ts";
import { BACKSLASH, MAX_DEPTH, MINUS, QUOTE, SHORT_ESCAPE_LETTER, SHORT_ESCAPE_VALUE } from "../codec/bytes.ts";
import { convertibleNumberEnd } from "../pyjson/bytes.ts";
import { hex4 } from "../hex.ts";

/**
 * A journal row's JSON text re-indented at byte level: the bytes
 * `renderJson(row, 2)` would print for the parsed row (indent 2, `","` /
 * `": "`, raw UTF-8 with lone surrogates escaped, numbers as recorded, keys
 * in their order), every line indented by `pad` more spaces, written
 * without building a value. It validates as it goes with `json.loads`'
 * strict rules and DECLINES (returns -1, its partial output to be dropped)
 * anything it cannot reproduce with certainty: text that is not JSON, an
 * object with a duplicate key (or with an escaped key beside other keys),
 * nesting deeper than 64, an int of more than 4300 digits, invalid UTF-8,
 * leading or trailing bytes around the object. The caller then takes the
 * exact path for that row, which also decides whether it is a row at all.
 */


/** String byte classes: 0 copied as is (printable ASCII, DEL, and UTF-8 bytes, checked once per line), 1 quote, 2 backslash, 3 control (refused). */
const STR = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) STR[c] = 3;
STR[QUOTE] = 1;
STR[BACKSLASH] = 2;

/** afterItem: the container closes. */
const CLOSE = -2;
/** Objects with more members than this are left to the exact path (the duplicate check is pairwise). */
const MAX_MEMBERS = 64;

/** The output is the ByteSink: `buf[0, len)`. */
export class RowTranscoder extends ByteSink {
  private b!: Uint8Array;
  private e = 0;
  private high = false;
  /** Key spans of the open objects (a stack). */
  private keyS = new Int32Array(MAX_DEPTH * MAX_MEMBERS);
  private keyE = new Int32Array(MAX_DEPTH * MAX_MEMBERS);
  private keyTop = 0;
  private pad = 0;
  /** One line, `renderJson(row, null)`'s spelling (`", "` / `": "`): no line breaks, no indent. */
  private inline = false;
  /** Where afterItem found the closer. */
  private at = 0;

  constructor() {
    super(1 << 21);
  }

  /** Append bytes (output of the exact path). */
  append(bytes: Uint8Array): void {
    this.bytes(bytes);
  }

  /** Forget the output (it was written). */
  reset(): void {
    this.len = 0;
    // A huge row's output is not kept around for the next ones.
    if (this.buf.length > 1 << 24) this.buf = new Uint8Array(1 << 21);
  }

  /**
   * Append the row `b[s, e)` re-indented, its first line indented by `pad`
   * spaces too. False (output unchanged) when it must take the exact path.
   */
  row(b: Uint8Array, s: number, e: number, pad: number): boolean {
    return this.take(b, s, e, pad, false);
  }

  /**
   * Append the row `b[s, e)` on one line as `renderJson(row, null)` prints
   * it (`", "` and `": "`, nothing else between tokens). False (output
   * unchanged) when it must take the exact path.
   */
  rowInline(b: Uint8Array, s: number, e: number): boolean {
    return this.take(b, s, e, 0, true);
  }

  private take(b: Uint8Array, s: number, e: number, pad: number, inline: boolean): boolean {
    if (b[s] !== 0x7b || b[e - 1] !== 0x7d) return false;
    this.inline = inline;
    const start = this.len;
    this.b = b;
    this.e = e;
    this.high = false;
    this.keyTop = 0;
    this.pad = pad;
    this.reserve(2 * (e - s) + pad + 64);
    this.spaces(pad);
    const q = this.value(s, 0);
    if (q !== e || (this.high && !isUtf8(b.subarray(s, e)))) {
      this.len = start;
      return false;
    }
    return true;
  }

  private spaces(n: number): void {
    const o = this.buf;
    let l = this.len;
    for (let i = 0; i < n; i++) o[l++] = 0x20;
    this.len = l;
  }

  /** A line break and the indent of `level`, with room for the rest of the input after it. */
  private newline(level: number, p: number): void {
    const n = this.pad + 2 * level;
    this.reserve(n + 1 + 2 * (this.e - p) + 64);
    if (this.inline) return;
    this.buf[this.len++] = 0x0a;
    this.spaces(n);
  }

  private ws(p: number): number {
    const b = this.b;
    let c = b[p];
    while (c === 0x20 || c === 0x09) c = b[++p];
    return p;
  }

  private value(p: number, level: number): number {
    const b = this.b;
    const c = b[p];
    if (c === QUOTE) return this.string(p);
    if (c === 0x7b) return this.object(p, level);
    if (c === 0x5b) return this.array(p, level);
    if (c === 0x74) return this.word(p, "true");
    if (c === 0x66) return this.word(p, "false");
    if (c === 0x6e) return this.word(p, "null");
    if (c === 0x4e) return this.word(p, "NaN");
    if (c === 0x49) return this.word(p, "Infinity");
    if (c === MINUS && b[p + 1] === 0x49) return this.word(p, "-Infinity");
    return this.number(p);
  }

  private word(p: number, w: string): number {
    const b = this.b;
    if (p + w.length > this.e) return -1;
    for (let i = 0; i < w.length; i++) if (b[p + i] !== w.charCodeAt(i)) return -1;
    return this.copy(p, p + w.length);
  }

  private copy(s: number, e: number): number {
    const b = this.b;
    const o = this.buf;
    let l = this.len;
    for (let i = s; i < e; i++) o[l++] = b[i]!;
    this.len = l;
    return e;
  }

  private number(p: number): number {
    const q = convertibleNumberEnd(this.b, p);
    return q < 0 || q > this.e ? -1 : this.copy(p, q);
  }

  private string(p: number): number {
    const b = this.b;
    const e = this.e;
    this.reserve(e - p + 8);
    const o = this.buf;
    let l = this.len;
    o[l++] = QUOTE;
    p++;
    for (;;) {
      let c = 0;
      while (p < e && STR[(c = b[p]!)] === 0) {
        if (c >= 0x80) this.high = true;
        o[l++] = c;
        p++;
      }
      if (p >= e) return -1;
      const k = STR[c];
      if (k === 1) {
        o[l++] = QUOTE;
        this.len = l;
        return p + 1;
      }
      if (k === 3) return -1;
      // an escape
      const d = b[p + 1]!;
      if (d !== 0x75) {
        const u = SHORT_ESCAPE_VALUE[d]!;
        if (u < 0) return -1;
        l = unit(o, l, u);
        p += 2;
        continue;
      }
      const u = hex4Before(b, p + 2, e);
      if (u < 0) return -1;
      p += 6;
      if (u < 0x80) l = unit(o, l, u);
      else if (u < 0x800) {
        o[l++] = 0xc0 | (u >> 6);
        o[l++] = 0x80 | (u & 63);
      } else if (u < 0xd800 || u > 0xdfff) {
        o[l++] = 0xe0 | (u >> 12);
        o[l++] = 0x80 | ((u >> 6) & 63);
        o[l++] = 0x80 | (u & 63);
      } else {
        // a surrogate: a high one followed by an escaped low one is one code point (as Python reads it)
        const lo = u <= 0xdbff && b[p] === BACKSLASH && b[p + 1] === 0x75 ? hex4Before(b, p + 2, e) : -1;
        if (lo >= 0xdc00 && lo <= 0xdfff) {
          const cp = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
          o[l++] = 0xf0 | (cp >> 18);
          o[l++] = 0x80 | ((cp >> 12) & 63);
          o[l++] = 0x80 | ((cp >> 6) & 63);
          o[l++] = 0x80 | (cp & 63);
          p += 6;
        } else {
          // a lone surrogate cannot be UTF-8: the renderer escapes it
          l = writeUnicodeEscape(o, l, u);
        }
      }
    }
  }

  private object(p: number, level: number): number {
    if (level >= MAX_DEPTH) return -1;
    const b = this.b;
    p = this.ws(p + 1);
    if (b[p] === 0x7d) {
      this.buf[this.len++] = 0x7b;
      this.buf[this.len++] = 0x7d;
      return p + 1;
    }
    this.buf[this.len++] = 0x7b;
    const base = this.keyTop;
    let n = 0;
    for (;;) {
      if (b[p] !== QUOTE) return -1;
      if (n > 0) this.separator();
      this.newline(level + 1, p);
      const ks = p;
      const ke = this.string(p);
      if (ke < 0 || n >= MAX_MEMBERS) return -1;
      this.keyS[base + n] = ks;
      this.keyE[base + n] = ke;
      n++;
      this.keyTop = base + n;
      p = this.ws(ke);
      if (b[p] !== 0x3a) return -1;
      this.buf[this.len++] = 0x3a;
      this.buf[this.len++] = 0x20;
      const q = this.afterItem(this.value(this.ws(p + 1), level + 1), 0x7d);
      if (q === -1) return -1;
      if (q === CLOSE) {
        p = this.at;
        break;
      }
      p = q;
    }
    if (n > 1 && this.duplicateKeys(base, n)) return -1;
    this.keyTop = base;
    this.newline(level, p);
    this.buf[this.len++] = 0x7d;
    return p + 1;
  }

  /** The item separator: `,` before a line break, `, ` inline (the room was reserved with the previous item). */
  private separator(): void {
    this.buf[this.len++] = 0x2c;
    if (this.inline) this.buf[this.len++] = 0x20;
  }

  /** Two equal keys (or a key with an escape, which could equal another once decoded). */
  private duplicateKeys(base: number, n: number): boolean {
    const b = this.b;
    const ks = this.keyS;
    const ke = this.keyE;
    for (let i = base; i < base + n; i++) {
      const s = ks[i]!;
      const len = ke[i]! - s;
      for (let k = s + 1; k < s + len - 1; k++) if (b[k] === BACKSLASH) return true;
      for (let j = base; j < i; j++) {
        if (ke[j]! - ks[j]! !== len) continue;
        const t = ks[j]!;
        let k = 1;
        while (k < len - 1 && b[s + k] === b[t + k]) k++;
        if (k === len - 1) return true;
      }
    }
    return false;
  }

  /**
   * After an item ending at p (-1: it failed): the next item's start past a
   * comma, CLOSE when `closer` follows (its offset in `at`), or -1.
   */
  private afterItem(p: number, closer: number): number {
    if (p < 0) return -1;
    p = this.ws(p);
    const d = this.b[p];
    if (d === 0x2c) return this.ws(p + 1);
    this.at = p;
    return d === closer ? CLOSE : -1;
  }

  private array(p: number, level: number): number {
    if (level >= MAX_DEPTH) return -1;
    const b = this.b;
    p = this.ws(p + 1);
    this.buf[this.len++] = 0x5b;
    if (b[p] === 0x5d) {
      this.buf[this.len++] = 0x5d;
      return p + 1;
    }
    let n = 0;
    for (;;) {
      if (n++ > 0) this.separator();
      this.newline(level + 1, p);
      const q = this.afterItem(this.value(p, level + 1), 0x5d);
      if (q === -1) return -1;
      if (q === CLOSE) {
        p = this.at;
        break;
      }
      p = q;
    }
    this.newline(level, p);
    this.buf[this.len++] = 0x5d;
    return p + 1;
  }
}

/** The value of the 4 hex digits at p (any case), or -1; they must end before `e` (a closing quote follows). */
function hex4Before(b: Uint8Array, p: number, e: number): number {
  return p + 4 >= e ? -1 : hex4(b, p);
}

/** A code unit below 0x80 as the renderer writes it: short escape, `\u00XX` for other controls, else itself. */
function unit(o: Uint8Array, l: number, u: number): number {
  const s = SHORT_ESCAPE_LETTER[u]!;
  if (s !== 0) {
    o[l++] = BACKSLASH;
    o[l++] = s;
    return l;
  }
  if (u < 0x20) return writeUnicodeEscape(o, l, u);
  o[l++] = u;
  return l;
}


