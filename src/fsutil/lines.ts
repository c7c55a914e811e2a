import { InputError } from "../errors/index.ts";
import { MAX_ROW_BYTES, openInput, readBufferSize, rowTooLarge } from "./input.ts";

/**
 * The one line reader: incremental splitting of byte chunks into lines, in
 * the three dialects the readers need:
 *  - "lf": `\n` only (JSON Lines logs, `journal record`'s standard input);
 *  - "universal": Python text-mode iteration (`\n`, `\r\n` and a lone `\r`
 *    end a line) — the on-disk run and step journals (§1.5);
 *  - "splitlines": `str.splitlines()` (also `\v`, `\f`, `\x1c`-`\x1e`,
 *    U+0085, U+2028, U+2029) — the receipt walker (§5b).
 * Splitting bytes equals splitting the decoded text: no break byte occurs
 * inside a UTF-8 multi-byte sequence, and invalid bytes are never breaks.
 *
 * The input is cut at `\n` first (a native scan); each `\n`-terminated
 * segment is then split on its own. A `fast` probe may claim a whole
 * segment as one line (the verify hot path: a canonical JSON row holds no
 * control or non-ASCII byte, so no other break); a `bulk` probe may take a
 * run of whole lines at a line start (the verify kernel). Lines are handed
 * out as views valid only during the callback; a line longer than the cap
 * is dropped as it streams and handed out as null, so memory stays bounded
 * by the cap plus one chunk whatever the input holds.
 */
export type LineDialect = "lf" | "universal" | "splitlines";

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

/**
 * Where the content of the `\n`-terminated segment buf[start, end) ends:
 * `end`, or `end - 1` when a CR stands right before the line feed (CR LF is
 * one break to both splitting dialects; Python's text mode on Windows
 * writes it). A fast probe is handed the segment with that CR; any other CR
 * in it is a break of its own, which the probe must still decline.
 */
export function contentEnd(buf: Uint8Array, start: number, end: number): number {
  return end > start && buf[end - 1] === 0x0d ? end - 1 : end;
}

/**
 * A line longer than this is never assembled: the input is refused as
 * `row_too_large` (exit 3, with the 1-based line number). The same limit
 * for every reader (src/fsutil/input.ts MAX_ROW_BYTES).
 */
export const DEFAULT_MAX_LINE_BYTES = MAX_ROW_BYTES;
export const MAX_LINE_BYTES = MAX_ROW_BYTES;
export const DEFAULT_CHUNK_SIZE = 1 << 20;
/**
 * While a line's carry passes every multiple of this size, a full
 * collection: the input chunks it was copied from are garbage (a few
 * collections per huge line, instead of a line's worth of dead chunks).
 */
const GROWTH_GC_MIN = 32 << 20;
/** A carry growing to this size is allocated at the line cap at once (see grow). */
const RESERVE_MIN = 8 << 20;
/** Room past the cap: a dialect with breaks other than `\n` holds up to a chunk more before it cuts. */
const RESERVE_SLACK = 4 << 20;
/** The largest typed array the engine makes. */
const MAX_RESERVE = 4 * 1024 ** 3 - 1;

/** The line feeds in b[0, n) (a count of lines read whole, by the native search). */
export function lineFeedsIn(b: Uint8Array, n: number): number {
  let count = 0;
  for (let p = b.indexOf(0x0a); p >= 0 && p < n; p = b.indexOf(0x0a, p + 1)) count++;
  return count;
}

/**
 * A buffer for a line being assembled: `buf` (its first `len` bytes
 * kept) grown to hold `need` bytes. Doubled while small; once the line
 * reaches RESERVE_MIN, allocated at `cap` at once (the engine commits a
 * buffer's pages as they are written, so it costs what the line holds;
 * growing by copying would hold the old and the new buffer at once, and
 * the allocator keeps freed pages a while: about twice a huge line).
 * Before that reservation a full collection: a previous huge line is
 * garbage by then and its pages go back first, not after this one's.
 */
export function grownLineBuffer(buf: Uint8Array, len: number, need: number, cap: number): Uint8Array<ArrayBuffer> {
  const want = Math.max(need, buf.length * 2, 4096);
  let grown: Uint8Array<ArrayBuffer> | null = null;
  if (want >= RESERVE_MIN) {
    const reserve = Math.max(need, Math.min(MAX_RESERVE, cap));
    if (reserve > want) {
      Bun.gc(true);
      try {
        grown = new Uint8Array(reserve);
      } catch {
        grown = null; // no address space for it: grow as needed
      }
    }
  }
  grown ??= new Uint8Array(want);
  grown.set(buf.subarray(0, len));
  return grown;
}

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

const BREAKS: Record<LineDialect, Uint8Array> = { lf: new Uint8Array(256), universal: new Uint8Array(256), splitlines: new Uint8Array(256) };
BREAKS.universal[0x0d] = 1;
for (const b of [0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0xc2, 0xe2]) BREAKS.splitlines[b] = 1;

/** Bytes of a break starting at `seg[i]` (0: none), -1 when the bytes up to `n` cannot tell yet. */
function breakAt(seg: Uint8Array, i: number, n: number): number {
  const b = seg[i]!;
  if (b === 0xc2) {
    if (i + 1 === n) return -1;
    return seg[i + 1] === 0x85 ? 2 : 0;
  }
  if (b === 0xe2) {
    if (i + 1 < n && seg[i + 1] !== 0x80) return 0;
    if (i + 2 >= n) return -1;
    const b2 = seg[i + 2];
    return b2 === 0xa8 || b2 === 0xa9 ? 3 : 0;
  }
  // `\r` last: a `\n` may follow and join it (`\r\n`, one break).
  if (b === 0x0d && i + 1 === n) return -1;
  return 1;
}

/** The bytes of every blank line the splitter hands out (never written: a sink reads it, and may keep it). */
const BLANK_LINE = new Uint8Array(0);

export class LineSplitter {
  private readonly table: Uint8Array;
  private readonly hasBreaks: boolean;
  private carry = new Uint8Array(0);
  private carryLen = 0;
  /** Absolute offset of `carry[0]`. */
  private carryStart = 0;
  /** Where the break scan of the carry resumes (bytes before it hold no break). */
  private carryScanned = 0;
  /** The current line grew past the cap: its bytes are being dropped (but for the last two, which may start a break). */
  private dropping = false;
  private lineNo = 0;
  private total: number;
  /** Byte offset just past the terminator of the line being handed out. */
  nextLineStart: number;

  /** `offset`: the absolute byte offset of the first byte pushed (offsets are reported from it). */
  constructor(
    private readonly dialect: LineDialect,
    private readonly sink: LineSink,
    private readonly maxLineBytes = DEFAULT_MAX_LINE_BYTES,
    private readonly fast: FastProbe | null = null,
    private readonly bulk: BulkProbe | null = null,
    offset = 0,
  ) {
    this.table = BREAKS[dialect];
    this.hasBreaks = dialect !== "lf";
    this.total = offset;
    this.nextLineStart = offset;
  }

  /** Number of lines emitted so far (blank ones included). */
  get lines(): number {
    return this.lineNo;
  }

  /** True while the line being read is already longer than the cap (it will be handed out as null). */
  get overlong(): boolean {
    return this.dropping;
  }

  /** `line` as handed to the sink, made safe to keep after the callback when it lives in the splitter's own buffer. */
  detach(line: Uint8Array): Uint8Array {
    return this.lets(line) ? line : line.slice();
  }

  /**
   * Whether `line`, as handed to the sink, may be kept after the callback
   * as it is (detach returns it uncopied): it is not in the splitter's own
   * buffer, or that buffer is a very long line's, dropped once handed out
   * (flushCarry) and never written again, so a huge row is not held twice.
   */
  lets(line: Uint8Array): boolean {
    return line.buffer !== this.carry.buffer || this.releasing;
  }

  /** The carry being handed out is dropped after (flushCarry): detach need not copy from it. */
  private releasing = false;
  /** Carry length at which the next full collection runs. */
  private nextGc = GROWTH_GC_MIN;

  push(input: Uint8Array): void {
    // Node Buffers are a Uint8Array subclass; viewing every chunk as a plain
    // Uint8Array keeps byte access monomorphic in the hot loops downstream.
    const chunk = input.constructor === Uint8Array ? input : new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
    const base = this.total;
    this.total += chunk.length;
    let start = 0;
    for (;;) {
      if (this.bulk !== null && this.carryLen === 0 && !this.dropping && start < chunk.length) start = this.takeBulk(chunk, start, base);
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) break;
      const segEnd = base + nl + 1;
      if (this.carryLen === 0 && !this.dropping) {
        this.segment(chunk, start, nl, true, segEnd);
      } else {
        this.append(chunk, start, nl, base);
        this.flushCarry(true, segEnd);
      }
      start = nl + 1;
    }
    if (start < chunk.length) this.append(chunk, start, chunk.length, base);
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
    if (this.carryLen > 0 || this.dropping) this.flushCarry(false, this.total);
  }

  private flushCarry(terminated: boolean, segEnd: number): void {
    if (this.dropping) {
      // What is left of the overlong line ends here (the last bytes kept could not start a break).
      this.carryLen = 0;
      this.carryScanned = 0;
      this.emit(this.carry, segEnd);
      return;
    }
    const n = this.carryLen;
    this.carryLen = 0;
    this.carryScanned = 0;
    this.nextGc = GROWTH_GC_MIN;
    // A buffer reserved at the line cap (a huge line's) is not kept around for the next lines; a smaller one is
    // reused, so a journal of megabyte rows does not make a carry's worth of garbage per row.
    this.releasing = this.carry.length >= RESERVE_MIN;
    try {
      this.segment(this.carry, 0, n, terminated, segEnd);
    } finally {
      if (this.releasing) this.carry = new Uint8Array(0);
      this.releasing = false;
    }
  }

  /** Carry `chunk[from, to)` (no `\n` in it) over to the next chunk; lines it completes at other breaks are handed out now. */
  private append(chunk: Uint8Array, from: number, to: number, base: number): void {
    const len = to - from;
    if (len === 0) return;
    if (this.carryLen === 0) this.carryStart = base + from;
    if (!this.hasBreaks && (this.dropping || this.carryLen + len > this.maxLineBytes)) {
      // Only `\n` ends a line here: nothing of this one needs keeping.
      this.dropping = true;
      this.carryLen = 0;
      if (this.carry.length > 1 << 20) this.carry = new Uint8Array(0);
      return;
    }
    if (this.carryLen + len > this.carry.length) this.grow(this.carryLen + len);
    this.carry.set(chunk.subarray(from, to), this.carryLen);
    this.carryLen += len;
    if (this.carryLen >= this.nextGc) {
      Bun.gc(true);
      this.nextGc = this.carryLen + GROWTH_GC_MIN;
    }
    if (this.hasBreaks) this.splitCarry();
    const keep = this.dropping ? 2 : this.maxLineBytes;
    if (this.carryLen > keep) {
      // The line passed the cap: drop it, keeping two bytes that may begin a break.
      const cut = this.carryLen - Math.min(2, this.carryLen);
      this.carry.copyWithin(0, cut, this.carryLen);
      this.carryLen -= cut;
      this.carryStart += cut;
      this.carryScanned = Math.max(0, this.carryScanned - cut);
      this.dropping = true;
      if (this.carry.length > 1 << 20) {
        const small = new Uint8Array(4096);
        small.set(this.carry.subarray(0, this.carryLen));
        this.carry = small;
      }
    }
  }

  /**
   * Make room for `need` bytes of carry. A long line's carry is allocated
   * once at the line cap (plus a chunk's slack): the engine commits a
   * buffer's pages as they are written, so it costs what the line holds.
   * Growing by copying would hold the old and the new buffer at once (and
   * the allocator keeps freed pages a while): about twice a huge line.
   */
  private grow(need: number): void {
    this.carry = grownLineBuffer(this.carry, this.carryLen, need, this.maxLineBytes + RESERVE_SLACK);
  }

  /** Hand out the lines of the carry that end at a break of the dialect; keep the unfinished rest. */
  private splitCarry(): void {
    const seg = this.carry;
    const n = this.carryLen;
    const table = this.table;
    let start = 0;
    let i = this.carryScanned;
    while (i < n) {
      if (table[seg[i]!] === 0) {
        i++;
        continue;
      }
      const len = breakAt(seg, i, n);
      if (len < 0) break;
      if (len === 0) {
        i++;
        continue;
      }
      this.emit(seg.subarray(start, i), this.carryStart + i + len);
      i += len;
      start = i;
    }
    if (start > 0) {
      seg.copyWithin(0, start, n);
      this.carryLen = n - start;
      this.carryStart += start;
    }
    this.carryScanned = i - start;
  }

  private emit(line: Uint8Array, end: number): void {
    this.lineNo++;
    this.nextLineStart = end;
    if (this.dropping) {
      this.dropping = false;
      this.sink(null, this.lineNo);
      return;
    }
    this.sink(line.length > this.maxLineBytes ? null : line, this.lineNo);
  }

  /**
   * One `\n`-delimited segment `buf[from, to)` (`terminated`: a `\n`
   * followed it; `segEnd`: absolute offset past that `\n`).
   */
  private segment(buf: Uint8Array, from: number, to: number, terminated: boolean, segEnd: number): void {
    if (to === from) {
      // A blank line (a journal may hold one between every two rows): handed out with no view made of it.
      this.emit(BLANK_LINE, segEnd);
      return;
    }
    if (this.fast !== null && to - from <= this.maxLineBytes) {
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
    if (!splitlines) {
      // LF or universal: the only break inside a segment is `\r`, found natively (a journal line rarely has one).
      i = this.hasBreaks ? seg.indexOf(0x0d) : -1;
      if (i < 0) i = n;
    }
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

export interface PhysicalLine {
  /** 0-based physical line number. */
  index: number;
  /** Byte offset of the first byte of the line. */
  start: number;
  /** Byte offset just past the line content (before its terminator). */
  end: number;
  /** The line content without terminator. Valid only until the next line is requested. */
  bytes: Uint8Array;
  /** True when the line was ended by a terminator (false for a final fragment). */
  terminated: boolean;
  /**
   * `bytes` are the line's own: the reader never writes them again (a copy,
   * or a huge line's buffer it let go), so a consumer may keep views of them.
   */
  owned: boolean;
}

export interface LineReadOptions {
  /** Line breaks (default "universal", Python's text mode). */
  dialect?: LineDialect;
  /** Start reading at this byte offset (line numbers count from there). */
  startOffset?: number;
  /** Treat the file as ending at this byte offset (a snapshot of a growing file). */
  endOffset?: number;
  /** Read size in bytes (default 1 MiB). */
  chunkSize?: number;
  /** Longest line accepted (default MAX_LINE_BYTES); a longer one is `row_too_large`. */
  maxLineBytes?: number;
  /** What the file is, for messages and the unreadable code (default "journal"). */
  what?: string;
}

/**
 * Yield the physical lines of `path` (`-` or `/dev/stdin`: standard input,
 * as a stream), read in fixed-size chunks. A missing file yields nothing;
 * a path that is not a regular file is `input_not_regular_file`, any other
 * read failure `<what>_unreadable`, and reading stops at the first line
 * past the cap: `row_too_large` with its 1-based number (all exit 3).
 */
export function physicalLines(path: string, options: LineReadOptions = {}): Generator<PhysicalLine> {
  // with no claim, no null is yielded
  return readLines(path, options, null) as Generator<PhysicalLine>;
}

/**
 * physicalLines with each `\n`-terminated line first offered to `claim`
 * on the read buffer itself (no view, no PhysicalLine made of it). A line
 * is offered only while no line before it waits to be yielded, so the
 * caller sees claimed and yielded lines in file order. Yields null after
 * each chunk read: a caller whose lines are all claimed still gets a turn
 * (to yield to the event loop) every chunk.
 */
export function claimedLines(path: string, options: LineReadOptions, claim: FastProbe): Generator<PhysicalLine | null> {
  return readLines(path, options, claim);
}

function* readLines(path: string, options: LineReadOptions, claim: FastProbe | null): Generator<PhysicalLine | null> {
  const input = openInput(path, { what: options.what ?? "journal" });
  if (input === null) return;
  const chunkSize = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
  const limit = options.endOffset ?? Number.POSITIVE_INFINITY;
  const cap = options.maxLineBytes ?? MAX_LINE_BYTES;
  let filePos = options.startOffset ?? 0;
  const buf = new Uint8Array(readBufferSize(input, chunkSize, filePos));
  const ready: PhysicalLine[] = [];
  let overlongLine = 0;
  let lineStart = filePos;
  const splitter: LineSplitter = new LineSplitter(
    options.dialect ?? "universal",
    (bytes, lineNo) => {
      if (bytes === null) overlongLine ||= lineNo;
      if (overlongLine !== 0) return;
      const end = lineStart + bytes!.length;
      const kept = splitter.detach(bytes!);
      ready.push({ index: lineNo - 1, start: lineStart, end, bytes: kept, terminated: splitter.nextLineStart > end, owned: kept.buffer !== buf.buffer });
      lineStart = splitter.nextLineStart;
    },
    cap,
    claim === null
      ? null
      : (b, s, e, lineNo) => {
          if (ready.length > 0 || overlongLine !== 0 || !claim(b, s, e, lineNo)) return false;
          lineStart = splitter.nextLineStart;
          return true;
        },
    null,
    filePos,
  );
  function* drain(): Generator<PhysicalLine> {
    for (const line of ready) yield line;
    ready.length = 0;
    if (overlongLine === 0 && splitter.overlong) overlongLine = splitter.lines + 1;
    if (overlongLine !== 0) throw rowTooLarge(path, overlongLine, cap);
  }
  try {
    for (;;) {
      const want = Math.min(buf.length, limit - filePos);
      if (want <= 0) break;
      const n = input.read(buf, 0, want, filePos);
      if (n === 0) break;
      filePos += n;
      splitter.push(buf.subarray(0, n));
      yield* drain();
      if (claim !== null) yield null;
    }
    splitter.end();
    yield* drain();
  } finally {
    input.close();
  }
}
