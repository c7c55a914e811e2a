import { HEX_BYTES as HEX_CHARS } from "../../hex.ts";
import { copyBytes, QUOTE, RBRACE } from "../../codec/bytes.ts";

/**
 * The chain hashing of `journal record`'s byte path (record-bytes.ts): the
 * memory its rows are built in, and the payload and event hashes.
 *
 *   payload hash = sha256(the payload pre-image, written at `outBase` by
 *                  the caller from the codec's index of the input line)
 *   event hash   = sha256({"event_type":T,"index":I,"payload_hash":"H","prev_hash":"P"})
 *
 * Memory: one Uint8Array `mem` holds the read area (the input line lives
 * there, and the index's spans point into it), the payload pre-image, the
 * event pre-image and the row area, so every copy is within one buffer (no
 * view allocations).
 */

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

export class RecordHasher {
  /** Read area [0, readCap] (+1 sentinel), then the payload pre-image, event pre-image, templates, row area. */
  readonly mem: Uint8Array;
  readonly dv: DataView;
  readonly readCap: number;
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
  /** Length of the payload pre-image at `outBase` (the caller writes it there, up to `outEnd`). */
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

  /** `readCap`: the longest line; `rowCap`: bytes of the caller's row area. */
  constructor(readCap: number, readonly rowCap: number) {
    this.readCap = readCap;
    // the pre-image is compact, so never longer than the input line
    const out = readCap + SLACK;
    const eh = readCap + SLACK;
    this.outBase = readCap + 64;
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

  /** Write the index digits hashEvent prepared at o; returns the end. */
  putIndex(o: number): number {
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

/** The decimal digits of the integer 0 <= n < 2^53 at b[o]; returns the end. */
export function writeDecimal(b: Uint8Array, o: number, n: number): number {
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
