import { isFloatRepr } from "../../pyjson/float.ts";
import { INT_MAX_STR_DIGITS } from "../../pyjson/parse.ts";
import { asciiText } from "../../wasm/host.ts";
import { compareSpans, fixedFloatIsRepr, jsonStringEnd, scannedString, Spell } from "../../codec/row-index.ts";
import { HEX_BYTES as HEX_CHARS } from "../../hex.ts";
import { BACKSLASH, COLON, COMMA, LBRACE, LBRACKET, MAX_DEPTH, MINUS, QUOTE, RBRACE, RBRACKET, STR_CLASS, hasShortEscape, skipBlanks, skipPlain } from "../../codec/bytes.ts";

/**
 * The canonical emitter the record fast path (record-bytes.ts) builds rows
 * with: a line already in json.dumps spelling (`ensure_ascii`, lowercase
 * `\uXXXX`, Python float repr) re-emitted as its payload pre-image
 *
 *   json.dumps({payload minus envelope, "event": type}, sort_keys=True, separators=(",", ":"))
 *
 * from slices of the raw bytes (members sorted by key, whitespace between
 * tokens dropped, nested objects sorted too), without decoding a string;
 * then the payload and event hashes. Every value not in that spelling is
 * REFUSED (-1 / false): raw UTF-8, `\/`, uppercase hex escapes, non-repr
 * numbers (`1E-5`, `1.50`), duplicate or escaped keys, deep nesting; the
 * caller then takes the exact path, so this only has to be exact for what
 * it accepts. (Verification has its own fast path: the kernel, kernel.wat.)
 *
 * Memory: one Uint8Array `mem` holds the read area (lines live there), a
 * scratch area for re-emitted compound values, the payload pre-image, the
 * event pre-image and the row area, so every copy is a `copyWithin` (no view
 * allocations). The byte at a line's end offset is always a line
 * terminator or a sentinel LF, which stops every scanning loop without
 * bounds checks.
 */




/** Envelope keys, recognised by their bytes. */
export const enum Key {
  /** Not an envelope key: a payload member. */
  Payload,
  Ts,
  ElapsedS,
  Index,
  Event,
  PrevHash,
  PayloadHash,
  EventHash,
  HashProfile,
}

/** Envelope key bytes by Key value, and a (length, first byte & 15) -> Key table (no two collide). */
const ENVELOPE_BYTES: Uint8Array[] = [];
const ENVELOPE_SLOT = new Uint8Array(13 << 4);
for (const [name, kind] of [
  ["ts", Key.Ts],
  ["elapsed_s", Key.ElapsedS],
  ["index", Key.Index],
  ["event", Key.Event],
  ["prev_hash", Key.PrevHash],
  ["payload_hash", Key.PayloadHash],
  ["event_hash", Key.EventHash],
  ["hash_profile", Key.HashProfile],
] as const) {
  const bytes = new TextEncoder().encode(name);
  const slot = (bytes.length << 4) | (bytes[0]! & 15);
  if (ENVELOPE_SLOT[slot] !== 0) throw new Error(`envelope key table collision: ${name}`);
  ENVELOPE_SLOT[slot] = kind;
  ENVELOPE_BYTES[kind] = bytes;
}


const EH_PREFIX = new TextEncoder().encode('{"event_type":');
const EH_INDEX = new TextEncoder().encode(',"index":');
const EH_PAYLOAD = new TextEncoder().encode(',"payload_hash":"');
const EH_PREV = new TextEncoder().encode('","prev_hash":"');

/** Offsets of the event pre-image pieces in the template area. */
const TPL_INDEX = 0;
const TPL_PAYLOAD = 16;
const TPL_PREV = 40;
const TPL_PREFIX = 64;
const TPL_SIZE = 80;

/**
 * The two fixed event pre-image buffers. When prev_hash is a 64-byte hash
 * (every row but a genesis), the pre-image ends in a fixed-length suffix
 * `,"payload_hash":"H","prev_hash":"P"}`, so each buffer keeps that suffix
 * at a fixed place with its constant bytes written once, and the variable
 * head `{"event_type":T,"index":I` is written right-aligned before it.
 * P of one buffer is where the other row's event hash hex is written:
 * the hash of row i is already in place as the prev of row i+1.
 */
const FIX_HEAD = 256;
const FIX_H = FIX_HEAD + EH_PAYLOAD.length;
const FIX_P = FIX_H + 64 + EH_PREV.length;
const FIX_END = FIX_P + 64 + 2;
const FIX_SIZE = 448;
/** Longest event type token (with quotes) the fixed buffers take; longer ones use the general area. */
const FIX_MAX_TYPE = FIX_HEAD - EH_PREFIX.length - EH_INDEX.length - 24;

/** Bytes reserved beyond each area for small fixed writes. */
const SLACK = 256;

/** Views of this length and longer are not cached. */
const VIEW_CACHE = 16384;

export class CanonicalEmitter {
  /** Read area [0, readCap] (+1 sentinel), then scratch, payload pre-image, event pre-image, templates, row area. */
  readonly mem: Uint8Array;
  readonly dv: DataView;
  readonly readCap: number;
  readonly scratchBase: number;
  private readonly scratchEnd: number;
  readonly outBase: number;
  readonly outEnd: number;
  private readonly ehBase: number;
  private readonly ehEnd: number;
  /** Constant pieces of the event pre-image, copied from here (word copies beat byte loops). */
  private readonly tplBase: number;
  /** The two fixed event pre-image buffers (see FIX_HEAD); prevHex/curHex are their P slots. */
  private readonly fixA: number;
  /** Where the caller's row area starts (`rowCap` bytes). */
  readonly rowBase: number;

  /** Event type token including its quotes (canonical spelling). */
  typeStart = 0;
  typeEnd = 0;
  /** The previous hash the event pre-image links to: [prevStart, prevEnd) (empty for a genesis row). */
  prevStart = 0;
  prevEnd = 0;
  /** Length of the payload pre-image at `outBase`. */
  outLen = 0;

  /** SHA-256 digests: of the payload pre-image, and of the event pre-image. */
  readonly payloadDigest = new Uint8Array(32);
  private readonly eventDigest = new Uint8Array(32);
  /** Hex of the previous row's event hash, and of the current row's computed one (two slots, swapped). */
  prevHex: number;
  curHex: number;
  private fixAViews: (Uint8Array | undefined)[] = [];
  private fixBViews: (Uint8Array | undefined)[] = [];
  private outViews: (Uint8Array | undefined)[] = [];
  private ehViews: (Uint8Array | undefined)[] = [];
  private readonly indexDigits = new Uint8Array(24);
  private indexLen = 0;
  private lastIndex = -1;

  // ---- member table of the object being assembled (a stack, one frame per nesting level) ----
  readonly mKeyS = new Int32Array(1024);
  readonly mKeyE = new Int32Array(1024);
  readonly mValS = new Int32Array(1024);
  readonly mValE = new Int32Array(1024);
  /** Sort keys of the members (see sortMembers). */
  private readonly mPre = new Int32Array(1024);
  mTop = 0;
  /** Next free byte of the scratch area. */
  sp = 0;
  /** Set by scanNumber: the last number had a fraction or exponent. */
  private numIsFloat = false;
  private floatText = "";

  /** `readCap`: the longest line; `rowCap`: bytes of the caller's row area. */
  constructor(readCap: number, readonly rowCap: number) {
    this.readCap = readCap;
    const scratch = readCap * 2 + SLACK;
    const out = readCap + SLACK;
    const eh = readCap + SLACK;
    this.scratchBase = readCap + 64;
    this.scratchEnd = this.scratchBase + scratch - SLACK;
    this.outBase = this.scratchBase + scratch;
    this.outEnd = this.outBase + out - SLACK;
    this.ehBase = this.outBase + out;
    this.ehEnd = this.ehBase + eh - SLACK;
    this.tplBase = this.ehBase + eh;
    this.fixA = this.tplBase + TPL_SIZE;
    this.rowBase = this.fixA + 2 * FIX_SIZE;
    const mem = new Uint8Array(this.rowBase + rowCap);
    mem.set(EH_PREFIX, this.ehBase);
    mem.set(EH_INDEX, this.tplBase + TPL_INDEX);
    mem.set(EH_PAYLOAD, this.tplBase + TPL_PAYLOAD);
    mem.set(EH_PREV, this.tplBase + TPL_PREV);
    mem.set(EH_PREFIX, this.tplBase + TPL_PREFIX);
    for (const fix of [this.fixA, this.fixA + FIX_SIZE]) {
      mem.set(EH_PAYLOAD, fix + FIX_HEAD);
      mem.set(EH_PREV, fix + FIX_H + 64);
      mem[fix + FIX_P + 64] = QUOTE;
      mem[fix + FIX_P + 65] = RBRACE;
    }
    this.prevHex = this.fixA + FIX_P;
    this.curHex = this.fixA + FIX_SIZE + FIX_P;
    this.mem = mem;
    this.dv = new DataView(mem.buffer, mem.byteOffset, mem.byteLength);
  }

  /** Start a payload: an empty scratch and member table. */
  begin(): void {
    this.sp = this.scratchBase;
    this.mTop = 0;
  }

  /** Validate an atom (number or literal) at p in canonical spelling; returns its end or -1. */
  scanAtom(p: number): number {
    const b = this.mem;
    const c = b[p]!;
    if (c === 0x74) return matchWord(b, p, "true");
    if (c === 0x66) return matchWord(b, p, "false");
    if (c === 0x6e) return matchWord(b, p, "null");
    if (c === 0x4e) return matchWord(b, p, "NaN");
    if (c === 0x49) return matchWord(b, p, "Infinity");
    if (c === MINUS && b[p + 1] === 0x49) return matchWord(b, p, "-Infinity");
    const q = this.scanNumber(p);
    if (q < 0) return -1;
    if (!this.numIsFloat) {
      // ints are canonical as written, except -0 (Python prints 0)
      if (b[p] === MINUS && b[p + 1] === 0x30 && q === p + 2) return -1;
      return q;
    }
    return this.floatIsRepr(p, q) ? q : -1;
  }

  /** JSON number syntax at p; returns its end or -1; sets numIsFloat. */
  private scanNumber(p: number): number {
    const b = this.mem;
    const start = p;
    if (b[p] === MINUS) p++;
    let c = b[p]!;
    if (c === 0x30) {
      p++;
    } else if (c >= 0x31 && c <= 0x39) {
      p = skipDigits(b, this.dv, p + 1);
    } else {
      return -1;
    }
    let isFloat = false;
    if (b[p] === 0x2e) {
      p++;
      c = b[p]!;
      if (c < 0x30 || c > 0x39) return -1;
      p = skipDigits(b, this.dv, p);
      isFloat = true;
    }
    c = b[p]!;
    if (c === 0x65 || c === 0x45) {
      p++;
      c = b[p]!;
      if (c === 0x2b || c === MINUS) p++;
      c = b[p]!;
      if (c < 0x30 || c > 0x39) return -1;
      while ((c = b[p]!) >= 0x30 && c <= 0x39) p++;
      isFloat = true;
    }
    if (!isFloat && p - start > INT_MAX_STR_DIGITS) return -1; // Python refuses it; exact path decides
    this.numIsFloat = isFloat;
    return p;
  }

  /** True when the float lexeme mem[s, e) is exactly Python's repr of its value. */
  private floatIsRepr(s: number, e: number): boolean {
    const b = this.mem;
    if (e - s > 32) return false;
    const quick = fixedFloatIsRepr(b, s, e);
    if (quick !== 0) return quick > 0;
    const text = asciiText(b, s, e);
    if (text === this.floatText) return true;
    if (!isFloatRepr(text)) return false;
    this.floatText = text;
    return true;
  }

  /** Re-emit the object at p canonically into scratch; returns the end in the line or -1. */
  emitObject(p: number, depth: number): number {
    if (depth > MAX_DEPTH) return -1;
    const b = this.mem;
    p = skipBlanks(b, p + 1);
    if (b[p] === RBRACE) {
      if (!this.room(2)) return -1;
      b[this.sp++] = LBRACE;
      b[this.sp++] = RBRACE;
      return p + 1;
    }
    const base = this.mTop;
    const start = this.sp;
    for (;;) {
      if (b[p] !== QUOTE) return -1;
      const ks = p + 1;
      const ke = scanPlainKey(b, this.dv, ks);
      if (ke < 0) return -1;
      p = skipBlanks(b, ke + 1);
      if (b[p] !== COLON) return -1;
      p = this.member(skipBlanks(b, p + 1), ks, ke, depth);
      if (p < 0) return -1;
      p = skipBlanks(b, p);
      const d = b[p];
      if (d === COMMA) {
        p = skipBlanks(b, p + 1);
        continue;
      }
      if (d !== RBRACE) return -1;
      p++;
      break;
    }
    const n = this.mTop - base;
    if (!this.sortMembers(base, n)) return -1;
    // Assemble after the members' re-emitted values, then move the result
    // down to where this object started, so the caller sees one contiguous
    // canonical value (no intermediate bytes in between).
    const at = this.sp;
    const o = this.assemble(base, n, at, this.scratchEnd);
    this.mTop = base;
    if (o < 0) return -1;
    if (at !== start) b.copyWithin(start, at, o);
    this.sp = start + (o - at);
    return p;
  }

  /** Re-emit the array at p canonically into scratch; returns the end in the line or -1. */
  emitArray(p: number, depth: number): number {
    if (depth > MAX_DEPTH) return -1;
    const b = this.mem;
    p = skipBlanks(b, p + 1);
    if (!this.room(1)) return -1;
    b[this.sp++] = LBRACKET;
    if (b[p] === RBRACKET) {
      if (!this.room(1)) return -1;
      b[this.sp++] = RBRACKET;
      return p + 1;
    }
    for (;;) {
      const c = b[p];
      if (c === QUOTE) {
        const q = scanCanonicalString(b, this.dv, p + 1);
        if (q < 0) return -1;
        if (!this.copyToScratch(p, q + 1)) return -1;
        p = q + 1;
      } else if (c === LBRACE || c === LBRACKET) {
        p = c === LBRACE ? this.emitObject(p, depth + 1) : this.emitArray(p, depth + 1);
        if (p < 0) return -1;
      } else {
        const q = this.scanAtom(p);
        if (q < 0) return -1;
        if (!this.copyToScratch(p, q)) return -1;
        p = q;
      }
      p = skipBlanks(b, p);
      const d = b[p];
      if (!this.room(1)) return -1;
      if (d === COMMA) {
        b[this.sp++] = COMMA;
        p = skipBlanks(b, p + 1);
        continue;
      }
      if (d !== RBRACKET) return -1;
      b[this.sp++] = RBRACKET;
      return p + 1;
    }
  }

  /** A member's value at p (key [ks, ke), in an object at `depth`) into the member table; returns its end or -1. */
  member(p: number, ks: number, ke: number, depth: number): number {
    const b = this.mem;
    const m = this.mTop++;
    if (m >= this.mKeyS.length) return -1;
    this.mKeyS[m] = ks;
    this.mKeyE[m] = ke;
    const c = b[p];
    if (c === QUOTE) {
      const q = scanCanonicalString(b, this.dv, p + 1);
      if (q < 0) return -1;
      this.mValS[m] = p;
      this.mValE[m] = q + 1;
      return q + 1;
    }
    if (c === LBRACE || c === LBRACKET) {
      const vs = this.sp;
      p = c === LBRACE ? this.emitObject(p, depth + 1) : this.emitArray(p, depth + 1);
      if (p < 0) return -1;
      this.mValS[m] = vs;
      this.mValE[m] = this.sp;
      return p;
    }
    const q = this.scanAtom(p);
    if (q < 0) return -1;
    this.mValS[m] = p;
    this.mValE[m] = q;
    return q;
  }

  /** "event" (key at eventKeyS) joins the payload members with the type as its value; sort and assemble the pre-image. */
  finishPayload(eventKeyS: number): boolean {
    const m = this.mTop++;
    if (m >= this.mKeyS.length) return false;
    this.mKeyS[m] = eventKeyS;
    this.mKeyE[m] = eventKeyS + 5;
    this.mValS[m] = this.typeStart;
    this.mValE[m] = this.typeEnd;
    if (!this.sortMembers(0, this.mTop)) return false;
    const o = this.assemble(0, this.mTop, this.outBase, this.outEnd);
    if (o < 0) return false;
    this.outLen = o - this.outBase;
    return true;
  }

  private room(n: number): boolean {
    return this.sp + n <= this.scratchEnd;
  }

  private copyToScratch(s: number, e: number): boolean {
    const n = e - s;
    if (this.sp + n > this.scratchEnd) return false;
    copyBytes(this.mem, this.dv, this.sp, s, n);
    this.sp += n;
    return true;
  }

  /**
   * Insertion-sort members [base, base+n) by key bytes (keys are plain
   * printable ASCII, so byte order is Python's code-point order). Equal
   * keys (duplicates) return false: the exact path applies last-wins.
   */
  sortMembers(base: number, n: number): boolean {
    const b = this.mem;
    const dv = this.dv;
    const ks = this.mKeyS;
    const ke = this.mKeyE;
    const vs = this.mValS;
    const ve = this.mValE;
    const pre = this.mPre;
    // Each key's first four bytes, big-endian, zero-padded: comparing two of
    // these numbers orders the keys unless they are equal (keys are
    // printable ASCII, so a key never holds the zero padding, and the top
    // byte is below 0x80: no sign trouble).
    for (let i = base; i < base + n; i++) {
      const len = ke[i]! - ks[i]!;
      const x = dv.getInt32(ks[i]!, false);
      pre[i] = len >= 4 ? x : len === 0 ? 0 : x & ~(-1 >>> (8 * len));
    }
    for (let i = base + 1; i < base + n; i++) {
      const a0 = ks[i]!;
      const a1 = ke[i]!;
      const ap = pre[i]!;
      const pp = pre[i - 1]!;
      if (pp < ap) continue; // already in order: the common case for sorted input
      if (pp === ap) {
        const c = compareSpans(b, ks[i - 1]!, ke[i - 1]!, a0, a1);
        if (c === 0) return false;
        if (c < 0) continue;
      }
      const v0 = vs[i]!;
      const v1 = ve[i]!;
      let j = i - 1;
      for (;;) {
        ks[j + 1] = ks[j]!;
        ke[j + 1] = ke[j]!;
        vs[j + 1] = vs[j]!;
        ve[j + 1] = ve[j]!;
        pre[j + 1] = pre[j]!;
        j--;
        if (j < base) break;
        const jp = pre[j]!;
        if (jp < ap) break;
        if (jp === ap) {
          const c = compareSpans(b, ks[j]!, ke[j]!, a0, a1);
          if (c === 0) return false;
          if (c < 0) break;
        }
      }
      ks[j + 1] = a0;
      ke[j + 1] = a1;
      vs[j + 1] = v0;
      ve[j + 1] = v1;
      pre[j + 1] = ap;
    }
    return true;
  }

  /** Write `{"k":v,...}` for members [base, base+n) at `o`; returns the end or -1. */
  assemble(base: number, n: number, o: number, limit: number): number {
    const b = this.mem;
    if (o + 1 > limit) return -1;
    b[o++] = LBRACE;
    for (let i = base; i < base + n; i++) {
      const k0 = this.mKeyS[i]! - 1;
      const k1 = this.mKeyE[i]! + 1;
      const v0 = this.mValS[i]!;
      const v1 = this.mValE[i]!;
      if (o + (k1 - k0) + (v1 - v0) + 2 > limit) return -1;
      if (i > base) b[o++] = COMMA;
      copyBytes(b, this.dv, o, k0, k1 - k0);
      o += k1 - k0;
      b[o++] = COLON;
      copyBytes(b, this.dv, o, v0, v1 - v0);
      o += v1 - v0;
    }
    if (o + 1 > limit) return -1;
    b[o++] = RBRACE;
    return o;
  }

  /** SHA-256 of the payload pre-image into `payloadDigest`. */
  hashPayload(): void {
    Bun.SHA256.hash(this.view(this.outBase, this.outLen, this.outViews), this.payloadDigest);
  }

  /**
   * Build the event pre-image `{"event_type":T,"index":I,"payload_hash":"H","prev_hash":"P"}`
   * from the scanned row (T, P from the line; H = hex(payloadDigest)), hash
   * it and write hex(event digest) to the current hex slot. Returns false if
   * the pre-image would not fit.
   */
  hashEvent(index: number): boolean {
    const tLen = this.typeEnd - this.typeStart;
    const dv = this.dv;
    if (this.prevEnd - this.prevStart !== 64 || tLen > FIX_MAX_TYPE) return this.hashEventAnywhere(index);
    if (this.prevStart !== this.prevHex && !equalBytes(dv, this.prevStart, this.prevHex, 64)) return this.hashEventAnywhere(index);
    // The fixed buffer whose P slot holds the previous hash (= this prev).
    const b = this.mem;
    const fix = this.prevHex - FIX_P;
    const t = this.tplBase;
    let o = fix + FIX_HEAD - this.prepareIndex(index);
    this.putIndex(o);
    o -= EH_INDEX.length;
    copyBytes(b, dv, o, t + TPL_INDEX, EH_INDEX.length);
    o -= tLen;
    copyBytes(b, dv, o, this.typeStart, tLen);
    o -= EH_PREFIX.length;
    copyBytes(b, dv, o, t + TPL_PREFIX, EH_PREFIX.length);
    writeHex(dv, fix + FIX_H, this.payloadDigest);
    this.hashEventPreImage(o, fix + FIX_END - o, fix === this.fixA ? this.fixAViews : this.fixBViews);
    return true;
  }

  /** hashEvent() for any prev_hash (genesis "", a foreign one) and any type length: built in the general area. */
  private hashEventAnywhere(index: number): boolean {
    const b = this.mem;
    const dv = this.dv;
    const tLen = this.typeEnd - this.typeStart;
    const pLen = this.prevEnd - this.prevStart;
    let o = this.ehBase + EH_PREFIX.length;
    if (o + tLen + pLen + 128 > this.ehEnd) return false;
    copyBytes(b, dv, o, this.typeStart, tLen);
    o += tLen;
    const t = this.tplBase;
    copyBytes(b, dv, o, t + TPL_INDEX, EH_INDEX.length);
    o += EH_INDEX.length;
    this.prepareIndex(index);
    o = this.putIndex(o);
    copyBytes(b, dv, o, t + TPL_PAYLOAD, EH_PAYLOAD.length);
    o += EH_PAYLOAD.length;
    o = writeHex(dv, o, this.payloadDigest);
    copyBytes(b, dv, o, t + TPL_PREV, EH_PREV.length);
    o += EH_PREV.length;
    copyBytes(b, dv, o, this.prevStart, pLen);
    o += pLen;
    b[o++] = QUOTE;
    b[o++] = RBRACE;
    this.hashEventPreImage(this.ehBase, o - this.ehBase, this.ehViews);
    return true;
  }

  /** Hash the event pre-image mem[start, start+len); the digest's hex goes to curHex. */
  private hashEventPreImage(start: number, len: number, views: (Uint8Array | undefined)[]): void {
    Bun.SHA256.hash(this.view(start, len, views), this.eventDigest);
    writeHex(this.dv, this.curHex, this.eventDigest);
  }

  /** Make the just-computed event hash the previous one (swap the hex slots, no copy). */
  advance(): void {
    const t = this.prevHex;
    this.prevHex = this.curHex;
    this.curHex = t;
  }

  /** A view mem[start, start+len), cached by length (hashing needs exact views; allocating two per row shows). */
  private view(start: number, len: number, cache: (Uint8Array | undefined)[]): Uint8Array {
    if (len >= VIEW_CACHE) return this.mem.subarray(start, start + len);
    let v = cache[len];
    if (v === undefined) {
      v = this.mem.subarray(start, start + len);
      cache[len] = v;
    }
    return v;
  }

  /** Make `indexDigits` the decimal digits of `index` (usually last index + 1: increment in place); returns their count. */
  private prepareIndex(index: number): number {
    const d = this.indexDigits;
    if (index === this.lastIndex + 1 && this.lastIndex >= 0) {
      let i = this.indexLen - 1;
      while (i >= 0 && d[i] === 0x39) d[i--] = 0x30;
      if (i < 0) {
        d.copyWithin(1, 0, this.indexLen);
        d[0] = 0x31;
        this.indexLen++;
      } else {
        d[i]!++;
      }
    } else {
      this.indexLen = writeDecimal(d, 0, index);
    }
    this.lastIndex = index;
    return this.indexLen;
  }

  /** Write the prepared index digits at o; returns the end. */
  private putIndex(o: number): number {
    const d = this.indexDigits;
    const b = this.mem;
    for (let i = 0; i < this.indexLen; i++) b[o++] = d[i]!;
    return o;
  }
}

/** Each byte's two lowercase hex digits, as the little-endian 16-bit value that stores them in order. */
const HEX_PAIRS = new Uint16Array(256);
for (let x = 0; x < 256; x++) HEX_PAIRS[x] = HEX_CHARS[x >> 4]! | (HEX_CHARS[x & 15]! << 8);

/** Write the 64 lowercase hex digits of a 32-byte digest at o (two bytes' four digits per 32-bit store). */
export function writeHex(dv: DataView, o: number, d: Uint8Array): number {
  for (let i = 0; i < 32; i += 2) dv.setInt32(o + 2 * i, HEX_PAIRS[d[i]!]! | (HEX_PAIRS[d[i + 1]!]! << 16), true);
  return o + 64;
}

/** Equality of n >= 4 bytes at a and c, four at a time (the last word may overlap the one before). */
function equalBytes(dv: DataView, a: number, c: number, n: number): boolean {
  const last = n - 4;
  for (let i = 0; i < last; i += 4) if (dv.getInt32(a + i, true) !== dv.getInt32(c + i, true)) return false;
  return dv.getInt32(a + last, true) === dv.getInt32(c + last, true);
}

export function scanPlainKey(b: Uint8Array, dv: DataView, p: number): number {
  p = skipPlain(b, dv, p);
  return STR_CLASS[b[p]!] === 1 ? p : -1;
}

/**
 * A string in json.dumps(ensure_ascii=True) spelling, from its first
 * content byte: returns the index of the closing quote, or -1 (the codec's
 * string reader, declining a spelling Python's writer does not produce).
 */
export function scanCanonicalString(b: Uint8Array, dv: DataView, p: number): number {
  const end = jsonStringEnd(b, dv, p - 1, b.length);
  return end < 0 || (scannedString.flags & (Spell.Utf8 | Spell.NotPython)) !== 0 ? -1 : end - 1;
}

/**
 * Skip ASCII digits at p, four at a time while a whole word is digits
 * (a byte is a digit when its high nibble is 3 and adding 6 keeps it 3).
 * May look at the 3 bytes after the line's terminator, like skipPlain.
 */
function skipDigits(b: Uint8Array, dv: DataView, p: number): number {
  for (;;) {
    const x = dv.getInt32(p, true);
    if ((x & 0xf0f0f0f0) !== 0x30303030 || ((x + 0x06060606) & 0xf0f0f0f0) !== 0x30303030) break;
    p += 4;
  }
  let c = b[p]!;
  while (c >= 0x30 && c <= 0x39) c = b[++p]!;
  return p;
}


function matchWord(b: Uint8Array, p: number, word: string): number {
  for (let i = 0; i < word.length; i++) if (b[p + i] !== word.charCodeAt(i)) return -1;
  return p + word.length;
}

/**
 * Which envelope key (if any) the key bytes [ks, ke) spell. One table probe
 * by (length, low bits of the first byte), then one comparison: small code, which matters
 * as much as speed here (every worker thread JIT-compiles this afresh).
 */
export function envelopeKind(b: Uint8Array, ks: number, ke: number): Key {
  const n = ke - ks;
  if (n > 12) return Key.Payload;
  const slot = ENVELOPE_SLOT[(n << 4) | (b[ks]! & 15)]!;
  if (slot === 0) return Key.Payload;
  const key = ENVELOPE_BYTES[slot]!;
  if (key.length !== n) return Key.Payload;
  for (let i = 0; i < n; i++) if (b[ks + i] !== key[i]) return Key.Payload;
  return slot as Key;
}

/**
 * Copy within mem between non-overlapping spans of printable ASCII (the
 * only bytes the fast path ever copies). Eight bytes at a time through a
 * DataView for short spans, the last word overlapping the previous one
 * instead of a byte tail; memmove for long spans (its call overhead wins
 * from ~48 bytes). Going through float64 is exact here: a double's bits
 * survive a load and a store unless they are a NaN, and eight ASCII bytes
 * (all below 0x80) can never spell a NaN (that needs the top bits of the
 * two high bytes set).
 */
export function copyBytes(b: Uint8Array, dv: DataView, dst: number, src: number, n: number): void {
  if (n >= 8) {
    if (n >= 48) {
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

function writeDecimal(b: Uint8Array, o: number, n: number): number {
  if (n < 10) {
    b[o] = 0x30 + n;
    return o + 1;
  }
  let digits = 0;
  for (let x = n; x > 0; x = Math.floor(x / 10)) digits++;
  let x = n;
  for (let i = digits - 1; i >= 0; i--) {
    b[o + i] = 0x30 + (x % 10);
    x = Math.floor(x / 10);
  }
  return o + digits;
}
