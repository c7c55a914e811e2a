import { openInput, unreadableInput, type OpenInput } from "../../fsutil/input.ts";
import { pyStr } from "../../pyjson/python.ts";
import { PyNum } from "../../pyjson/types.ts";
import { eventHash, hashProfileOf, payloadHash } from "../hash.ts";
import { MAX_LINE_BYTES } from "../../fsutil/lines.ts";
import { classifyLine, type JournalRow } from "../reader.ts";
import { VerifyKernel } from "./kernel.ts";
import { RowScanner, ScanMode } from "./scanner.ts";

/**
 * Verify one byte range of a journal: the unit of work of the fast engine
 * (one per worker thread). A range starts at the file start or just after a
 * line feed, and ends just after a line feed or at the snapshot end, so no
 * physical line spans two ranges.
 *
 * Each row is checked against its OWN stored prev_hash (the chain link to
 * the previous row is checked inside the range, and across ranges by the
 * stitcher), at the global position `baseIndex + local`. Rows in fast form
 * take the byte-level path (scanner.ts); all others, the first row of the
 * range, and any row the fast path rejects are re-checked by the exact path
 * (the py-json reader and hash code the exact verifier uses), so strings in
 * the result are always exactly what Python would report.
 */

export interface RangeTask {
  /** The journal; `-` or `/dev/stdin`: standard input, read as one stream (start 0, end unbounded). */
  path: string;
  /** Byte offsets [start, end). */
  start: number;
  end: number;
  /** `end` is the snapshot end: an unterminated final fragment is a line. */
  isLast: boolean;
  /** Usable rows before this range (the index of its first row). */
  baseIndex: number;
  /**
   * `baseIndex` is not known yet: take the stored `index` of the range's
   * first row as the base instead (a journal written in order stores each
   * row's position there). The stitcher redoes the range at its true base
   * when the guess was wrong, so a wrong or missing stored index costs
   * time, never a wrong verdict.
   */
  guessBase?: boolean;
  /** Check links and hash format only, never re-hash payloads. */
  linksOnly: boolean;
  /** Read size (bytes); small values force many chunk boundaries in tests. */
  chunkSize?: number;
}

/** The range's first usable row, re-checked against the real chain head at the stitch. */
export interface FirstRow {
  /** Python `str()` of the stored prev_hash. */
  prev: string;
  eventType: string;
  /** Null when it cannot be computed (unknown hash_profile) or in links-only mode. */
  payloadHash: string | null;
  storedHash: string;
  profile: string;
  /** The unknown-hash_profile message, which precedes any link check in Python's walk. */
  profileError: string | null;
}

export type FailureKind = "prev_hash break" | "event_hash mismatch" | "hash format" | "profile";

export interface RangeFailure {
  /** Row position inside the range. */
  local: number;
  kind: FailureKind;
  expected: string | null;
  actual: string;
  /** Message without the `step N: ` prefix. */
  message: string;
  /** Stored event_hash of the last row that verified before it in this range (null at local 0: the head before the range). */
  prefixHash: string | null;
}

export interface RangeResult {
  start: number;
  end: number;
  /** The base row index the range was verified at (a guess, with `guessBase`). */
  baseIndex: number;
  rows: number;
  physLines: number;
  /** Physical line indices (within the range) of discarded lines. */
  discarded: number[];
  /** The physical line (within the range) longer than MAX_LINE_BYTES, where the range stopped reading; the input is then `row_too_large`. */
  overlong: number[];
  /** Bytes of the input this range read (for a stream: all of it). */
  bytesRead: number;
  first: FirstRow | null;
  /** Stored event_hash of the last row when no failure was found ("" if no rows). */
  lastHash: string | null;
  failure: RangeFailure | null;
  /** Rows verified by the byte-level path / by the exact path (diagnostics); of the fast ones, by the WebAssembly kernel. */
  fastRows: number;
  exactRows: number;
  kernelRows: number;
  /** Start offset of the last physical line, and whether it had a terminator. */
  lastLineStart: number;
  lastLineTerminated: boolean;
}

const LF = 10;
const CR = 13;

/**
 * Open a journal for reading (src/fsutil/input.ts: a non-regular file is
 * `input_not_regular_file`; an unopenable one, or one that vanished since
 * its size was taken, `journal_unreadable`).
 */
export function openJournal(path: string): OpenInput {
  const input = openInput(path, { what: "journal" });
  if (input === null) throw unreadableInput(path, Object.assign(new Error("ENOENT"), { code: "ENOENT" }), { what: "journal" });
  return input;
}

const HEX64 = /^[0-9a-f]{64}$/;

/** The row's stored `index` when it is a plain non-negative int (a base-index guess), else null. */
function storedIndex(row: JournalRow): number | null {
  const v = row.get("index");
  if (!(v instanceof PyNum) || v.isFloat || !/^(0|[1-9][0-9]{0,14})$/.test(v.raw)) return null;
  return Number(v.raw);
}

/**
 * Ranges this small are verified without the WebAssembly kernel: setting it
 * up (compiling the module once per process, ~4 ms, and its memory) costs
 * more than it saves there, and a CI run verifying a small journal should
 * not pay for it.
 */
const KERNEL_MIN_BYTES = 256 << 10;

/** When a RangeVerifier uses the WebAssembly kernel: "auto" for ranges of KERNEL_MIN_BYTES and more. */
export type KernelUse = "auto" | "always" | "never";

/** Reusable per-thread state: the scanner's buffers survive between ranges. */
export class RangeVerifier {
  /** The scanner of the current range: `withKernel`'s, or `plain`. */
  private scanner!: RowScanner;
  /** The WebAssembly kernel for the current range (sharing the scanner's memory), or null: the JavaScript scanner takes every row. */
  private kernel: VerifyKernel | null = null;
  private plain: RowScanner | null = null;
  private withKernel: { scanner: RowScanner; kernel: VerifyKernel } | null = null;

  // ---- per-range state ----
  private task!: RangeTask;
  /** Row index of the range's first row (from the task, or guessed from that row). */
  private base = 0;
  private fileBase = 0; // file offset of mem[0]
  private lineNo = 0;
  private rows = 0;
  private discarded: number[] = [];
  private overlong: number[] = [];
  private first: FirstRow | null = null;
  private failure: RangeFailure | null = null;
  private fastRows = 0;
  private exactRows = 0;
  private kernelRows = 0;
  private lastLineStart = 0;
  private lastLineTerminated = true;

  /** Bytes of the current range processed so far (for progress). */
  progress = 0;

  /**
   * `readCap`: bytes read per chunk and the longest line handled in place
   * (longer ones are assembled on their own). 256 KiB is as fast as larger
   * reads and keeps a thread's buffers under 2 MiB.
   * `kernel`: when to verify rows in Python's spelling with the
   * WebAssembly kernel ("never": the JavaScript scanner alone; tests
   * compare the two).
   */
  constructor(
    private readonly readCap = 1 << 18,
    private readonly kernelUse: KernelUse = "auto",
  ) {}

  /** The scanner (and kernel) for a task, each set up on first use and kept. Links-only never hashes: no kernel. */
  private pickScanner(task: RangeTask): void {
    const bytes = task.end - task.start;
    const use =
      !task.linksOnly && (this.kernelUse === "always" || (this.kernelUse === "auto" && bytes >= KERNEL_MIN_BYTES));
    if (use) {
      if (this.withKernel === null) {
        let kernel: VerifyKernel | null = null;
        const scanner = new RowScanner(this.readCap, 0, (size) => {
          kernel = new VerifyKernel(size, this.readCap);
          return kernel.scannerMem;
        });
        this.withKernel = { scanner, kernel: kernel! };
      }
      this.scanner = this.withKernel.scanner;
      this.kernel = this.withKernel.kernel;
    } else {
      this.scanner = this.plain ??= new RowScanner(this.readCap);
      this.kernel = null;
    }
  }

  run(task: RangeTask, onChunk?: (bytesDone: number) => void): RangeResult {
    this.pickScanner(task);
    this.task = task;
    this.base = task.baseIndex;
    this.lineNo = 0;
    this.rows = 0;
    this.discarded = [];
    this.overlong = [];
    this.first = null;
    this.failure = null;
    this.fastRows = 0;
    this.exactRows = 0;
    this.kernelRows = 0;
    this.lastLineStart = task.start;
    this.lastLineTerminated = true;
    this.progress = 0;
    const chunk = Math.max(64, Math.min(task.chunkSize ?? this.scanner.readCap, this.scanner.readCap));
    const input = openJournal(task.path);
    let filePos = task.start;
    try {
      let carry = 0; // bytes of an unfinished line at mem[0, carry)
      this.fileBase = task.start;
      for (;;) {
        const room = this.scanner.readCap - carry;
        if (room === 0) {
          // The unfinished line fills the read area: read it on its own.
          filePos = this.longLine(input, this.fileBase);
          carry = 0;
          this.fileBase = filePos;
          if (filePos >= task.end || this.overlong.length > 0) break;
          continue;
        }
        const want = Math.min(chunk, task.end - filePos, room);
        const n = want > 0 ? input.read(this.scanner.mem, carry, want, filePos) : 0;
        filePos += n;
        const dataEnd = carry + n;
        const atEnd = n === 0 || filePos >= task.end;
        const consumed = this.lines(dataEnd, atEnd);
        this.progress = filePos - task.start - (dataEnd - consumed);
        if (onChunk) onChunk(this.progress);
        if (atEnd) break;
        // move the unfinished line to the front
        carry = dataEnd - consumed;
        if (carry > 0) this.scanner.mem.copyWithin(0, consumed, dataEnd);
        this.fileBase += consumed;
      }
    } finally {
      input.close();
    }
    // A stream's end is where it ended.
    const end = input.stream ? filePos : task.end;
    this.progress = end - task.start;
    return {
      start: task.start,
      end,
      bytesRead: filePos - task.start,
      baseIndex: this.base,
      rows: this.rows,
      physLines: this.lineNo,
      discarded: this.discarded,
      overlong: this.overlong,
      first: this.first,
      lastHash: this.failure ? null : this.rows === 0 ? "" : this.lastHashString(),
      failure: this.failure,
      fastRows: this.fastRows,
      exactRows: this.exactRows,
      kernelRows: this.kernelRows,
      lastLineStart: this.lastLineStart,
      lastLineTerminated: this.lastLineTerminated,
    };
  }

  /**
   * A physical line longer than the read area, starting at file offset
   * `start`: assembled like the exact reader does (reading stops once it
   * passes MAX_LINE_BYTES: the input is then refused as `row_too_large`),
   * classified on the exact path. Returns the offset just past its terminator.
   */
  private longLine(input: OpenInput, start: number): number {
    const b = this.scanner.mem;
    const cap = this.scanner.readCap;
    const keep = MAX_LINE_BYTES + 1;
    const parts: Uint8Array[] = [];
    let kept = 0;
    let pos = start;
    const end = this.task.end;
    for (;;) {
      const n = pos < end ? input.read(b, 0, Math.min(cap, end - pos), pos) : 0;
      if (n === 0) {
        this.longLineDone(start, parts, kept, false);
        return pos;
      }
      let t = -1;
      for (let i = 0; i < n; i++) {
        const c = b[i];
        if (c === LF || c === CR) {
          t = i;
          break;
        }
      }
      const contentEnd = t < 0 ? n : t;
      const piece = b.slice(0, Math.min(contentEnd, keep - kept));
      parts.push(piece);
      kept += piece.length;
      if (kept > MAX_LINE_BYTES) {
        // Too long to be a row: stop here, the input is refused (refuseOverlong).
        this.overlong.push(this.lineNo++);
        return pos + n;
      }
      if (t < 0) {
        pos += n;
        continue;
      }
      let next = pos + t + 1;
      if (b[t] === CR) {
        // CRLF: the LF may be in this read or the next byte of the file
        if (t + 1 < n) {
          if (b[t + 1] === LF) next++;
        } else if (next < end) {
          const one = new Uint8Array(1);
          if (input.read(one, 0, 1, next) === 1 && one[0] === LF) next++;
        }
      }
      this.longLineDone(start, parts, kept, true);
      return next;
    }
  }

  private longLineDone(start: number, parts: Uint8Array[], kept: number, terminated: boolean): void {
    const bytes = new Uint8Array(kept);
    let o = 0;
    for (const p of parts) {
      bytes.set(p, o);
      o += p.length;
    }
    const lineNo = this.lineNo++;
    this.lastLineStart = start;
    this.lastLineTerminated = terminated;
    if (kept === 0) return;
    this.classifyExact(bytes, lineNo);
  }

  /** Process the complete lines of mem[0, dataEnd); at the end also the final fragment. Returns bytes consumed. */
  private lines(dataEnd: number, atEnd: boolean): number {
    const b = this.scanner.mem;
    b[dataEnd] = LF; // sentinel: stops every scanning loop
    this.scanner.bound = dataEnd;
    const hasCR = b.subarray(0, dataEnd).indexOf(CR) >= 0;
    let p = 0;
    const kernel = this.kernel;
    for (;;) {
      if (kernel !== null && !hasCR && p < dataEnd && this.rows > 0 && this.failure === null) {
        // Rows after a range's first one, in Python's spelling: the kernel
        // verifies as many as it can in one call and stops at the first it
        // does not take, which the code below then handles.
        const q = kernel.verify(p, dataEnd, this.base + this.rows, this.scanner.prevHexAt());
        const n = kernel.rows;
        if (n > 0) {
          this.rows += n;
          this.fastRows += n;
          this.kernelRows += n;
          this.lineNo += n;
          this.lastLineStart = this.fileBase + kernel.lastRow;
          this.lastLineTerminated = true;
          p = q;
        }
      }
      if (!hasCR && p < dataEnd) {
        // Most lines are rows in fast form: verify one without looking for
        // its end first (the scanner finds it), saving a pass over the line.
        const e = this.fastRow(p, -1);
        if (e >= 0) {
          this.lineNo++;
          this.lastLineStart = this.fileBase + p;
          this.lastLineTerminated = true;
          p = e + 1;
          continue;
        }
      }
      const q = b.indexOf(LF, p);
      if (q >= dataEnd) break;
      if (hasCR) this.crSegment(p, q, true);
      else this.line(p, q, true);
      p = q + 1;
    }
    if (atEnd && p < dataEnd) {
      // A final fragment: a physical line only at the snapshot end (Python
      // reads it as the last line); elsewhere the file changed under us,
      // and it is still the best reading of what is there.
      if (hasCR) this.crSegment(p, dataEnd, false);
      else this.line(p, dataEnd, false);
      p = dataEnd;
    }
    return p;
  }

  /** Universal newlines inside one LF-terminated segment (or the final fragment). */
  private crSegment(s: number, q: number, byLF: boolean): void {
    const b = this.scanner.mem;
    let a = s;
    for (;;) {
      const c = b.indexOf(CR, a);
      if (c < 0 || c >= q) break;
      if (c + 1 === q && byLF) {
        this.line(a, c, true); // CRLF
        return;
      }
      this.line(a, c, true); // lone CR ends a line
      a = c + 1;
    }
    if (byLF || a < q) this.line(a, q, byLF);
  }

  /** One physical line mem[s, e) (mem[e] is a terminator or the sentinel). */
  private line(s: number, e: number, terminated: boolean): void {
    const lineNo = this.lineNo++;
    this.lastLineStart = this.fileBase + s;
    this.lastLineTerminated = terminated;
    if (s === e) return; // blank
    if (this.failure !== null) {
      // Past the first failure only row/discard classification matters.
      if (this.scanner.scan(s, e, ScanMode.Classify)) this.rows++;
      else this.exactLine(s, e, lineNo);
      return;
    }
    if (this.fastRow(s, e) < 0) this.exactLine(s, e, lineNo);
  }

  /**
   * Verify the row of the line at `s` on the fast path: if it is in fast
   * form, links to the previous row and hashes right, count it and return
   * the offset of its line end; otherwise return -1 (the caller takes the
   * line exactly) having changed nothing the exact path reads (a first row
   * may leave the scanner's previous hash set, which the exact path does
   * not use for a range's first row and overwrites). With e = -1 the line
   * end is not known yet: the scanner finds it, and the line must end
   * before the data's sentinel (the scanner's `bound`).
   */
  private fastRow(s: number, e: number): number {
    if (this.failure !== null) return -1;
    const sc = this.scanner;
    const linksOnly = this.task.linksOnly;
    // A range's first row has no previous row to link to: the stitcher
    // checks its link, from the strings kept in `first`.
    const first = this.rows === 0;
    if (first && linksOnly) return -1;
    if (!sc.scan(s, e, linksOnly ? ScanMode.Links : ScanMode.Assemble)) return -1;
    // The sentinel is not a terminator: an unfinished line.
    if (e < 0 && sc.lineEnd >= sc.bound) return -1;
    let base = this.base;
    if (first) {
      if (!sc.envelopeMatched || !sc.takeStoredPrevAsLast()) return -1;
      if (this.task.guessBase) {
        const guess = sc.storedIndexGuess();
        if (guess >= 0) base = guess;
      }
    } else if (!sc.storedPrevIsLast()) return -1;
    if (linksOnly) {
      if (!sc.storedHashIsHex()) return -1;
      sc.takeStoredHashAsLast();
    } else {
      if (!sc.hashPayload() || !sc.hashEvent(base + this.rows) || !sc.storedHashMatches()) return -1;
      if (first) this.first = { ...sc.firstRowStrings(), profile: "py-json-v1", profileError: null };
      sc.advance();
    }
    this.base = base;
    this.rows++;
    this.fastRows++;
    return e < 0 ? sc.lineEnd : e;
  }

  /** A line the fast path did not take, or whose fast check failed: classify and check it exactly. */
  private exactLine(s: number, e: number, lineNo: number): void {
    this.classifyExact(this.scanner.mem.subarray(s, e), lineNo);
  }

  private classifyExact(bytes: Uint8Array, lineNo: number): void {
    const v = classifyLine(bytes);
    if (v.kind === "blank") return;
    if (this.failure !== null) {
      if (v.kind === "row") this.rows++;
      else this.discarded.push(lineNo);
      return;
    }
    if (v.kind === "discarded") {
      this.discarded.push(lineNo);
      return;
    }
    if (this.rows === 0 && this.task.guessBase) this.base = storedIndex(v.row) ?? this.base;
    this.checkExact(v.row, this.rows, this.base + this.rows);
  }

  /** The exact verifier's per-row check (ChainWalker.push), against the in-range previous hash. */
  private checkExact(row: JournalRow, local: number, index: number): void {
    this.rows++;
    this.exactRows++;
    const eventType = pyStr(row.get("event"), "");
    const storedHash = pyStr(row.get("event_hash"), "");
    const storedPrev = pyStr(row.get("prev_hash"), "");
    const linksOnly = this.task.linksOnly;
    let profile = "py-json-v1";
    let profileError: string | null = null;
    if (!linksOnly) {
      try {
        profile = hashProfileOf(row);
      } catch (err) {
        profileError = (err as Error).message;
      }
    }
    const ph = linksOnly || profileError !== null ? null : payloadHash(eventType, row, profile);
    if (local === 0) {
      this.first = { prev: storedPrev, eventType, payloadHash: ph, storedHash, profile, profileError };
    }
    if (profileError !== null) {
      this.fail({ local, kind: "profile", expected: null, actual: storedHash, message: profileError });
      return;
    }
    const prev = local === 0 ? storedPrev : this.lastHashString();
    const expected = ph === null ? null : eventHash(prev, eventType, ph, index, profile);
    if (storedPrev !== prev) {
      this.fail({ local, kind: "prev_hash break", expected, actual: storedHash, message: "prev_hash break" });
      return;
    }
    if (linksOnly) {
      if (!HEX64.test(storedHash)) {
        this.fail({
          local,
          kind: "hash format",
          expected: null,
          actual: storedHash,
          message: "event_hash is not a 64-character lowercase hex SHA-256 digest",
        });
        return;
      }
    } else if (storedHash !== expected) {
      this.fail({ local, kind: "event_hash mismatch", expected, actual: storedHash, message: "event_hash mismatch" });
      return;
    }
    // Passed: the stored hash is 64 lowercase hex (it equals a computed digest, or was format-checked).
    this.scanner.setLastHash(storedHash);
  }

  /** Record the range's first failure with the head of the prefix verified before it (the scanner still holds it). */
  private fail(f: Omit<RangeFailure, "prefixHash">): void {
    this.failure = { ...f, prefixHash: f.local === 0 ? null : this.lastHashString() };
  }

  private lastHashString(): string {
    return this.scanner.lastHash();
  }
}
