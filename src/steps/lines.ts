import { InputError } from "../errors.ts";
import { MAX_ROW_BYTES } from "../fsutil/input.ts";

/**
 * Incremental line splitting over byte chunks, in the two dialects the
 * Python walkers use:
 *  - "universal": text-mode file iteration (`\n`, `\r\n` and a lone `\r`
 *    end a line) — the on-disk journal reader (§1.5);
 *  - "splitlines": `str.splitlines()` (also `\v`, `\f`, `\x1c`-`\x1e`,
 *    U+0085, U+2028, U+2029) — the receipt walker (§5b).
 *
 * The input is cut at `\n` first (a native scan). Every other break is
 * either an ASCII control byte or a UTF-8 sequence that never contains
 * `\n`, so each `\n`-terminated segment can be split on its own. A `fast`
 * probe may claim a whole segment as one line (the verify hot path: a
 * canonical JSON row contains no control bytes and no non-ASCII bytes, so
 * it cannot hold another break); other segments are split byte by byte.
 * A `bulk` probe goes further: at a line start it may take a run of whole
 * lines at once (the verify kernel), and the split resumes after them.
 * Lines are handed out as views valid only during the callback, so memory
 * stays bounded by the longest line (itself capped).
 */
export type LineDialect = "universal" | "splitlines";

/** `line` is null when the line exceeded the cap (its bytes were discarded). */
export type LineSink = (line: Uint8Array | null, lineNo: number) => void;

/**
 * Claims the segment `buf[start, end)` as exactly one line (returns true)
 * after handling it, or declines. The range form spares a view per line;
 * `buf` is valid only during the call.
 */
export type FastProbe = (buf: Uint8Array, start: number, end: number, lineNo: number) => boolean;

/**
 * Takes whole lines (each `\n`-terminated, none longer than `maxLineBytes`,
 * none holding another break of the dialect) from the line start `start`
 * of `buf[start, end)`, handling them itself. Returns the offset just past
 * the last line taken (`start` when none was); `taken` is how many.
 */
export interface BulkProbe {
  take(buf: Uint8Array, start: number, end: number, maxLineBytes: number): number;
  readonly taken: number;
}

/** The row limit of every reader (src/fsutil/input.ts MAX_ROW_BYTES). */
export const DEFAULT_MAX_LINE_BYTES = MAX_ROW_BYTES;

/** A line over the row limit: the whole input is refused (`row_too_large`, exit 3), whoever reads it. */
export class OverlongLineError extends InputError {
  constructor(readonly lineNo: number, readonly limit: number) {
    super("row_too_large", `journal line ${lineNo} is longer than ${limit} bytes (the row limit); refusing to read it`, { line: lineNo, limit_bytes: limit });
  }
}

/** A LineSplitter sink that refuses an overlong line (null) instead of passing it on. */
export function refusingOverlong(sink: (line: Uint8Array, lineNo: number) => void, limit: number): (line: Uint8Array | null, lineNo: number) => void {
  return (line, lineNo) => {
    if (line === null) throw new OverlongLineError(lineNo, limit);
    sink(line, lineNo);
  };
}


const UNIVERSAL = new Uint8Array(256);
UNIVERSAL[0x0d] = 1;
const SPLITLINES = new Uint8Array(256);
for (const b of [0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0xc2, 0xe2]) SPLITLINES[b] = 1;

export class LineSplitter {
  private readonly table: Uint8Array;
  private carry = new Uint8Array(0);
  private carryLen = 0;
  /** The current segment grew past the cap: its bytes are being dropped. */
  private overlong = false;
  private lineNo = 0;
  private total = 0;
  /** Byte offset just past the terminator of the line being handed out. */
  nextLineStart = 0;

  constructor(
    private readonly dialect: LineDialect,
    private readonly sink: LineSink,
    private readonly maxLineBytes = DEFAULT_MAX_LINE_BYTES,
    private readonly fast: FastProbe | null = null,
    private readonly bulk: BulkProbe | null = null,
  ) {
    this.table = dialect === "universal" ? UNIVERSAL : SPLITLINES;
  }

  /** Number of lines emitted so far (blank ones included). */
  get lines(): number {
    return this.lineNo;
  }

  push(input: Uint8Array): void {
    // Node Buffers are a Uint8Array subclass; viewing every chunk as a plain
    // Uint8Array keeps byte access monomorphic in the hot loops downstream.
    const chunk = input.constructor === Uint8Array ? input : new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
    const base = this.total;
    this.total += chunk.length;
    let start = 0;
    for (;;) {
      if (this.bulk !== null && this.carryLen === 0 && !this.overlong && start < chunk.length) start = this.takeBulk(chunk, start, base);
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) break;
      const segEnd = base + nl + 1;
      if (this.carryLen === 0 && !this.overlong) {
        this.segment(chunk, start, nl, true, segEnd);
      } else {
        this.append(chunk, start, nl);
        this.flushCarry(true, segEnd);
      }
      start = nl + 1;
    }
    if (start < chunk.length) this.append(chunk, start, chunk.length);
  }

  /** Let the bulk probe take lines from the line start `start` of the chunk; where the split resumes. */
  private takeBulk(chunk: Uint8Array, start: number, base: number): number {
    const to = this.bulk!.take(chunk, start, chunk.length, this.maxLineBytes);
    if (to === start) return start;
    this.lineNo += this.bulk!.taken;
    this.nextLineStart = base + to;
    return to;
  }

  /** Flush the last line (one without a terminator). */
  end(): void {
    if (this.carryLen > 0 || this.overlong) this.flushCarry(false, this.total);
  }

  private flushCarry(terminated: boolean, segEnd: number): void {
    if (this.overlong) {
      this.overlong = false;
      this.carryLen = 0;
      this.lineNo++;
      this.nextLineStart = segEnd;
      this.sink(null, this.lineNo);
      return;
    }
    const n = this.carryLen;
    this.carryLen = 0;
    this.segment(this.carry, 0, n, terminated, segEnd);
    // A very long line's buffer is not kept around for the next ones.
    if (this.carry.length > 1 << 20) this.carry = new Uint8Array(0);
  }

  private append(chunk: Uint8Array, from: number, to: number): void {
    if (this.overlong) return;
    const len = to - from;
    if (this.carryLen + len > this.maxLineBytes) {
      // Keep nothing; the segment may still hold several short lines, but
      // anything this long is refused as one overlong line.
      this.overlong = true;
      this.carryLen = 0;
      this.carry = new Uint8Array(0);
      return;
    }
    if (this.carryLen + len > this.carry.length) {
      const grown = new Uint8Array(Math.max(this.carryLen + len, this.carry.length * 2, 4096));
      grown.set(this.carry.subarray(0, this.carryLen));
      this.carry = grown;
    }
    this.carry.set(chunk.subarray(from, to), this.carryLen);
    this.carryLen += len;
  }

  private emit(line: Uint8Array, end: number): void {
    this.lineNo++;
    this.nextLineStart = end;
    this.sink(line.length > this.maxLineBytes ? null : line, this.lineNo);
  }

  /**
   * One `\n`-delimited segment `buf[from, to)` (`terminated`: a `\n`
   * followed it; `segEnd`: absolute offset past that `\n`).
   */
  private segment(buf: Uint8Array, from: number, to: number, terminated: boolean, segEnd: number): void {
    if (this.fast !== null && to > from && to - from <= this.maxLineBytes) {
      this.nextLineStart = segEnd;
      if (this.fast(buf, from, to, this.lineNo + 1)) {
        this.lineNo++;
        return;
      }
    }
    const seg = buf.subarray(from, to);
    const table = this.table;
    const splitlines = this.dialect === "splitlines";
    const n = seg.length;
    const segStart = segEnd - n - (terminated ? 1 : 0);
    let start = 0;
    let i = 0;
    while (i < n) {
      const b = seg[i]!;
      if (table[b] === 0) {
        i++;
        continue;
      }
      let len = 1;
      if (b === 0x0d) {
        if (i + 1 === n && terminated) {
          // `\r` + the `\n` that ends the segment: one break.
          this.emit(seg.subarray(start, i), segEnd);
          return;
        }
      } else if (splitlines && b === 0xc2) {
        if (seg[i + 1] !== 0x85) {
          i++;
          continue;
        }
        len = 2;
      } else if (splitlines && b === 0xe2) {
        const b2 = seg[i + 2];
        if (seg[i + 1] !== 0x80 || (b2 !== 0xa8 && b2 !== 0xa9)) {
          i++;
          continue;
        }
        len = 3;
      }
      this.emit(seg.subarray(start, i), segStart + i + len);
      i += len;
      start = i;
    }
    if (terminated || start < n) this.emit(seg.subarray(start, n), segEnd);
  }
}

/** Python `str.isspace()` characters that `str.strip()` removes. */
export function isPyWhitespace(c: number): boolean {
  return (
    (c >= 0x09 && c <= 0x0d) ||
    (c >= 0x1c && c <= 0x20) ||
    c === 0x85 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  );
}

/** Python `str.strip()` with no arguments. */
export function pyStrip(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && isPyWhitespace(s.charCodeAt(a))) a++;
  while (b > a && isPyWhitespace(s.charCodeAt(b - 1))) b--;
  return a === 0 && b === s.length ? s : s.slice(a, b);
}
