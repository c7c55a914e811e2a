import { openInput, unreadableInput, type OpenInput } from "../../fsutil/input.ts";
import { RAW_STRING_MIN } from "../../pyjson/row.ts";
import { PyNum } from "../../pyjson/types.ts";
import { checkRow, type FailureKind } from "../check-row.ts";
import { DEFAULT_PROFILE } from "../hash-profiles.ts";
import { JOURNAL_MAX_ROW_BYTES } from "../../fsutil/input.ts";
import { grownLineBuffer } from "../../fsutil/lines.ts";
import { Respacer } from "../../codec/writer-spacing.ts";
import { classifyLine, type JournalRow } from "../reader.ts";
import { mayHoldMutation, RangeGate, type RangeMutations } from "../provider-state.ts";
import { GateCode, KernelMode, VerifyKernel } from "./kernel.ts";
import { SubtreeBuilder, type RangeTree, type TreeSpec } from "./subtrees.ts";

export type { FailureKind } from "../check-row.ts";

/**
 * Verify one byte range of a journal: the unit of work of the fast engine
 * (one per worker thread). A range starts at the file start or just after a
 * line feed, and ends just after a line feed or at the snapshot end, so no
 * physical line spans two ranges.
 *
 * Each row is checked against its OWN stored prev_hash (the chain link to
 * the previous row is checked inside the range, and across ranges by the
 * stitcher), at the global position `baseIndex + local`. Two tiers: rows in
 * Python's spelling that check out are taken by the WebAssembly kernel
 * (kernel.ts), in bulk; every other line, and any row the kernel stops at,
 * is checked by the exact path (the py-json reader and checkRow, which the
 * exact verifier uses), so strings in the result are always exactly what
 * Python would report.
 */

/** Where a verify in this thread hands each verified row's text, in file order (RangeVerifier.rowText). */
export interface RowTextSink {
  /** The texts of `rows` rows the kernel verified, u8[s, e): each its members but ts and elapsed_s, sorted, compact, then a line feed. */
  kernelText(u8: Uint8Array, s: number, e: number, rows: number): void;
  /**
   * A row the exact path verified: its line, on physical line `lineNo`
   * (0-based) of its range, and the row as it parsed it (its long strings
   * still bytes: pyjson/row.ts); both valid during the call only.
   */
  exactRow(line: Uint8Array, lineNo: number, row: JournalRow): void;
  /**
   * Each row the kernel verified, as it is taken (called from the kernel:
   * the call must not use it): its line k.lines[s, e) (e: the next line's
   * start), described by the kernel's member table and facts during the
   * call. Its text is handed after, with the rest of its call's (kernelText).
   */
  kernelRow?(k: VerifyKernel, s: number, e: number): void;
}

/** The texts' separator: a line feed after each. */
const TEXT_LINES = { separator: 0x0a };

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
  /** Also build the range's Merkle subtrees over the rows it verifies (a checkpoint's or proof's one pass). */
  tree?: TreeSpec | null;
  /** Longest row taken (default JOURNAL_MAX_ROW_BYTES); a longer line refuses the input (`row_too_large`). */
  maxRowBytes?: number;
  /** Also gate the range's provider-state mutation rows as they are verified (`replay <RUN_ID> --verify`). */
  providerState?: boolean;
}

/** The range's first usable row, re-checked against the real chain head at the stitch. */
export interface FirstRow {
  /** Python `str()` of the stored prev_hash. */
  prev: string;
  eventType: string;
  /** Null when it cannot be computed (unknown hash_profile) or in links-only mode. */
  payloadHash: string | null;
  storedHash: string;
  /** Its hash profile's name (a value that crosses the worker boundary; hash-profiles.ts has the profile). */
  profile: string;
  /** The unknown-hash_profile message, which precedes any link check in Python's walk. */
  profileError: string | null;
  /** Its physical line (0-based, within the range). */
  line: number;
}

export interface RangeFailure {
  /** Row position inside the range. */
  local: number;
  /** Its physical line (0-based, within the range). */
  line: number;
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
  /** The physical line (within the range) longer than the row limit, where the range stopped reading; the input is then `row_too_large`. */
  overlong: number[];
  /** The row limit the range read with (what `row_too_large` names). */
  rowLimit: number;
  /** Bytes of the input this range read (for a stream: all of it). */
  bytesRead: number;
  first: FirstRow | null;
  /** Stored event_hash of the last row when no failure was found ("" if no rows). */
  lastHash: string | null;
  failure: RangeFailure | null;
  /** Rows verified by the WebAssembly kernel / by the exact path (diagnostics); fastRows = kernelRows. */
  fastRows: number;
  exactRows: number;
  kernelRows: number;
  /** Of kernelRows, the rows the kernel took re-spaced (respacedRow). */
  respacedRows: number;
  /** The file offsets of the rows the kernel declined as written (the exact path's and the re-spaced), in order (null: more than DECLINED_AT_KEPT of them). */
  declinedAt: number[] | null;
  /** Start offset of the last physical line, and whether it had a terminator. */
  lastLineStart: number;
  lastLineTerminated: boolean;
  /** With `task.tree`: the subtrees over the rows verified before any failure (null without). */
  tree: RangeTree | null;
  /** With `task.providerState`: the range's mutation rows (null without; meaningless past a failure). */
  mutations: RangeMutations | null;
}

const LF = 10;
const CR = 13;

/** The declined rows whose offsets a range keeps (a journal of more has its rows by path counted only). */
export const DECLINED_AT_KEPT = 4096;

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

/** The row's stored `index` when it is a plain non-negative int (a base-index guess), else null. */
function storedIndex(row: JournalRow): number | null {
  const v = row.get("index");
  if (!(v instanceof PyNum) || v.isFloat || !/^(0|[1-9][0-9]{0,14})$/.test(v.raw)) return null;
  return Number(v.raw);
}

/**
 * Ranges this small are verified on the exact path alone: setting the
 * kernel up (compiling the module once per process, and its memory)
 * costs more than it saves there, and a CI run verifying a small journal
 * should not pay for it.
 */
const KERNEL_MIN_BYTES = 32 << 10;

/**
 * The longest line the WebAssembly kernel verifies (in a second kernel
 * sized to the line: its read area, twice that of scratch, and as much
 * again for the payload pre-image); a longer line goes to the exact path.
 * Chosen so a thread's kernels stay within the bound verify keeps,
 * 64 MB + 2x the longest row (docs/input.md has the measurement).
 */
export const KERNEL_MAX_ROW = 8 << 20;

/**
 * A line this long on the exact path is read and checked by one thread at
 * a time: the bound verify keeps (64 MB + 2x the longest row) has room for
 * one such row, not for one in every thread. A thread waits, holding at
 * most this much of its line, while another finishes its own.
 */
const LONG_LINE_GATE = 8 << 20;
/** The gate's slot in the run's shared Int32Array: 0 open, 1 taken. */
const GATE_SLOT = 1;
/** How long a thread waits for the gate before it reads its line without it. */
const GATE_MAX_WAIT_MS = 60_000;

/** When a RangeVerifier uses the WebAssembly kernel: "auto" for ranges of KERNEL_MIN_BYTES and more. */
export type KernelUse = "auto" | "always" | "never";

/** The offset of the first LF or CR in b[s, e), or -1. */
function terminatorIn(b: Uint8Array, s: number, e: number): number {
  const part = b.subarray(s, e);
  const lf = part.indexOf(LF);
  const cr = part.indexOf(CR, 0);
  const t = lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr);
  return t < 0 ? -1 : s + t;
}

/**
 * The read area of a kernel for a line of `len` bytes (its terminator and
 * the sentinel after it): the next of 1, 1.5, 2, 3, 4, 6 ... times a power
 * of two, so rows of similar lengths share one kernel, and no larger than
 * the longest line it may take needs.
 */
export function kernelCapFor(len: number, maxRow: number, readCap: number): number {
  const need = Math.max(len + 2, 2 * readCap);
  let cap = 1 << Math.floor(Math.log2(need));
  if (cap < need) cap = cap * 1.5 >= need ? cap * 1.5 : cap * 2;
  return Math.min(cap, maxRow + 2);
}

const latin1 = new TextDecoder("latin1");
const utf8 = new TextDecoder();

/** A kernel a long row grew larger than this is not kept from one verify to the next (RangeVerifier.settle). */
const BIG_KERNEL_KEEP = 4 << 20;

let threadShared: RangeVerifier | null = null;

/**
 * The calling thread's RangeVerifier, shared by every verify it runs: its
 * kernels are kept from one verify to the next. Each kernel holds a
 * WebAssembly memory, and the engine runs a full collection about every
 * third one made, so a long-lived process that verifies many journals
 * (the test suite) ran one every few verifies. `run` is synchronous, so
 * verifies interleaved at their turns of the event loop share it safely.
 */
export function threadVerifier(): RangeVerifier {
  return (threadShared ??= new RangeVerifier());
}

/** Reusable per-thread state: the read area and the kernel survive between ranges. */
export class RangeVerifier {
  /** The read area of the current range (the kernel's, or `plain`), with room for a sentinel and word loads past it. */
  private mem!: Uint8Array;
  /** The previous row's event hash (64 hex digits) inside the range: where the kernel links from. */
  private prev!: Uint8Array;
  /** The WebAssembly kernel of the current range, or null: the exact path takes every row. */
  private kernel: VerifyKernel | null = null;
  private plain: { mem: Uint8Array; prev: Uint8Array } | null = null;
  private withKernel: VerifyKernel | null = null;
  /** The kernel for lines longer than the read area (see longKernelLine), sized to the longest so far. */
  private bigKernel: VerifyKernel | null = null;
  /** With `rowText`: the kernel that also writes the rows' texts. */
  private withTextKernel: VerifyKernel | null = null;
  /**
   * Where each verified row's text goes, in order (a verifier of a verify
   * in this thread only: executor.ts), or null. A row the kernel verified is
   * handed as its text; one the exact path verified, as its line.
   */
  rowText: RowTextSink | null = null;
  /** Re-spaces the lines the kernel declines, and paces collections (respacedRow). */
  private readonly respacer = new Respacer();
  /** A line too long for the big kernel: the bytes of it that longKernelLine read (see longLine). */
  private longPrefix: Uint8Array | null = null;

  // ---- per-range state ----
  private task!: RangeTask;
  /** The run's shared Int32Array (see run), or null. */
  private gate: Int32Array | null = null;
  /** Row index of the range's first row (from the task, or guessed from that row). */
  private base = 0;
  private fileBase = 0; // file offset of mem[0]
  private lineNo = 0;
  private rows = 0;
  private discarded: number[] = [];
  private overlong: number[] = [];
  private first: FirstRow | null = null;
  private failure: RangeFailure | null = null;
  private exactRows = 0;
  private declinedAt: number[] | null = [];
  private kernelRows = 0;
  private respacedRows = 0;
  private lastLineStart = 0;
  private lastLineTerminated = true;
  /** With `task.tree`: the subtrees being built (from the first row, once its position is known), and the kept row. */
  private subtrees: SubtreeBuilder | null = null;
  private keptRow: string | null = null;
  /** With `task.providerState`: the provider-state gate over the range's rows. */
  private mutationGate: RangeGate | null = null;

  /** Bytes of the current range processed so far (for progress). */
  progress = 0;

  /**
   * `readCap`: bytes read per chunk and the longest line handled in place
   * (longer ones are assembled on their own). 256 KiB is as fast as larger
   * reads and keeps a thread's buffers under 2 MiB.
   * `kernel`: when to take rows in Python's spelling with the WebAssembly
   * kernel ("never": the exact path alone; tests compare the two).
   * `gateMaxWaitMs`: how long a long line waits for the long-line gate.
   */
  constructor(
    private readonly readCap = 1 << 18,
    private readonly kernelUse: KernelUse = "auto",
    private readonly gateMaxWaitMs = GATE_MAX_WAIT_MS,
  ) {}

  /** The memory (and kernel) for a task, each set up on first use and kept. */
  private pickMemory(task: RangeTask): void {
    const bytes = task.end - task.start;
    // The kernel takes only rows that name no hash_profile, and hashes them in the default profile's spelling.
    const kernelOk = DEFAULT_PROFILE.fastKernels;
    if (kernelOk && (this.kernelUse === "always" || (this.kernelUse === "auto" && bytes >= KERNEL_MIN_BYTES))) {
      const k = this.rowText !== null ? (this.withTextKernel ??= new VerifyKernel(this.readCap, undefined, TEXT_LINES)) : (this.withKernel ??= new VerifyKernel(this.readCap));
      this.kernel = k;
      this.mem = k.lines;
      this.prev = k.prev;
    } else {
      const plain = (this.plain ??= { mem: new Uint8Array(this.readCap + 8), prev: new Uint8Array(64) });
      this.kernel = null;
      this.mem = plain.mem;
      this.prev = plain.prev;
    }
  }

  /** A verify is done: a kernel a long row grew is let go (the next long row makes its own). */
  settle(): void {
    if (this.bigKernel !== null && this.bigKernel.readCap > BIG_KERNEL_KEEP) this.bigKernel = null;
    this.longPrefix = null;
  }

  /**
   * Verify the range `task`. `shared`: the run's Int32Array shared by the
   * threads verifying it (its [1] is the long-line gate), or null when this
   * thread is the only one.
   */
  run(task: RangeTask, onChunk?: (bytesDone: number) => void, shared: Int32Array | null = null): RangeResult {
    this.pickMemory(task);
    this.task = task;
    this.gate = shared;
    this.base = task.baseIndex;
    this.lineNo = 0;
    this.rows = 0;
    this.discarded = [];
    this.overlong = [];
    this.first = null;
    this.failure = null;
    this.exactRows = 0;
    this.declinedAt = [];
    this.kernelRows = 0;
    this.respacedRows = 0;
    this.lastLineStart = task.start;
    this.lastLineTerminated = true;
    this.subtrees = null;
    this.keptRow = null;
    this.mutationGate = task.providerState ? new RangeGate() : null;
    this.progress = 0;
    const cap = this.readCap;
    const chunk = Math.max(64, Math.min(task.chunkSize ?? cap, cap));
    const input = openJournal(task.path);
    let filePos = task.start;
    try {
      let carry = 0; // bytes of an unfinished line at mem[0, carry)
      this.fileBase = task.start;
      for (;;) {
        const room = cap - carry;
        if (room === 0) {
          // The unfinished line fills the read area: read it on its own.
          filePos = this.longLine(input, this.fileBase);
          carry = 0;
          this.fileBase = filePos;
          if (filePos >= task.end || this.overlong.length > 0) break;
          continue;
        }
        const want = Math.min(chunk, task.end - filePos, room);
        const n = want > 0 ? input.read(this.mem, carry, want, filePos) : 0;
        filePos += n;
        const dataEnd = carry + n;
        const atEnd = n === 0 || filePos >= task.end;
        const consumed = this.lines(dataEnd, atEnd);
        this.progress = filePos - task.start - (dataEnd - consumed);
        if (onChunk) onChunk(this.progress);
        if (atEnd) break;
        // move the unfinished line to the front
        carry = dataEnd - consumed;
        if (carry > 0) this.mem.copyWithin(0, consumed, dataEnd);
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
      rowLimit: this.task.maxRowBytes ?? JOURNAL_MAX_ROW_BYTES,
      first: this.first,
      lastHash: this.failure ? null : this.rows === 0 ? "" : this.lastHashString(),
      failure: this.failure,
      fastRows: this.kernelRows,
      exactRows: this.exactRows,
      declinedAt: this.declinedAt,
      kernelRows: this.kernelRows,
      respacedRows: this.respacedRows,
      lastLineStart: this.lastLineStart,
      lastLineTerminated: this.lastLineTerminated,
      tree: task.tree ? this.treeResult() : null,
      mutations: this.mutationGate?.result() ?? null,
    };
  }

  private treeResult(): RangeTree {
    return { subtrees: this.subtrees?.subtrees() ?? [], row: this.keptRow };
  }

  /** The subtree builder, made at the range's first verified row (its position is then known). */
  private leafSink(): SubtreeBuilder | null {
    const spec = this.task.tree;
    if (!spec || this.task.linksOnly) return null;
    return (this.subtrees ??= new SubtreeBuilder(spec.cuts, this.base));
  }

  /** The row at `index` is the one to keep: its line's text. */
  private keep(index: number, line: Uint8Array): void {
    if (this.task.tree?.keepRow === index) this.keptRow = utf8.decode(line);
  }

  /**
   * A physical line longer than the read area, starting at file offset
   * `start`: on the kernel when it fits one (longKernelLine), else
   * assembled like the exact reader does (reading stops once it passes the
   * task's row limit: the input is then refused as `row_too_large`) and
   * classified on the exact path. Returns the offset just past its
   * terminator. Nothing is read twice but the read area's bytes (standard
   * input keeps 1 MiB for that): the bytes the kernel read are handed on.
   */
  private longLine(input: OpenInput, start: number): number {
    let prefix: Uint8Array | null = null;
    if (this.kernel !== null) {
      const next = this.longKernelLine(input, start);
      if (next >= 0) return next;
      prefix = this.longPrefix;
      this.longPrefix = null;
    }
    return this.longLineExact(input, start, prefix);
  }

  /**
   * The exact path's long line, read in pieces after `prefix`, its first
   * bytes the kernel already read (no terminator among them).
   */
  private longLineExact(input: OpenInput, start: number, prefix: Uint8Array | null): number {
    const cap = this.readCap;
    const limit = this.task.maxRowBytes ?? JOURNAL_MAX_ROW_BYTES;
    let kept = 0;
    let pos = start;
    if (prefix !== null) {
      kept = Math.min(prefix.length, limit + 1);
      pos += prefix.length;
      if (kept > limit) {
        this.overlong.push(this.lineNo++);
        return pos;
      }
    }
    // The kernel that read the prefix cannot take this line: let it go before the line fills memory.
    if (prefix !== null) this.bigKernel = null;
    // Read straight into one buffer (reserved at the row limit once long): never pieces and their join, two copies of a huge line.
    let line = grownLineBuffer(prefix ?? new Uint8Array(0), kept, kept + 2 * cap, limit + cap);
    prefix = null;
    const end = this.task.end;
    let held = false;
    let gateTried = false;
    try {
      for (;;) {
        if (!gateTried && kept >= LONG_LINE_GATE) {
          gateTried = true;
          held = this.enterGate();
        }
        if (kept + cap > line.length) line = grownLineBuffer(line, kept, kept + cap, limit + cap);
        const n = pos < end ? input.read(line, kept, Math.min(cap, end - pos), pos) : 0;
        if (n === 0) {
          this.longLineDone(start, line.subarray(0, kept), false);
          return pos;
        }
        const t = terminatorIn(line, kept, kept + n);
        const len = t < 0 ? kept + n : t;
        if (len > limit) {
          // Too long to be a row: stop here, the input is refused (refuseOverlong).
          this.overlong.push(this.lineNo++);
          return pos + n;
        }
        if (t < 0) {
          kept = len;
          pos += n;
          continue;
        }
        let next = pos + (t - kept) + 1;
        if (line[t] === CR) {
          // CRLF: the LF may be in this read or the next byte of the file
          if (t + 1 < kept + n) {
            if (line[t + 1] === LF) next++;
          } else if (next < end) {
            const one = new Uint8Array(1);
            if (input.read(one, 0, 1, next) === 1 && one[0] === LF) next++;
          }
        }
        this.longLineDone(start, line.subarray(0, t), true);
        return next;
      }
    } finally {
      if (held) {
        // what this line took is given back before another thread's line may take as much
        line = new Uint8Array(0);
        Bun.gc(true);
        this.leaveGate();
      }
    }
  }

  /**
   * Take the long-line gate (see LONG_LINE_GATE), waiting while another
   * thread holds it; false: this thread goes on without it. The wait is
   * bounded: a holder that never gives the gate back (a thread that died
   * holding it) costs memory, never a verify that hangs.
   */
  private enterGate(): boolean {
    const g = this.gate;
    if (g === null) return false;
    const deadline = performance.now() + this.gateMaxWaitMs;
    while (Atomics.compareExchange(g, GATE_SLOT, 0, 1) !== 0) {
      const left = deadline - performance.now();
      if (left <= 0) return false;
      Atomics.wait(g, GATE_SLOT, 1, Math.min(left, 250));
    }
    return true;
  }

  private leaveGate(): void {
    Atomics.store(this.gate!, GATE_SLOT, 0);
    Atomics.notify(this.gate!, GATE_SLOT, 1);
  }

  /**
   * A line longer than the read area, for the kernel: read whole into a
   * kernel sized to it, while it is at most KERNEL_MAX_ROW bytes and within
   * the row limit, then verified like any line (the kernel, or the exact
   * path for a row it declines). The kernel is kept for the lines after it
   * and replaced only by a longer line: from a file sized once that line's
   * end is found (a kernel grown step by step would leave every smaller
   * step's memory behind); from a stream, which cannot be read twice,
   * doubled as it fills. Returns the offset just past the line's
   * terminator, or -1 for a line too long for it, whose bytes read so far
   * (no terminator among them) are then in `longPrefix`.
   */
  private longKernelLine(input: OpenInput, start: number): number {
    const maxRow = Math.min(KERNEL_MAX_ROW, this.task.maxRowBytes ?? JOURNAL_MAX_ROW_BYTES);
    const end = this.task.end;
    // (one without a text area cannot take a row whose text is wanted)
    let k = this.bigKernel !== null && (this.rowText === null || this.bigKernel.textAt !== 0) ? this.bigKernel : null;
    let len = 0; // bytes of the line read into k.lines
    let pos = start;
    for (;;) {
      if (k === null || len === k.readCap) {
        // The line fills the kernel's read area (or there is none yet): a larger one, or the exact path.
        if (k !== null && k.readCap > maxRow) {
          this.longPrefix = k.lines.subarray(0, len);
          return -1;
        }
        let cap: number;
        if (input.stream) cap = k === null ? kernelCapFor(0, maxRow, this.readCap) : Math.min(2 * k.readCap, maxRow + 2);
        else {
          const lineLen = this.lineLength(input, pos, start, maxRow);
          if (lineLen < 0) {
            this.longPrefix = k === null ? new Uint8Array(0) : k.lines.subarray(0, len);
            return -1;
          }
          cap = kernelCapFor(lineLen, maxRow, this.readCap);
        }
        k = this.newBigKernel(cap, k, len);
      }
      const b = k.lines;
      // From a stream at most a read area at a time: what is read past the line's end is read again, from the stream's kept bytes.
      const want = Math.min(k.readCap - len, end - pos, input.stream ? this.readCap : Infinity);
      const n = want > 0 ? input.read(b, len, want, pos) : 0;
      if (n === 0) {
        // The snapshot ends inside the line: an unterminated final line, on the exact path.
        if (len > maxRow) {
          this.longPrefix = b.subarray(0, len);
          return -1;
        }
        const lineNo = this.lineNo++;
        this.lastLineStart = start;
        this.lastLineTerminated = false;
        const line = b.slice(0, len);
        this.exactLine(line, lineNo, this.gated(line));
        return pos;
      }
      const t = terminatorIn(b, len, len + n);
      len += n;
      pos += n;
      if (t < 0) continue;
      if (t > maxRow) {
        // Too long for the kernel: the exact path goes on from the terminator's place, with the bytes before it.
        this.longPrefix = b.subarray(0, t);
        return -1;
      }
      let next = start + t + 1;
      if (b[t] === CR) {
        // CRLF: the LF may be in this read or the next byte of the file
        if (t + 1 < len) {
          if (b[t + 1] === LF) next++;
        } else if (next < end) {
          const one = new Uint8Array(1);
          if (input.read(one, 0, 1, next) === 1 && one[0] === LF) next++;
        }
      }
      this.kernelLine(k, start, t);
      return next;
    }
  }

  /**
   * The length of the line starting at file offset `start`, its bytes
   * before `from` known to hold no terminator (read through the read area,
   * which is free while a long line is handled), or -1 when it is longer
   * than `maxRow`. Files only: a stream is not read twice.
   */
  private lineLength(input: OpenInput, from: number, start: number, maxRow: number): number {
    const b = this.mem;
    const end = this.task.end;
    for (let pos = from; ; ) {
      if (pos - start > maxRow) return -1;
      const n = pos < end ? input.read(b, 0, Math.min(this.readCap, end - pos), pos) : 0;
      if (n === 0) return pos - start;
      const t = terminatorIn(b, 0, n);
      if (t >= 0) return pos + t - start > maxRow ? -1 : pos + t - start;
      pos += n;
    }
  }

  /** A big kernel with a read area of `cap` bytes, holding the first `keep` bytes of `old`'s. */
  private newBigKernel(cap: number, old: VerifyKernel | null, keep: number): VerifyKernel {
    // One line a call: room for one leaf.
    const k = new VerifyKernel(cap, 1, this.rowText !== null ? TEXT_LINES : null);
    if (old !== null && keep > 0) k.lines.set(old.lines.subarray(0, keep), 0);
    this.bigKernel = k;
    return k;
  }

  /**
   * The line k.lines[0, len) starting at file offset `start` (this.fileBase),
   * terminated: the kernel takes it as the next row (linked from this
   * range's previous hash), or the exact path decides it.
   */
  private kernelLine(k: VerifyKernel, start: number, len: number): void {
    const b = k.lines;
    b[len] = LF; // its terminator (a CR or CRLF in the file: one line all the same)
    b[len + 1] = LF; // the sentinel
    k.prev.set(this.prev);
    if (this.takeKernelRows(k, 0, len + 1) > 0) {
      this.prev.set(k.prev);
      return;
    }
    const lineNo = this.lineNo++;
    this.lastLineStart = start;
    this.lastLineTerminated = true;
    const line = b.subarray(0, len);
    this.exactLine(line, lineNo, this.gated(line));
  }

  private longLineDone(start: number, bytes: Uint8Array, terminated: boolean): void {
    const lineNo = this.lineNo++;
    this.lastLineStart = start;
    this.lastLineTerminated = terminated;
    if (bytes.length === 0) return;
    this.exactLine(bytes, lineNo, this.gated(bytes));
  }

  /** Process the complete lines of mem[0, dataEnd); at the end also the final fragment. Returns bytes consumed. */
  private lines(dataEnd: number, atEnd: boolean): number {
    const b = this.mem;
    b[dataEnd] = LF; // sentinel: stops every scanning loop
    const hasCR = b.subarray(0, dataEnd).indexOf(CR) >= 0;
    const kernel = this.kernel;
    let p = 0;
    for (;;) {
      if (p >= dataEnd) break;
      if (kernel !== null) {
        const q = this.takeKernelRows(kernel, p, dataEnd);
        if (q > p) {
          p = q;
          continue;
        }
      }
      // The line at p, which the kernel did not take (or there is no kernel): the exact path.
      if (!hasCR) {
        const q = b.indexOf(LF, p);
        if (q >= dataEnd) break;
        this.line(p, q, true);
        p = q + 1;
        continue;
      }
      // Universal newlines: LF, CR or CRLF ends a line.
      let c = p;
      while (b[c] !== LF && b[c] !== CR) c++;
      if (c >= dataEnd) break;
      if (b[c] === CR && c + 1 === dataEnd && !atEnd) break; // a CRLF may straddle two reads
      this.line(p, c, true);
      p = b[c] === CR && c + 1 < dataEnd && b[c + 1] === LF ? c + 2 : c + 1;
    }
    if (atEnd && p < dataEnd) {
      // A final fragment: a physical line only at the snapshot end (Python
      // reads it as the last line); elsewhere the file changed under us,
      // and it is still the best reading of what is there.
      this.line(p, dataEnd, false);
      p = dataEnd;
    }
    return p;
  }

  /**
   * The kernel takes the rows it verifies from the line start `p`: a
   * range's first row alone (linked to its own stored prev_hash; with
   * `guessBase` its plain stored index is taken as its position), then the
   * following rows in bulk; past a failure it only counts rows. Returns the
   * offset of the first row it did not take.
   */
  private takeKernelRows(k: VerifyKernel, p: number, dataEnd: number): number {
    if (this.failure !== null) {
      const q = k.verify(p, dataEnd, 0, KernelMode.Classify);
      this.taken(k, k.rows);
      return q;
    }
    const tree = this.task.tree && !this.task.linksOnly;
    const text = this.rowText !== null && k.textAt !== 0 && !this.task.linksOnly ? KernelMode.Text : 0;
    // a sink that reads each row's fields is handed each row as it is taken (kernelRow)
    const each = text !== 0 && this.eachRow(k) ? KernelMode.Each : 0;
    const gate = this.mutationGate !== null ? KernelMode.Gate : 0;
    const links = (this.task.linksOnly ? KernelMode.Links : tree ? KernelMode.Leaves : KernelMode.Chain) | text | each | gate;
    if (this.rows === 0) {
      const q = k.verify(p, dataEnd, this.base, KernelMode.First | links | (this.task.guessBase ? KernelMode.Guess : 0));
      if (text !== 0) this.handText(k);
      if (k.rows === 0) return p;
      if (gate !== 0) this.kernelGated(k);
      const f = k.firstRow();
      const b = k.lines;
      if (f.guessed) this.base = Number(latin1.decode(b.subarray(f.indexStart, f.indexEnd)));
      this.first = {
        prev: latin1.decode(b.subarray(f.prev, f.prev + 64)),
        eventType: JSON.parse(latin1.decode(b.subarray(f.typeStart, f.typeEnd))) as string,
        payloadHash: this.task.linksOnly ? null : latin1.decode(k.payloadHex),
        storedHash: latin1.decode(b.subarray(f.hash, f.hash + 64)),
        profile: DEFAULT_PROFILE.name,
        profileError: null,
        line: this.lineNo,
      };
      if (tree) this.kernelLeaves(k, p, 1);
      this.taken(k, 1);
      this.kernelRows++;
      p = q;
      if (p >= dataEnd) return p;
    }
    const q = k.verify(p, dataEnd, this.base + this.rows, links);
    if (text !== 0) this.handText(k);
    if (gate !== 0) this.kernelGated(k);
    if (tree) this.kernelLeaves(k, p, k.rows);
    this.kernelRows += k.rows;
    this.taken(k, k.rows);
    return q;
  }

  /**
   * The provider-state gate's findings in the rows the kernel's last call
   * took (before they are counted as taken: the range's row of each is
   * this.rows plus its place among them): the ones it checked, and the
   * rows it left to the gate's own reading.
   */
  private kernelGated(k: VerifyKernel): void {
    const gate = this.mutationGate!;
    gate.counted(k.gateRows());
    for (let i = 0, n = k.gateEntries(); i < n; i++) {
      const local = this.rows + k.gateEntry(i, 0);
      if (k.gateEntry(i, 1) === GateCode.Mismatch) gate.mismatch(local);
      else gate.row(k.lines.subarray(k.gateEntry(i, 2), k.gateEntry(i, 3)), local);
    }
  }

  /** Whether `k` hands each row it takes to the rowText's kernelRow (its handler set up on first use). */
  private eachRow(k: VerifyKernel): boolean {
    if (this.rowText!.kernelRow === undefined) return false;
    k.onRow ??= (s, e) => this.rowText!.kernelRow!(k, s, e);
    return true;
  }

  /** The `n` rows the kernel just took from the line start `p`: their leaves, and the kept row if it is one of them. */
  private kernelLeaves(k: VerifyKernel, p: number, n: number): void {
    const sink = this.leafSink()!;
    for (let i = 0; i < n; i++) sink.add(k.leaves, 32 * i);
    const want = this.task.tree!.keepRow;
    const first = this.base + this.rows;
    if (want === null || want < first || want >= first + n) return;
    // Each row the kernel takes is one line ending in LF, CR or CRLF.
    const b = k.lines;
    let s = p;
    for (let i = first; ; i++) {
      let e = s;
      while (b[e] !== LF && b[e] !== CR) e++;
      if (i === want) {
        this.keep(want, b.subarray(s, e));
        return;
      }
      s = b[e] === CR && b[e + 1] === LF ? e + 2 : e + 1;
    }
  }

  /** The texts of the rows the kernel's last call took, to rowText; the next call's go to the text area's start. */
  private handText(k: VerifyKernel): void {
    if (k.rows > 0) this.rowText!.kernelText(k.u8, k.textAt, k.textEndNow(), k.rows);
    k.textFrom();
  }

  /** `n` rows (each one physical line) taken by the kernel's last call. */
  private taken(k: VerifyKernel, n: number): void {
    if (n === 0) return;
    this.rows += n;
    this.lineNo += n;
    this.lastLineStart = this.fileBase + k.lastRow;
    this.lastLineTerminated = true;
  }

  /** One physical line mem[s, e) (mem[e] is a terminator or the sentinel) the kernel did not take as it is: re-spaced, or on the exact path. */
  private line(s: number, e: number, terminated: boolean): void {
    if (s !== e && this.kernel !== null && this.respacedRow(s, e)) {
      this.lastLineStart = this.fileBase + s;
      this.lastLineTerminated = terminated;
      this.declined(this.lastLineStart);
      return;
    }
    const lineNo = this.lineNo++;
    this.lastLineStart = this.fileBase + s;
    this.lastLineTerminated = terminated;
    if (s === e) return; // blank
    const line = this.mem.subarray(s, e);
    this.exactLine(line, lineNo, this.gated(line));
  }

  /**
   * The line mem[s, e), which the kernel declined, re-spaced as Python's
   * writer spaces a row (codec/writer-spacing.ts: a journal rewritten by
   * `jq -c`, say) and offered to the kernel again, in the big kernel's read
   * area: true when the kernel took it, as a row it took in the file. Its
   * values are the line's, so every hash, verdict and text is; where the
   * line's own bytes are kept (a proof's row), they are the file's.
   */
  private respacedRow(s: number, e: number): boolean {
    const len = this.respacer.respace(this.mem, s, e);
    if (len < 0) return false;
    let k = this.bigKernel;
    if (k === null || (this.rowText !== null && k.textAt === 0) || k.readCap < len + 2) {
      const maxRow = Math.min(KERNEL_MAX_ROW, this.task.maxRowBytes ?? JOURNAL_MAX_ROW_BYTES);
      if (len > maxRow) return false;
      k = this.newBigKernel(kernelCapFor(len, maxRow, this.readCap), null, 0);
    }
    this.respacer.copyTo(k.lines, 0);
    const b = k.lines;
    b[len] = LF; // its terminator
    b[len + 1] = LF; // the sentinel
    k.prev.set(this.prev);
    if (this.takeKernelRows(k, 0, len + 1) === 0) return false;
    this.prev.set(k.prev);
    this.respacedRows++;
    // a row a call: what a rowText sink makes of each call (a view, its closures) is such a row's garbage
    this.respacer.taken(e - s);
    if (this.task.tree) this.keep(this.base + this.rows - 1, this.mem.subarray(s, e));
    return true;
  }

  /** Whether the provider-state gate must see the line `bytes` (one that may hold a mutation row, while the range has no failure). */
  private gated(bytes: Uint8Array): boolean {
    return this.mutationGate !== null && this.failure === null && mayHoldMutation(bytes);
  }

  /** A line on the exact path; `gated`: it may hold a mutation row, gated once it is taken as a row. */
  private exactLine(bytes: Uint8Array, lineNo: number, gated: boolean): void {
    const local = this.rows;
    this.classifyExact(bytes, lineNo);
    if (gated && this.rows > local) this.gateRow(bytes, local);
  }

  /** The range's row `local`, in `bytes`, may be a mutation row: the gate sees it (nothing past a failure matters). */
  private gateRow(bytes: Uint8Array, local: number): void {
    if (this.failure === null) this.mutationGate!.row(bytes, local);
  }

  private classifyExact(bytes: Uint8Array, lineNo: number): void {
    // The row is checked and dropped before its bytes change (views, no copy); its long strings are hashed from their bytes.
    const v = classifyLine(bytes, this.task.maxRowBytes ?? JOURNAL_MAX_ROW_BYTES, true, RAW_STRING_MIN);
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
    this.keep(this.base + this.rows, bytes);
    this.checkExact(v.row, this.rows, this.base + this.rows, lineNo);
    if (this.rowText !== null && this.failure === null) this.rowText.exactRow(bytes, lineNo, v.row);
  }

  /** checkRow against the in-range previous hash (a range's first row: its own stored prev_hash). */
  private checkExact(row: JournalRow, local: number, index: number, line: number): void {
    this.rows++;
    this.exactRows++;
    // (every caller set the line's start before it handed the line to the exact path)
    this.declined(this.lastLineStart);
    const c = checkRow(row, local === 0 ? null : this.lastHashString(), index, this.task.linksOnly);
    if (local === 0) {
      this.first = { prev: c.storedPrev, eventType: c.eventType, payloadHash: c.payloadHash, storedHash: c.storedHash, profile: c.profile.name, profileError: c.profileError, line };
    }
    if (c.failure !== null) {
      this.fail({ local, line, kind: c.failure.kind, expected: c.expected, actual: c.storedHash, message: c.failure.message });
      return;
    }
    // Passed: the stored hash is 64 lowercase hex (it equals a computed digest, or was format-checked).
    const h = c.storedHash;
    for (let i = 0; i < 64; i++) this.prev[i] = h.charCodeAt(i);
    const sink = this.leafSink();
    if (sink !== null) sink.add(Buffer.from(h, "hex"), 0);
  }

  /** The row at file offset `at` was not taken by the kernel as written. */
  private declined(at: number): void {
    if (this.declinedAt === null) return;
    if (this.declinedAt.length < DECLINED_AT_KEPT) this.declinedAt.push(at);
    else this.declinedAt = null;
  }

  /** Record the range's first failure with the head of the prefix verified before it (the scanner still holds it). */
  private fail(f: Omit<RangeFailure, "prefixHash">): void {
    this.failure = { ...f, prefixHash: f.local === 0 ? null : this.lastHashString() };
  }

  private lastHashString(): string {
    return latin1.decode(this.prev);
  }
}
