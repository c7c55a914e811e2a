import { LOWER_HEX_VALUE } from "../hex.ts";
import { isCanonicalFloat } from "../pyjson/encode-bytes.ts";
import { INT_MAX_STR_DIGITS } from "../pyjson/parse.ts";

/**
 * The verify hot path. A row written by a canonical writer (Python's
 * `json.dumps(sort_keys=True, separators=(",", ":"))`, or ours) already
 * spells every value exactly as the step-hash pre-image needs it, so the
 * pre-image can be assembled from byte spans of the line without building
 * values. `scanCanonicalRow` proves that claim for one line: strict JSON,
 * ASCII only, compact, keys strictly ascending (hence no duplicates), every
 * string escaped the way Python escapes it, and every number in a hashed
 * field spelled as Python re-spells it. Any line it cannot prove goes to the
 * general path (parse + re-encode), so the two paths can never disagree.
 */

/** Top-level keys the walkers read. */
export const enum Key {
  Other = 0,
  Seq,
  PrevHash,
  StepHash,
  InputHash,
  Model,
  Prompt,
  ToolCall,
  ToolResult,
  Effort,
  Ts,
  BlobRefs,
  SchemaVersion,
}
const KEY_COUNT = 13;

const KEY_BYTES: [Key, Uint8Array][] = (
  [
    [Key.Seq, "seq"],
    [Key.PrevHash, "prev_hash"],
    [Key.StepHash, "step_hash"],
    [Key.InputHash, "input_hash"],
    [Key.Model, "model"],
    [Key.Prompt, "prompt"],
    [Key.ToolCall, "tool_call"],
    [Key.ToolResult, "tool_result"],
    [Key.Effort, "effort"],
    [Key.Ts, "ts"],
    [Key.BlobRefs, "blob_refs"],
    [Key.SchemaVersion, "schema_version"],
  ] as const
).map(([k, s]) => [k, new TextEncoder().encode(s)]);

const MAX_DEPTH = 1000;

/** Byte classes inside a string: 0 plain printable ASCII, 1 quote, 2 backslash, 3 not allowed raw. */
const STR = new Uint8Array(256).fill(3);
for (let c = 0x20; c <= 0x7e; c++) STR[c] = 0;
STR[0x22] = 1;
STR[0x5c] = 2;

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

function keyLess(b: Uint8Array, aS: number, aE: number, bS: number, bE: number): boolean {
  const n = Math.min(aE - aS, bE - bS);
  for (let i = 0; i < n; i++) {
    const x = b[aS + i]!;
    const y = b[bS + i]!;
    if (x !== y) return x < y;
  }
  return aE - aS < bE - bS;
}

/** Keys by length (parallel arrays), so a top-level key is compared with at most four candidates. */
const KEYS_BY_LENGTH: Key[][] = [];
const KEY_TEXT_BY_LENGTH: Uint8Array[][] = [];
for (const [k, bytes] of KEY_BYTES) {
  (KEYS_BY_LENGTH[bytes.length] ??= []).push(k);
  (KEY_TEXT_BY_LENGTH[bytes.length] ??= []).push(bytes);
}

function identify(b: Uint8Array, s: number, e: number): Key {
  const n = e - s;
  const keys = KEYS_BY_LENGTH[n];
  if (keys === undefined) return Key.Other;
  const texts = KEY_TEXT_BY_LENGTH[n]!;
  for (let c = 0; c < keys.length; c++) {
    const bytes = texts[c]!;
    let i = 0;
    while (i < n && bytes[i] === b[s + i]) i++;
    if (i === n) return keys[c]!;
  }
  return Key.Other;
}

const HASHED = new Uint8Array(KEY_COUNT);
for (const k of [Key.InputHash, Key.Model, Key.Prompt, Key.ToolCall, Key.ToolResult, Key.Effort, Key.PrevHash]) HASHED[k] = 1;

const SHAPE_CAP = 64;

/**
 * One scanner's state: the spans of the last row it accepted and the key
 * shape it keeps. Each walker (and each reader of rows) owns one, so no
 * scan's result is shared through module state.
 */
export class CanonicalRow {
  /** Value spans [start, end) per key of the last successful scan; -1 = absent. */
  readonly spanStart = new Int32Array(KEY_COUNT);
  readonly spanEnd = new Int32Array(KEY_COUNT);
  /** 1 when the key's value is a string without escapes (its text is the bytes inside the quotes). */
  readonly plainString = new Uint8Array(KEY_COUNT);
  /** Offset of each key's opening quote (to find runs of adjacent keys). */
  readonly keyStart = new Int32Array(KEY_COUNT);
  /** Number of top-level keys of the last successful scan. */
  topKeyCount = 0;
  /**
   * The last view accepted by `scanRow`. Views handed out by the line
   * splitter are fresh objects whose bytes do not change while they are
   * being looked at, so a repeated scan of the same view can be skipped.
   */
  private lastAccepted: Uint8Array | null = null;
  private len = 0;
  /** Set by scanString: the last string contained a backslash escape. */
  private hadEscape = false;

  /**
   * The top-level keys of the last row scanned, as the bytes `"key":` in
   * order, with what each is: a journal's rows nearly all have the same keys,
   * so a row whose keys are byte for byte those skips scanning, ordering and
   * identifying them. Only keys that passed those checks (in that row or an
   * earlier one) are kept, each pair in strictly ascending order, so a key
   * equal to the kept one at its position, after kept keys only, would pass
   * them again.
   */
  private shapeBytes = new Uint8Array(1024);
  private readonly shapeAt = new Int32Array(SHAPE_CAP + 1);
  private readonly shapeKey = new Uint8Array(SHAPE_CAP);
  private shapeCount = 0;
  /** This row's top-level key spans, to keep its shape. */
  private readonly rowKeyS = new Int32Array(SHAPE_CAP);
  private readonly rowKeyE = new Int32Array(SHAPE_CAP);
  private readonly rowKey = new Uint8Array(SHAPE_CAP);

  /** A canonical string starting at `p` (the quote); returns the end or -1. */
  private scanString(b: Uint8Array, p: number): number {
    p++;
    this.hadEscape = false;
    const n = this.len;
    for (;;) {
      let k = 0;
      while (p < n && (k = STR[b[p]!]!) === 0) p++;
      if (p >= n) return -1;
      if (k === 1) return p + 1;
      if (k === 3) return -1;
      this.hadEscape = true;
      const e = b[p + 1];
      if (e === 0x22 || e === 0x5c || e === 0x6e || e === 0x72 || e === 0x74 || e === 0x62 || e === 0x66) {
        p += 2;
        continue;
      }
      if (e !== 0x75 || p + 6 > n) return -1;
      let v = 0;
      for (let i = 2; i < 6; i++) {
        const h = LOWER_HEX_VALUE[b[p + i]!]!;
        if (h < 0) return -1;
        v = v * 16 + h;
      }
      // Python writes \uXXXX only for controls without a short form and
      // for everything above '~'.
      if (v >= 0x20 && v <= 0x7e) return -1;
      if (v === 0x0a || v === 0x0d || v === 0x09 || v === 0x08 || v === 0x0c) return -1;
      p += 6;
    }
  }

  /**
   * A key: a string of plain printable ASCII only (escaped keys sort
   * differently in escaped form: they are left to the general path).
   */
  private scanKey(b: Uint8Array, p: number): number {
    p++;
    const n = this.len;
    while (p < n && STR[b[p]!] === 0) p++;
    return p < n && b[p] === 0x22 ? p + 1 : -1;
  }

  private scanNumber(b: Uint8Array, p: number, strict: boolean): number {
    const start = p;
    const n = this.len;
    if (b[p] === 0x2d) p++;
    const c0 = b[p];
    if (c0 === 0x30) p++;
    else if (c0 !== undefined && c0 >= 0x31 && c0 <= 0x39) {
      p++;
      while (p < n && isDigit(b[p]!)) p++;
    } else return -1;
    let isFloat = false;
    if (b[p] === 0x2e) {
      if (!isDigit(b[p + 1] ?? 0)) return -1;
      p += 2;
      while (p < n && isDigit(b[p]!)) p++;
      isFloat = true;
    }
    const ec = b[p];
    if (ec === 0x65 || ec === 0x45) {
      let q = p + 1;
      if (b[q] === 0x2b || b[q] === 0x2d) q++;
      if (!isDigit(b[q] ?? 0)) return -1;
      while (q < n && isDigit(b[q]!)) q++;
      p = q;
      isFloat = true;
    }
    // Python's json.loads refuses an int of more than 4300 digits (ValueError):
    // such a row is not a row, in any field (found by the receipt fuzzer: the
    // fast path accepted one that the exporter then dropped).
    if (!isFloat && p - start - (b[start] === 0x2d ? 1 : 0) > INT_MAX_STR_DIGITS) return -1;
    if (strict) {
      if (!isFloat) {
        if (p - start === 2 && b[start] === 0x2d && b[start + 1] === 0x30) return -1; // "-0"
      } else {
        if (!isCanonicalFloat(b, start, p)) return -1;
      }
    }
    return p;
  }

  private matchWord(b: Uint8Array, p: number, word: string): boolean {
    if (p + word.length > this.len) return false;
    for (let i = 0; i < word.length; i++) if (b[p + i] !== word.charCodeAt(i)) return false;
    return true;
  }

  private scanValue(b: Uint8Array, p: number, strict: boolean, depth: number): number {
    const c = b[p];
    switch (c) {
      case 0x22:
        return this.scanString(b, p);
      case 0x7b:
        return depth >= MAX_DEPTH ? -1 : this.scanObject(b, p, strict, depth + 1);
      case 0x5b: {
        if (depth >= MAX_DEPTH) return -1;
        p++;
        if (b[p] === 0x5d) return p + 1;
        for (;;) {
          p = this.scanValue(b, p, strict, depth + 1);
          if (p < 0) return -1;
          const d = b[p];
          if (d === 0x5d) return p + 1;
          if (d !== 0x2c) return -1;
          p++;
        }
      }
      case 0x6e:
        return this.matchWord(b, p, "null") ? p + 4 : -1;
      case 0x74:
        return this.matchWord(b, p, "true") ? p + 4 : -1;
      case 0x66:
        return this.matchWord(b, p, "false") ? p + 5 : -1;
      case 0x4e:
        return this.matchWord(b, p, "NaN") ? p + 3 : -1;
      case 0x49:
        return this.matchWord(b, p, "Infinity") ? p + 8 : -1;
      case 0x2d:
        if (this.matchWord(b, p, "-Infinity")) return p + 9;
        return this.scanNumber(b, p, strict);
      default:
        return this.scanNumber(b, p, strict);
    }
  }

  /** A nested object: canonical keys in strictly ascending order, each value canonical. */
  private scanObject(b: Uint8Array, p: number, strict: boolean, depth: number): number {
    p++;
    if (b[p] === 0x7d) return p + 1;
    let prevS = -1;
    let prevE = -1;
    for (;;) {
      if (b[p] !== 0x22) return -1;
      const kS = p + 1;
      const kEnd = this.scanKey(b, p);
      if (kEnd < 0) return -1;
      const kE = kEnd - 1;
      if (prevS >= 0 && !keyLess(b, prevS, prevE, kS, kE)) return -1;
      prevS = kS;
      prevE = kE;
      if (b[kEnd] !== 0x3a) return -1;
      const vE = this.scanValue(b, kEnd + 1, strict, depth);
      if (vE < 0) return -1;
      const d = b[vE];
      if (d === 0x7d) return vE + 1;
      if (d !== 0x2c) return -1;
      p = vE + 1;
    }
  }

  /** Drop the kept shape: the next row is scanned key by key. */
  forgetShape(): void {
    this.shapeCount = 0;
  }

  /** b[p, p + (a1 - a0)) equals this.shapeBytes[a0, a1) (within the row). */
  private sameAsShape(b: Uint8Array, p: number, a0: number, a1: number): boolean {
    const n = a1 - a0;
    if (p + n > this.len) return false;
    for (let j = 0; j < n; j++) if (b[p + j] !== this.shapeBytes[a0 + j]) return false;
    return true;
  }

  private keepShape(b: Uint8Array, n: number): void {
    if (n > SHAPE_CAP) {
      this.shapeCount = 0;
      return;
    }
    let size = 0;
    for (let i = 0; i < n; i++) size += this.rowKeyE[i]! - this.rowKeyS[i]! + 3;
    if (size > this.shapeBytes.length) this.shapeBytes = new Uint8Array(size * 2);
    let o = 0;
    for (let i = 0; i < n; i++) {
      this.shapeAt[i] = o;
      this.shapeBytes[o++] = 0x22;
      for (let j = this.rowKeyS[i]!; j < this.rowKeyE[i]!; j++) this.shapeBytes[o++] = b[j]!;
      this.shapeBytes[o++] = 0x22;
      this.shapeBytes[o++] = 0x3a;
      this.shapeKey[i] = this.rowKey[i]!;
    }
    this.shapeAt[n] = o;
    this.shapeCount = n;
  }

  /** this.scanObject() of a row's top level, which also records the spans of the keys the walkers need. */
  private scanTopObject(b: Uint8Array, p: number): number {
    p++;
    if (b[p] === 0x7d) return p + 1;
    let prevS = -1;
    let prevE = -1;
    let i = 0;
    let same = true; // every key so far is the kept shape's key at its position
    for (;;) {
      if (b[p] !== 0x22) return -1;
      const kS = p + 1;
      let kE: number;
      let key: Key;
      if (same && i < this.shapeCount && this.sameAsShape(b, p, this.shapeAt[i]!, this.shapeAt[i + 1]!)) {
        kE = p + (this.shapeAt[i + 1]! - this.shapeAt[i]!) - 2;
        key = this.shapeKey[i]! as Key;
      } else {
        same = false;
        const kEnd = this.scanKey(b, p);
        if (kEnd < 0) return -1;
        kE = kEnd - 1;
        if (prevS >= 0 && !keyLess(b, prevS, prevE, kS, kE)) return -1;
        if (b[kEnd] !== 0x3a) return -1;
        key = identify(b, kS, kE);
      }
      prevS = kS;
      prevE = kE;
      if (i < SHAPE_CAP) {
        this.rowKeyS[i] = kS;
        this.rowKeyE[i] = kE;
        this.rowKey[i] = key;
      }
      i++;
      const vS = kE + 2;
      const vE = this.scanValue(b, vS, HASHED[key] === 1, 1);
      if (vE < 0) return -1;
      this.topKeyCount++;
      if (key !== Key.Other) {
        this.keyStart[key] = kS - 1;
        this.spanStart[key] = vS;
        this.spanEnd[key] = vE;
        this.plainString[key] = b[vS] === 0x22 && !this.hadEscape ? 1 : 0;
      }
      const d = b[vE];
      if (d === 0x7d) {
        if (!same || i !== this.shapeCount) this.keepShape(b, i);
        return vE + 1;
      }
      if (d !== 0x2c) return -1;
      p = vE + 1;
    }
  }

  /**
   * Scan one line. True when it is a canonical JSON object; the spans of the
   * keys the walkers need are then in `spanStart`/`spanEnd`.
   */
  scanRow(line: Uint8Array): boolean {
    // The same view scanned again right away (a probe, then its consumers): the spans are still valid.
    if (line === this.lastAccepted) return true;
    if (!this.scanRange(line, 0, line.length)) return false;
    this.lastAccepted = line;
    return true;
  }

  /**
   * `scanRow` of the bytes [start, end) of `buf`, without a view per
   * line; the spans are offsets into `buf`. Bytes past `end` may be read but
   * never make a row canonical: a scan that reaches `end` before the closing
   * brace at end - 1 has already failed.
   */
  scanRange(buf: Uint8Array, start: number, end: number): boolean {
    this.lastAccepted = null;
    if (end - start < 2 || buf[start] !== 0x7b || buf[end - 1] !== 0x7d) return false;
    this.len = end;
    for (let k = 0; k < KEY_COUNT; k++) {
      this.spanStart[k] = -1;
      this.spanEnd[k] = -1;
      this.plainString[k] = 0;
    }
    this.topKeyCount = 0;
    return this.scanTopObject(buf, start) === end;
  }
}
