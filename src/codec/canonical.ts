import { writeUnicodeEscape } from "../pyjson/encode-bytes.ts";
import { BACKSLASH, COLON, COMMA, copyBytes, LBRACE, LBRACKET, RBRACE, RBRACKET, SPACE } from "./bytes.ts";
import { compareSpans, KIND_MASK, NOT_COMPACT_CANONICAL, NOT_DEFAULT_SPACING, type RowIndex, Spell, Tok } from "./row-index.ts";

/**
 * The canonical form of values a row index took (py-json-v1:
 * `json.dumps(v, sort_keys=True, separators=(",", ":"))`), written from the
 * index into the memory the row lies in: a value already in that spelling
 * is copied as its bytes, an object whose keys are out of order has them
 * sorted, whitespace between tokens is dropped. Every consumer that needs a
 * row's canonical bytes (the payload pre-image `journal record` hashes, the
 * rows a run receipt embeds) writes them here.
 *
 * It copies tokens as written, so the caller first declines what is not
 * Python's spelling (the index's Utf8 and NotPython flags: every string,
 * key or value, is then spelled as json.dumps spells it, one spelling per
 * string). Keys are ordered by code points (compareSpans decodes escapes).
 * A duplicate key at any depth makes a write fail (-1): which value counts
 * is the exact reader's to say.
 *
 * The row and the output share one buffer (`mem`, with `dv` over it), so
 * copies are within it and make no views.
 */
/** A token (its first tape word w) is written as its bytes: a scalar, or a container with none of the `unlike` spelling flags. */
export function copiedWhole(w: number, unlike: number): boolean {
  const kind = w & KIND_MASK;
  return (kind !== Tok.Object && kind !== Tok.Array) || (w & unlike) === 0;
}

/** Whether the first `len` (up to four) of the big-endian bytes `x` hold a backslash. */
function holdsBackslash(x: number, len: number): boolean {
  for (let i = 0; i < 4 && i < len; i++) if (((x >>> (24 - 8 * i)) & 0xff) === BACKSLASH) return true;
  return false;
}

/** sortKeys sorts runs of this many keys by insertion, then merges them. */
const SORT_RUN = 16;

export class CanonicalWriter {
  /** Key tokens of the objects being written, a segment per nesting level; the caller fills a first segment for `members`. */
  order = new Int32Array(256);
  /** Per entry of `order`, its key's sort prefix (sortKeys). */
  private prefix = new Int32Array(256);
  /** Where sortKeys merges to, as long as `order`. */
  private scratchOrder = new Int32Array(256);
  private scratchPrefix = new Int32Array(256);
  /** The bytes the keys being sorted begin with alike (sortKeys). */
  private head = 0;

  constructor(
    readonly ix: RowIndex,
    public mem: Uint8Array,
    public dv: DataView,
  ) {}

  /** `{"k":v,...}` for the key tokens order[at, at+n) (sorted), values compact; at o. Returns the end, or -1. */
  members(at: number, n: number, o: number): number {
    const b = this.mem;
    const tape = this.ix.tape;
    b[o++] = LBRACE;
    for (let i = 0; i < n; i++) {
      if (i > 0) b[o++] = COMMA;
      const k = this.order[at + i]!;
      o = this.copy(tape[4 * k + 1]!, tape[4 * k + 2]!, o);
      b[o++] = COLON;
      o = this.compact(k + 1, at + n, o);
      if (o < 0) return -1;
    }
    b[o++] = RBRACE;
    return o;
  }

  /** Token t compact (objects sorted) at o; `free`: the first unused entry of `order`. Returns the end, or -1. */
  compact(t: number, free: number, o: number): number {
    const tape = this.ix.tape;
    const w = tape[4 * t]!;
    const kind = w & KIND_MASK;
    if (copiedWhole(w, NOT_COMPACT_CANONICAL)) return this.copy(tape[4 * t + 1]!, tape[4 * t + 2]!, o);
    const b = this.mem;
    const end = tape[4 * t + 3]!;
    if (kind === Tok.Array) {
      b[o++] = LBRACKET;
      for (let c = t + 1; c < end; c = tape[4 * c + 3]!) {
        if (c > t + 1) b[o++] = COMMA;
        o = this.compact(c, free, o);
        if (o < 0) return -1;
      }
      b[o++] = RBRACKET;
      return o;
    }
    let n = 0;
    for (let k = t + 1; k < end; k = tape[4 * (k + 1) + 3]!) n++;
    const order = this.segment(free, n);
    let i = free;
    for (let k = t + 1; k < end; k = tape[4 * (k + 1) + 3]!) order[i++] = k;
    if ((w & Spell.Unsorted) !== 0 && !this.sortKeys(free, n)) return -1;
    return this.members(free, n, o);
  }

  /** `order` with room for n entries from `at`. */
  segment(at: number, n: number): Int32Array {
    if (at + n > this.order.length) {
      const grown = new Int32Array(Math.max(2 * this.order.length, at + n));
      grown.set(this.order);
      this.order = grown;
      this.prefix = new Int32Array(grown.length);
      this.scratchOrder = new Int32Array(grown.length);
      this.scratchPrefix = new Int32Array(grown.length);
    }
    return this.order;
  }

  /**
   * Sort the key tokens order[at, at+n) in Python's order of their text
   * (code points): insertion sort in runs of SORT_RUN, then merges, so a
   * map of hundreds of keys (coverage by file, hits by path) costs
   * n log n compares, not n². Equal keys (a duplicate) return false: the
   * exact path keeps the last. A comparison sort compares every two keys
   * that end up side by side, so a duplicate is always seen.
   */
  sortKeys(at: number, n: number): boolean {
    const order = this.order;
    const pre = this.prefix;
    const tape = this.ix.tape;
    const b = this.mem;
    const dv = this.dv;
    // The keys' common head: the same raw bytes in all (up to any backslash), so where
    // a character starts in each. From there, each key's next four bytes, big-endian,
    // zero-padded: comparing two of these orders the keys unless they are equal (a
    // plain key holds no zero byte, and its top byte is below 0x80: no sign trouble).
    // An escape orders as its decoded text (compareSpans), not its bytes: with a
    // backslash among those four bytes of any key, every pair is compared so.
    const k0 = order[at]!;
    const s0 = tape[4 * k0 + 1]! + 1;
    let head = tape[4 * k0 + 2]! - 1 - s0;
    for (let i = at + 1; i < at + n && head > 0; i++) {
      const k = order[i]!;
      const s = tape[4 * k + 1]! + 1;
      const m = Math.min(head, tape[4 * k + 2]! - 1 - s);
      let j = 0;
      while (j < m && b[s + j] === b[s0 + j] && b[s + j] !== BACKSLASH) j++;
      head = j;
    }
    let escaped = false;
    for (let i = at; i < at + n; i++) {
      const k = order[i]!;
      const s = tape[4 * k + 1]! + 1 + head;
      const len = tape[4 * k + 2]! - 1 - s;
      const x = dv.getInt32(s, false);
      pre[i] = len >= 4 ? x : len <= 0 ? 0 : x & ~(-1 >>> (8 * len));
      escaped ||= (tape[4 * k]! & Spell.Escaped) !== 0 && holdsBackslash(x, len);
    }
    if (escaped) pre.fill(0, at, at + n);
    this.head = head;
    const end = at + n;
    for (let s = at; s < end; s += SORT_RUN) if (!this.insertionSort(s, Math.min(end, s + SORT_RUN))) return false;
    if (n <= SORT_RUN) return true;
    let so = order;
    let sp = pre;
    let to = this.scratchOrder;
    let tp = this.scratchPrefix;
    for (let width = SORT_RUN; width < n; width *= 2) {
      for (let lo = at; lo < end; lo += 2 * width) {
        const mid = Math.min(end, lo + width);
        const hi = Math.min(end, lo + 2 * width);
        let i = lo;
        let j = mid;
        let o = lo;
        while (i < mid && j < hi) {
          const c = this.compareKeys(so[i]!, sp[i]!, so[j]!, sp[j]!);
          if (c === 0) return false;
          const from = c < 0 ? i++ : j++;
          to[o] = so[from]!;
          tp[o++] = sp[from]!;
        }
        for (; i < mid; i++, o++) {
          to[o] = so[i]!;
          tp[o] = sp[i]!;
        }
        for (; j < hi; j++, o++) {
          to[o] = so[j]!;
          tp[o] = sp[j]!;
        }
      }
      const mo = so;
      const mp = sp;
      so = to;
      sp = tp;
      to = mo;
      tp = mp;
    }
    if (so !== order) order.set(so.subarray(at, end), at);
    return true;
  }

  /** Insertion-sort order[s, e) (prefixes set); false on a duplicate key. */
  private insertionSort(s: number, e: number): boolean {
    const order = this.order;
    const pre = this.prefix;
    for (let i = s + 1; i < e; i++) {
      const k = order[i]!;
      const kp = pre[i]!;
      let j = i - 1;
      for (; j >= s; j--) {
        const c = this.compareKeys(order[j]!, pre[j]!, k, kp);
        if (c === 0) return false;
        if (c < 0) break;
        order[j + 1] = order[j]!;
        pre[j + 1] = pre[j]!;
      }
      order[j + 1] = k;
      pre[j + 1] = kp;
    }
    return true;
  }

  /** The order of key tokens a and b (their sort prefixes pa, pb): negative, 0 (equal), positive. */
  private compareKeys(a: number, pa: number, b: number, pb: number): number {
    if (pa !== pb) return pa < pb ? -1 : 1;
    const tape = this.ix.tape;
    const h = this.head + 1;
    return compareSpans(this.mem, tape[4 * a + 1]! + h, tape[4 * a + 2]! - 1, tape[4 * b + 1]! + h, tape[4 * b + 2]! - 1);
  }

  /** Copy mem[s, e) to o; returns the end. */
  copy(s: number, e: number, o: number): number {
    copyBytes(this.mem, this.dv, o, s, e - s);
    return o + e - s;
  }

  /**
   * Token t in json.dumps' default spelling at o (`", "` and `": "`, members
   * in input order, raw UTF-8 escaped as ensure_ascii escapes it; every
   * other byte as written): the rows `journal record` writes, a row
   * re-spaced for the kernels (writer-spacing.ts). Returns the end.
   */
  spaced(t: number, o: number): number {
    const tape = this.ix.tape;
    const w = tape[4 * t]!;
    const kind = w & KIND_MASK;
    if ((w & Spell.Utf8) === 0 && copiedWhole(w, NOT_DEFAULT_SPACING)) return this.copy(tape[4 * t + 1]!, tape[4 * t + 2]!, o);
    const b = this.mem;
    if (kind !== Tok.Object && kind !== Tok.Array) return writeEscapedUtf8(b, tape[4 * t + 1]!, tape[4 * t + 2]!, b, o);
    const end = tape[4 * t + 3]!;
    b[o++] = kind === Tok.Array ? LBRACKET : LBRACE;
    for (let c = t + 1; c < end; c = tape[4 * c + 3]!) {
      if (c > t + 1) {
        b[o++] = COMMA;
        b[o++] = SPACE;
      }
      if (kind === Tok.Object) {
        o = this.spaced(c, o);
        b[o++] = COLON;
        b[o++] = SPACE;
        c++;
      }
      o = this.spaced(c, o);
    }
    b[o++] = kind === Tok.Array ? RBRACKET : RBRACE;
    return o;
  }
}

/**
 * The string token src[p, end) (its UTF-8 validated by the index) at
 * out[o], its UTF-8 sequences as ensure_ascii escapes them (lowercase
 * `\uXXXX`, a surrogate pair past U+FFFF); returns the end. `out` may be
 * `src`, written past `end`.
 */
function writeEscapedUtf8(src: Uint8Array, p: number, end: number, out: Uint8Array, o: number): number {
  while (p < end) {
    const c = src[p]!;
    if (c < 0x80) {
      out[o++] = c;
      p++;
      continue;
    }
    let cp: number;
    if (c < 0xe0) {
      cp = ((c & 0x1f) << 6) | (src[p + 1]! & 0x3f);
      p += 2;
    } else if (c < 0xf0) {
      cp = ((c & 0x0f) << 12) | ((src[p + 1]! & 0x3f) << 6) | (src[p + 2]! & 0x3f);
      p += 3;
    } else {
      cp = ((c & 0x07) << 18) | ((src[p + 1]! & 0x3f) << 12) | ((src[p + 2]! & 0x3f) << 6) | (src[p + 3]! & 0x3f);
      p += 4;
    }
    if (cp < 0x10000) o = writeUnicodeEscape(out, o, cp);
    else {
      o = writeUnicodeEscape(out, o, 0xd800 + ((cp - 0x10000) >> 10));
      o = writeUnicodeEscape(out, o, 0xdc00 + ((cp - 0x10000) & 0x3ff));
    }
  }
  return o;
}
