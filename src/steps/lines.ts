/**
 * Incremental line splitting over byte chunks, in the two dialects the
 * Python walkers use:
 *  - "universal": text-mode file iteration (`\n`, `\r\n` and a lone `\r`
 *    end a line) — the on-disk journal reader (§1.5);
 *  - "splitlines": `str.splitlines()` (also `\v`, `\f`, `\x1c`-`\x1e`,
 *    U+0085, U+2028, U+2029) — the receipt walker (§5b).
 * Lines are handed out as views that are valid only during the callback, so
 * memory stays bounded by the longest line (itself capped).
 */
export type LineDialect = "universal" | "splitlines";

/** `line` is null when the line exceeded the cap (its bytes were discarded). */
export type LineSink = (line: Uint8Array | null, lineNo: number) => void;

export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024;

const UNIVERSAL = new Uint8Array(256);
UNIVERSAL[0x0a] = 1;
UNIVERSAL[0x0d] = 1;
const SPLITLINES = new Uint8Array(256);
for (const b of [0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0xc2, 0xe2]) SPLITLINES[b] = 1;
/** Bytes that can start a break in the splitlines dialect, besides `\n`. */
const SPLITLINES_RARE = [0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0xc2, 0xe2];

export class LineSplitter {
  private readonly table: Uint8Array;
  private readonly rare: number[];
  private carry = new Uint8Array(0);
  private carryLen = 0;
  private discarding = false;
  private pendingCR = false;
  private held: Uint8Array | null = null;
  private lineNo = 0;
  private total = 0;
  private chunkBase = 0;
  /** Byte offset just past the terminator of the line being handed out. */
  nextLineStart = 0;

  constructor(
    private readonly dialect: LineDialect,
    private readonly sink: LineSink,
    private readonly maxLineBytes = DEFAULT_MAX_LINE_BYTES,
  ) {
    this.table = dialect === "universal" ? UNIVERSAL : SPLITLINES;
    this.rare = dialect === "universal" ? [0x0d] : SPLITLINES_RARE;
  }

  /** Number of lines emitted so far (blank ones included). */
  get lines(): number {
    return this.lineNo;
  }

  push(input: Uint8Array): void {
    let chunk = input;
    this.chunkBase = this.total - (this.held ? this.held.length : 0);
    this.total += input.length;
    if (this.held) {
      const joined = new Uint8Array(this.held.length + input.length);
      joined.set(this.held);
      joined.set(input, this.held.length);
      chunk = joined;
      this.held = null;
    }
    let start = 0;
    const n = chunk.length;
    if (this.pendingCR) {
      this.pendingCR = false;
      if (n > 0 && chunk[0] === 0x0a) start = 1;
    }
    // Fast path: only `\n` can end a line in this chunk (the common case for
    // canonical, ASCII-escaped journals): let the native indexOf find them.
    let simple = true;
    for (const b of this.rare) {
      if (chunk.indexOf(b, start) !== -1) {
        simple = false;
        break;
      }
    }
    if (simple) {
      for (;;) {
        const nl = chunk.indexOf(0x0a, start);
        if (nl === -1) break;
        this.emit(chunk, start, nl, 1);
        start = nl + 1;
      }
      if (start < n) this.append(chunk, start, n);
      return;
    }
    const table = this.table;
    const splitlines = this.dialect === "splitlines";
    let i = start;
    while (i < n) {
      const b = chunk[i]!;
      if (table[b] === 0) {
        i++;
        continue;
      }
      let len = 1;
      if (b === 0x0d) {
        if (i + 1 < n) {
          if (chunk[i + 1] === 0x0a) len = 2;
        } else {
          this.pendingCR = true;
        }
      } else if (splitlines && b === 0xc2) {
        if (i + 1 >= n) {
          this.hold(chunk, start, i);
          return;
        }
        if (chunk[i + 1] !== 0x85) {
          i++;
          continue;
        }
        len = 2;
      } else if (splitlines && b === 0xe2) {
        if (i + 2 >= n && (i + 1 >= n || chunk[i + 1] === 0x80)) {
          this.hold(chunk, start, i);
          return;
        }
        const b2 = chunk[i + 2];
        if (chunk[i + 1] !== 0x80 || (b2 !== 0xa8 && b2 !== 0xa9)) {
          i++;
          continue;
        }
        len = 3;
      }
      this.emit(chunk, start, i, len);
      i += len;
      start = i;
    }
    if (start < n) this.append(chunk, start, n);
  }

  /** Flush the last line (one without a terminator). */
  end(): void {
    if (this.held) {
      const h = this.held;
      this.held = null;
      this.append(h, 0, h.length);
    }
    if (this.carryLen > 0 || this.discarding) {
      this.chunkBase = this.total;
      this.emit(new Uint8Array(0), 0, 0, 0);
    }
    this.pendingCR = false;
  }

  private hold(chunk: Uint8Array, start: number, at: number): void {
    if (at > start) this.append(chunk, start, at);
    this.held = chunk.slice(at);
  }

  private append(chunk: Uint8Array, from: number, to: number): void {
    if (this.discarding) return;
    const len = to - from;
    if (this.carryLen + len > this.maxLineBytes) {
      this.discarding = true;
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

  private emit(chunk: Uint8Array, from: number, to: number, termLen: number): void {
    this.lineNo++;
    this.nextLineStart = this.chunkBase + to + termLen;
    if (this.discarding) {
      this.discarding = false;
      this.sink(null, this.lineNo);
      return;
    }
    if (this.carryLen === 0) {
      if (to - from > this.maxLineBytes) {
        this.sink(null, this.lineNo);
        return;
      }
      this.sink(chunk.subarray(from, to), this.lineNo);
      return;
    }
    this.append(chunk, from, to);
    if (this.discarding) {
      this.discarding = false;
      this.sink(null, this.lineNo);
      return;
    }
    const line = this.carry.subarray(0, this.carryLen);
    this.carryLen = 0;
    this.sink(line, this.lineNo);
    // A very long line's buffer is not kept around for the next ones.
    if (this.carry.length > 1 << 20) this.carry = new Uint8Array(0);
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
