import { copyTo } from "../codec/bytes.ts";
import { loadsLine } from "../pyjson/row.ts";
import { pyInt as pyIntOf, pyRepr, pyStr, pyPrefix } from "../pyjson/python.ts";
import type { PyObject, PyValue } from "../pyjson/types.ts";
import { GENESIS_HASH, stepHash } from "./hash.ts";
import { CanonicalRow } from "./canonical-row.ts";
import { StepKey } from "./row-keys.ts";
import { KERNEL_PUBLISH, StepKernel, stepKernelEnabled } from "./kernel.ts";
import { OverlongLineError, type BulkProbe } from "../fsutil/lines.ts";
import { HEX_BYTES, LOWER_HEX_VALUE } from "../hex.ts";

/**
 * The chain walk shared by the on-disk verifier (§1.5) and the receipt
 * verifier (§5b). Every non-blank line is checked for seq, prev_hash link
 * and recomputed step hash; errors do not stop the walk, and the running
 * head follows the *stored* step hash (as the reference does).
 *
 * The recomputation hashes the row's own (stored) `prev_hash`, so a broken
 * link is reported once as a prev_hash mismatch and a step_hash mismatch
 * means the row's hashed fields were edited.
 */
/** The verifiers' walks (§5b): they differ in messages and in an undecodable line. */
export type WalkDialect = "disk" | "receipt";

/** Kept error lines are capped so a garbage multi-gigabyte file verifies in bounded memory. */
export const MAX_KEPT_ERRORS = 1000;

const latin1 = new TextDecoder("latin1");

export class UndecodableLineError extends Error {
  constructor(readonly lineNo: number) {
    super(`journal line ${lineNo} is not valid UTF-8`);
  }
}
export { OverlongLineError } from "../fsutil/lines.ts";

/** A line of the walk, with the head and the steps before it. */
export interface WalkMark {
  line: number;
  head: string;
  steps: number;
}

export interface WalkMarks {
  /**
   * The first entry (a row with a step_hash, as the tolerant reader takes
   * rows: steps/reader.ts entryOf) whose prev_hash is not the last entry's
   * step_hash, or whose hash does not check out; with the head and the
   * entries before it.
   */
  firstEntryBreak: WalkMark | null;
}

export interface WalkResult {
  head_hash: string;
  steps: number;
  errors: string[];
}

const ENC = new TextEncoder();
const P_EFFORT = ENC.encode('{"effort":');
const P_INPUT_FIRST = ENC.encode('{"input_hash":');
const P_INPUT = ENC.encode(',"input_hash":');
const P_MODEL = ENC.encode(',"model":');
const P_PREV = ENC.encode(',"prev_hash":');
const P_PROMPT = ENC.encode(',"prompt":');
const P_TOOL_CALL = ENC.encode(',"tool_call":');
const P_TOOL_RESULT = ENC.encode(',"tool_result":');
const P_NULL = ENC.encode("null");
const P_CLOSE = ENC.encode("}");
const P_OPEN = ENC.encode("{");
const P_COMMA = ENC.encode(",");

const ARENA_READ = 1 << 20;
/** Rows this long skip the fast path (see `line`). */
const HUGE_ROW_BYTES = 1 << 20;
const ARENA_SCRATCH = 64 * 1024;
/**
 * Publish mode's output area; a row whose line does not fit goes the exact
 * way. Small: a larger kernel memory cost more resident memory than its own
 * size on journals the exact path reads (the collector seems to count it as
 * heap and collect later).
 */
const PUBLISH_AREA = 128 * 1024;
const utf8Loose = new TextDecoder("utf-8");
/** The most line starts left to the JavaScript path between two refusals of the kernel. */
const KERNEL_MAX_BACKOFF = 1024;

/** The 64 lowercase hex digits of the 32-byte `digest`, as bytes at dst[0, 64). */
function putHex(digest: Uint8Array, dst: Uint8Array): void {
  for (let i = 0; i < 32; i++) {
    const b = digest[i]!;
    dst[2 * i] = HEX_BYTES[b >> 4]!;
    dst[2 * i + 1] = HEX_BYTES[b & 15]!;
  }
}

/** src[s, e) is the 64 lowercase hex digits of the 32-byte `digest`. */
function isHexOf(digest: Uint8Array, src: Uint8Array, s: number, e: number): boolean {
  if (e - s !== 64) return false;
  for (let i = 0, p = s; i < 32; i++, p += 2) {
    const b = digest[i]!;
    if (src[p] !== HEX_BYTES[b >> 4] || src[p + 1] !== HEX_BYTES[b & 15]) return false;
  }
  return true;
}

export class ChainWalker implements BulkProbe {
  steps = 0;
  private expected = 0;
  private readonly kept: string[] = [];
  private dropped = 0;
  private scratch: Uint8Array = new Uint8Array(4096);
  private scratchLen = 0;
  /** Hash input views of the scratch by length (a view per row costs more than the hash of a short row). */
  private views: (Uint8Array | undefined)[] = [];
  /**
   * With `readBuffer()`: one allocation holding the read area [0, ARENA_READ)
   * and the scratch after it, so spans of rows read into it are copied into
   * the pre-image with `copyWithin` instead of through a view each. With
   * the kernel it lies in the kernel's memory (not at offset 0 of it).
   */
  private arena: Uint8Array | null = null;
  /** The WebAssembly kernel whose memory holds the arena (when enabled): it takes canonical rows in bulk. */
  private kernel: StepKernel | null = null;
  /** Lines taken by the last `take`, and how many of them ended in CR LF (the rest in LF). */
  taken = 0;
  takenCrlfs = 0;
  /**
   * The kernel's mode (kernel.ts KERNEL_DICT_FORM | KERNEL_REPORT), set
   * before the first `readBuffer()`: readers that reuse taken rows' bytes
   * have the kernel take only the rows they may reuse.
   */
  kernelMode = 0;
  /** With KERNEL_RENDER: bytes of the kernel's memory set aside for its rendered entries (`kernelRender`). */
  kernelRenderBytes = 0;
  /** With KERNEL_RECORD or KERNEL_REPLAY: bytes of the kernel's memory for span records. */
  kernelRecordBytes = 0;
  /**
   * Line starts to leave to the JavaScript path before asking the kernel
   * again, and the next such pause: a kernel that takes nothing at one line
   * start after another (a journal whose chain is broken, or not canonical)
   * is asked ever more rarely instead of scanning every row twice.
   */
  private kernelSkip = 0;
  private kernelBackoff = 0;
  /** The last view `fast` saw, whether it lies in the arena (with the scratch), and its offset there. */
  private seenView: Uint8Array | null = null;
  private seenInArena = false;
  private seenOffset = 0;
  private readonly prefix: string;
  private readonly notObject: string;
  /** The running head as bytes (compared without building strings on the hot path). */
  private headBytes = new Uint8Array(64).fill(0x30);
  private headLen = 64;
  private headText: string | null = GENESIS_HASH;
  /**
   * When set, the head is the lowercase hex of `headDigest` (a canonical row
   * whose stored step_hash equals its recomputed digest): the digest buffers
   * are swapped instead of copying the 64 hex bytes.
   */
  private headIsDigest = false;
  private headDigest = new Uint8Array(32);
  private digest = new Uint8Array(32);
  private readonly digestHex = new Uint8Array(64);
  /** The canonical-row scanner whose spans `fast` reads (a reader of the same lines may share it: see dictFormLine). */
  readonly canonical = new CanonicalRow();
  /** For a `LineSplitter`: claims canonical rows whole, so they are scanned once. */
  readonly probe = (buf: Uint8Array, start: number, end: number, lineNo: number): boolean =>
    end - start < HUGE_ROW_BYTES && this.canonical.scanRange(buf, start, end) && this.fast(buf, lineNo);

  constructor(
    private readonly dialect: WalkDialect,
    private readonly maxLineBytes: number,
  ) {
    this.prefix = dialect === "disk" ? "line " : "journal line ";
    this.notObject = dialect === "disk" ? "entry is not a JSON object" : "not a JSON object";
  }

  get head(): string {
    if (this.headText === null) {
      this.headText = this.headIsDigest ? this.hexOf(this.headDigest) : utf8Loose.decode(this.headBytes.subarray(0, this.headLen));
    }
    return this.headText;
  }

  private setHeadBytes(src: Uint8Array, s: number, e: number): void {
    this.headIsDigest = false;
    const n = e - s;
    if (n > this.headBytes.length) this.headBytes = new Uint8Array(n);
    const h = this.headBytes;
    for (let i = 0; i < n; i++) h[i] = src[s + i]!;
    this.headLen = n;
    this.headText = null;
  }

  private setHeadText(text: string): void {
    const bytes = new TextEncoder().encode(text);
    this.setHeadBytes(bytes, 0, bytes.length);
    this.headText = text;
  }

  private headEquals(src: Uint8Array, s: number, e: number): boolean {
    if (this.headIsDigest) return isHexOf(this.headDigest, src, s, e);
    if (e - s !== this.headLen) return false;
    const h = this.headBytes;
    for (let i = 0; i < this.headLen; i++) if (h[i] !== src[s + i]) return false;
    return true;
  }

  /**
   * Entries walked (the tolerant reader's: rows with a step_hash), and the
   * last one's stored step_hash (null: none), counted as the walk reads
   * them (the verifier's count and head are the reader's without a second
   * parse of a line).
   */
  entries = 0;
  private lastEntryIsHead = false;
  private lastEntryText: string | null = null;

  get lastEntryHash(): string | null {
    return this.lastEntryIsHead ? this.head : this.lastEntryText;
  }

  get errorCount(): number {
    return this.kept.length + this.dropped;
  }

  /**
   * Where replay debug's first mismatch may start its scan. The tolerant
   * reader's chain is this walk's but for rows without a step_hash: it
   * passes over them, where the walk takes their empty hash as its head.
   * So the two differ only at such a row and at the entry after it, and
   * the walk follows the reader's chain as it goes instead of a second walk.
   */
  readonly marks: WalkMarks = { firstEntryBreak: null };

  error(lineNo: number, detail: string): void {
    if (this.noted()) this.kept.push(`${this.prefix}${lineNo}: ${detail}`);
  }

  /**
   * Note an error: whether its text is kept. Past MAX_KEPT_ERRORS it is
   * only counted, so the hot reporters make no text for it (a broken chain
   * has an error on every row after the break).
   */
  private noted(): boolean {
    if (this.kept.length < MAX_KEPT_ERRORS) return true;
    this.dropped++;
    return false;
  }

  /** The reader's head before this row: the last entry's step_hash (the genesis hash before any). */
  private get entriesHead(): string {
    return this.lastEntryIsHead ? this.head : (this.lastEntryText ?? GENESIS_HASH);
  }

  /** An entry at `lineNo` breaks the reader's chain (before the walk's head and counts move past it). */
  private entryBreak(lineNo: number): void {
    this.marks.firstEntryBreak = { line: lineNo, head: this.entriesHead, steps: this.entries };
  }

  result(): WalkResult {
    const errors = [...this.kept];
    if (this.dropped > 0) errors.push(`... and ${this.dropped} more error(s) not shown`);
    return { head_hash: this.head, steps: this.steps, errors };
  }

  /** Feed one physical line (null = longer than the cap). */
  line(bytes: Uint8Array | null, lineNo: number): void {
    if (bytes === null) throw new OverlongLineError(lineNo, this.maxLineBytes);
    if (bytes.length === 0) return;
    // A huge row takes the exact path, which hashes it from its bytes in chunks
    // (src/pyjson/row.ts); the fast path would assemble its whole pre-image.
    if (bytes.length < HUGE_ROW_BYTES && this.canonical.scanRow(bytes) && this.fast(bytes, lineNo)) return;
    this.general(bytes, lineNo);
  }

  /**
   * A buffer to read input into (chunks handed to the splitter as views of
   * it): it shares memory with the pre-image scratch, and with the kernel,
   * whose memory it lies in, so rows are scanned where they were read.
   * Optional; any chunk works, this one only spares copies a view per span
   * and lets the kernel (`take`) run.
   */
  readBuffer(): Uint8Array {
    if (this.arena === null) {
      // Publish mode writes the lines to an area of their own, handed over whenever it fills.
      const publish = this.kernelMode & KERNEL_PUBLISH ? PUBLISH_AREA : 0;
      const extra = { publish, render: this.kernelRenderBytes, records: this.kernelRecordBytes };
      this.kernel = stepKernelEnabled() ? new StepKernel(ARENA_READ + ARENA_SCRATCH, ARENA_READ, extra) : null;
      this.kernel?.setMode(this.kernelMode);
      this.arena = this.kernel?.arena ?? new Uint8Array(ARENA_READ + ARENA_SCRATCH);
      this.scratch = this.arena.subarray(ARENA_READ);
      this.scratchLen = 0;
      this.views = [];
      this.seenView = null;
    }
    return this.arena.subarray(0, ARENA_READ);
  }

  /**
   * Done reading: the kernel's memory goes back for the next walker (see
   * KernelArena.release), so no buffer `readBuffer()` returned, nor any view
   * of the kernel, may be used again. The walk's result and head stay; a
   * later `readBuffer()` starts a new arena.
   */
  release(): void {
    const k = this.kernel;
    if (k === null) return;
    this.kernel = null;
    this.arena = null;
    this.scratch = new Uint8Array(4096);
    this.scratchLen = 0;
    this.views = [];
    this.seenView = null;
    k.release();
  }

  /** The kernel `take` runs (after `readBuffer()`, when enabled): its spans and `onRow` serve report mode. */
  get stepKernel(): StepKernel | null {
    return this.kernel;
  }

  /**
   * For a `LineSplitter` (BulkProbe): the kernel takes the canonical rows of
   * a chunk read into the arena that check out, from a line start, and
   * stops at the first it does not; the walk then stands as if `fast` had
   * taken them (no errors, so only the counts and the head move).
   */
  take(buf: Uint8Array, start: number, end: number, maxLineBytes: number): number {
    this.taken = 0;
    this.takenCrlfs = 0;
    const k = this.kernel;
    if (k === null) return start;
    if (this.kernelSkip > 0) {
      this.kernelSkip--;
      return start;
    }
    if (!this.headToKernel(k.head)) return start;
    let to: number;
    if (buf.buffer === k.buffer) {
      to = k.verify(buf, start, end, maxLineBytes, this.expected);
    } else {
      // A chunk read elsewhere (a gzip receipt's inflated output): copied
      // into the arena's read area, one memcpy, for the kernel to take rows
      // from; rows cut at the copy's end are left to the splitter as usual.
      const n = Math.min(end - start, ARENA_READ);
      const area = this.arena!;
      area.set(buf.subarray(start, start + n), 0);
      to = start + k.verify(area, 0, n, maxLineBytes, this.expected);
    }
    if (to === start) {
      this.kernelSkip = this.kernelBackoff;
      this.kernelBackoff = Math.min(Math.max(1, 2 * this.kernelBackoff), KERNEL_MAX_BACKOFF);
      return start;
    }
    this.kernelBackoff = 0;
    this.taken = k.rows;
    this.takenCrlfs = k.crlfs;
    this.steps += k.rows;
    this.expected += k.rows;
    this.entries += k.rows;
    this.lastEntryIsHead = true;
    this.setHeadBytes(k.head, 0, 64);
    return to;
  }

  /**
   * The head where the kernel compares it, as 64 lowercase hex digits; false
   * for any other head: a prev_hash matching it byte for byte might hold an
   * escape, which the fast path refuses, so rows linking to it (rare) are
   * left to the JavaScript path.
   */
  private headToKernel(dst: Uint8Array): boolean {
    if (this.headIsDigest) {
      putHex(this.headDigest, dst);
      return true;
    }
    if (this.headLen !== 64) return false;
    const h = this.headBytes;
    for (let i = 0; i < 64; i++) {
      const c = h[i]!;
      if (LOWER_HEX_VALUE[c]! < 0) return false;
      dst[i] = c;
    }
    return true;
  }

  private put(src: Uint8Array, s = 0, e = src.length): void {
    const n = e - s;
    if (this.scratchLen + n > this.scratch.length) {
      const grown = new Uint8Array(Math.max(this.scratch.length * 2, this.scratchLen + n));
      grown.set(this.scratch.subarray(0, this.scratchLen));
      this.scratch = grown;
      this.views = [];
      this.seenView = null;
    }
    this.scratchLen = copyTo(src, s, e, this.scratch, this.scratchLen);
  }

  /** The assembled pre-image as an exact-length view (cached by length). */
  private preimage(): Uint8Array {
    const n = this.scratchLen;
    let v = this.views[n];
    if (v === undefined) {
      v = new Uint8Array(this.scratch.buffer, this.scratch.byteOffset, n);
      if (n <= ARENA_SCRATCH) this.views[n] = v;
    }
    return v;
  }

  private putSpan(line: Uint8Array, key: StepKey): void {
    const { spanStart, spanEnd } = this.canonical;
    if (spanStart[key]! < 0) this.put(P_NULL);
    else this.put(line, spanStart[key], spanEnd[key]);
  }

  /** The pre-image assembled key by key (absent keys hash as null). */
  private putPieces(line: Uint8Array, hasEffort: boolean): void {
    if (hasEffort) {
      this.put(P_EFFORT);
      this.putSpan(line, StepKey.Effort);
      this.put(P_INPUT);
    } else {
      this.put(P_INPUT_FIRST);
    }
    this.putSpan(line, StepKey.InputHash);
    this.put(P_MODEL);
    this.putSpan(line, StepKey.Model);
    this.put(P_PREV);
    this.putSpan(line, StepKey.PrevHash);
    this.put(P_PROMPT);
    this.putSpan(line, StepKey.Prompt);
    this.put(P_TOOL_CALL);
    this.putSpan(line, StepKey.ToolCall);
    this.put(P_TOOL_RESULT);
    this.putSpan(line, StepKey.ToolResult);
    this.put(P_CLOSE);
  }

  /** The lowercase hex of a digest, as a string. */
  private hexOf(digest: Uint8Array): string {
    putHex(digest, this.digestHex);
    return latin1.decode(this.digestHex);
  }

  /** The pre-image as two runs of the line, through the scratch (a row outside the arena). */
  private putRuns(line: Uint8Array, s1: number, e1: number, s2: number, e2: number): void {
    this.put(P_OPEN);
    this.put(line, s1, e1);
    this.put(P_COMMA);
    this.put(line, s2, e2);
    this.put(P_CLOSE);
  }

  // The error reports of `fast`, kept out of it: the hot function stays small, so it is compiled sooner.
  private seqMismatch(lineNo: number, seq: number): void {
    if (this.noted()) this.kept.push(`${this.prefix}${lineNo}: seq mismatch (expected ${this.expected}, got ${seq})`);
  }

  private prevMismatch(line: Uint8Array, lineNo: number, pS: number, pE: number): void {
    if (!this.noted()) return;
    const prev = latin1.decode(line.subarray(pS + 1, pE - 1));
    this.kept.push(`${this.prefix}${lineNo}: prev_hash mismatch (expected ${pyPrefix(this.head, 16)}..., got ${pyPrefix(prev, 16)}...)`);
  }

  /** The stored step_hash is not the digest (in `this.digest`): report it; the stored hash becomes the head. */
  private stepMismatch(line: Uint8Array, lineNo: number, sS: number, sE: number): void {
    if (this.noted()) {
      const recomputed = this.hexOf(this.digest);
      const stored = latin1.decode(line.subarray(sS + 1, sE - 1));
      this.kept.push(`${this.prefix}${lineNo}: step_hash mismatch (expected ${pyPrefix(recomputed, 16)}..., got ${pyPrefix(stored, 16)}...)`);
    }
    this.setHeadBytes(line, sS + 1, sE - 1);
  }

  /**
   * Canonical row (just scanned; its spans are offsets into `line`): hash
   * from byte spans. False = let the general path decide.
   */
  private fast(line: Uint8Array, lineNo: number): boolean {
    const { spanStart, spanEnd, plainString, keyStart } = this.canonical;
    const seqS = spanStart[StepKey.Seq]!;
    const seqE = spanEnd[StepKey.Seq]!;
    if (seqS < 0 || seqE - seqS > 15) return false;
    let seq = 0;
    let neg = false;
    for (let i = seqS; i < seqE; i++) {
      const c = line[i]!;
      if (c >= 0x30 && c <= 0x39) seq = seq * 10 + (c - 0x30);
      else if (i === seqS && c === 0x2d) neg = true;
      else return false;
    }
    if (neg) seq = -seq;
    const pS = spanStart[StepKey.PrevHash]!;
    const pE = spanEnd[StepKey.PrevHash]!;
    const sS = spanStart[StepKey.StepHash]!;
    const sE = spanEnd[StepKey.StepHash]!;
    if (plainString[StepKey.PrevHash] !== 1 || plainString[StepKey.StepHash] !== 1 || plainString[StepKey.InputHash] !== 1) return false;

    this.scratchLen = 0;
    const effortS = spanStart[StepKey.Effort]!;
    const hasEffort = effortS >= 0 && !(spanEnd[StepKey.Effort]! - effortS === 4 && line[effortS] === 0x6e);
    // A canonical row holds the hashed keys in the pre-image's own order;
    // when no other key sits between them the pre-image is two byte ranges
    // of the line: [effort,] input_hash..prompt and tool_call..tool_result.
    const runStart = hasEffort ? keyStart[StepKey.Effort]! : keyStart[StepKey.InputHash]!;
    if (
      spanStart[StepKey.Model]! >= 0 &&
      spanStart[StepKey.Prompt]! >= 0 &&
      spanStart[StepKey.ToolCall]! >= 0 &&
      spanStart[StepKey.ToolResult]! >= 0 &&
      (!hasEffort || keyStart[StepKey.InputHash] === spanEnd[StepKey.Effort]! + 1) &&
      keyStart[StepKey.Model] === spanEnd[StepKey.InputHash]! + 1 &&
      keyStart[StepKey.PrevHash] === spanEnd[StepKey.Model]! + 1 &&
      keyStart[StepKey.Prompt] === spanEnd[StepKey.PrevHash]! + 1 &&
      keyStart[StepKey.ToolResult] === spanEnd[StepKey.ToolCall]! + 1
    ) {
      const e1 = spanEnd[StepKey.Prompt]!;
      const s2 = keyStart[StepKey.ToolCall]!;
      const e2 = spanEnd[StepKey.ToolResult]!;
      const n1 = e1 - runStart;
      const n = n1 + (e2 - s2) + 3;
      if (line !== this.seenView) {
        // Once per chunk: is it a view of the arena (then copyWithin needs no views)?
        this.seenView = line;
        this.seenOffset = line.byteOffset - (this.arena?.byteOffset ?? 0);
        this.seenInArena =
          this.arena !== null &&
          this.scratch.buffer === this.arena.buffer &&
          line.buffer === this.arena.buffer &&
          this.seenOffset >= 0 &&
          this.seenOffset + line.length <= ARENA_READ;
      }
      if (this.seenInArena && n <= ARENA_SCRATCH) {
        const a = this.arena!;
        const off = this.seenOffset;
        a[ARENA_READ] = 0x7b;
        a.copyWithin(ARENA_READ + 1, off + runStart, off + e1);
        a[ARENA_READ + 1 + n1] = 0x2c;
        a.copyWithin(ARENA_READ + 2 + n1, off + s2, off + e2);
        a[ARENA_READ + n - 1] = 0x7d;
        this.scratchLen = n;
      } else {
        this.putRuns(line, runStart, e1, s2, e2);
      }
    } else {
      this.putPieces(line, hasEffort);
    }
    // One view of the scratch (exact length) and the digest straight into a reusable buffer.
    Bun.SHA256.hash(this.preimage(), this.digest);
    const digest = this.digest;

    const linked = this.headEquals(line, pS + 1, pE - 1);
    // The stored hash against the digest, hex digit by hex digit (no strings unless they differ).
    const hashed = isHexOf(digest, line, sS + 1, sE - 1);
    // (after a row without a step_hash the reader's head is not the walk's)
    if (this.marks.firstEntryBreak === null && !(hashed && (this.lastEntryIsHead ? linked : utf8Loose.decode(line.subarray(pS + 1, pE - 1)) === this.entriesHead))) {
      this.entryBreak(lineNo);
    }
    if (seq !== this.expected) this.seqMismatch(lineNo, seq);
    if (!linked) this.prevMismatch(line, lineNo, pS, pE);
    if (!hashed) {
      this.stepMismatch(line, lineNo, sS, sE);
    } else {
      // The stored hash is the digest's hex: keep the digest as the head.
      this.digest = this.headDigest;
      this.headDigest = digest;
      this.headIsDigest = true;
      this.headText = null;
    }
    this.steps++;
    this.expected++;
    this.entries++;
    this.lastEntryIsHead = true;
    return true;
  }

  private check(lineNo: number, seq: number | bigint, seqText: string, prev: string, recomputed: string, stored: string): void {
    if (seq !== this.expected && !(typeof seq === "bigint" && seq === BigInt(this.expected)) && this.noted()) {
      this.kept.push(`${this.prefix}${lineNo}: seq mismatch (expected ${this.expected}, got ${seqText})`);
    }
    if (prev !== this.head && this.noted()) {
      this.kept.push(`${this.prefix}${lineNo}: prev_hash mismatch (expected ${pyPrefix(this.head, 16)}..., got ${pyPrefix(prev, 16)}...)`);
    }
    if (recomputed !== stored && this.noted()) {
      this.kept.push(`${this.prefix}${lineNo}: step_hash mismatch (expected ${pyPrefix(recomputed, 16)}..., got ${pyPrefix(stored, 16)}...)`);
    }
    this.setHeadText(stored);
    this.steps++;
    this.expected++;
  }

  /** Any other line: decode, parse with Python semantics, coerce like Python. */
  private general(bytes: Uint8Array, lineNo: number): void {
    // a long line is read without a value tree (src/pyjson/row.ts)
    const v = loadsLine(bytes, true);
    if (v.kind === "undecodable") {
      if (this.dialect === "receipt") throw new UndecodableLineError(lineNo);
      this.error(lineNo, `invalid JSON (line is not valid UTF-8)`);
      return;
    }
    if (v.kind === "blank") return;
    if (v.kind === "error") {
      this.error(lineNo, `invalid JSON (${v.message})`);
      return;
    }
    const row: PyValue = v.value;
    if (!(row instanceof Map)) {
      this.error(lineNo, `${this.notObject}`);
      return;
    }
    const f = rowHashFields(row);
    const rawSeq = row.get("seq");
    const seq = rawSeq === undefined ? -1n : pyIntOf(rawSeq);
    let seqText: string;
    if (seq === null) {
      this.error(lineNo, `seq is not an integer (got ${pyRepr(rawSeq)})`);
    } else {
      // The receipt walker prints str(row.get("seq")); the disk walker the int.
      seqText = this.dialect === "receipt" ? pyStr(rawSeq ?? null) : seq.toString();
    }
    const recomputed = stepHash(f);
    const stored = pyStr(row.get("step_hash"), "");
    const entry = row.has("step_hash");
    if (entry) {
      if (this.marks.firstEntryBreak === null && (f.prev_hash !== this.entriesHead || recomputed !== stored)) this.entryBreak(lineNo);
      this.entries++;
    } else if (this.lastEntryIsHead) {
      // its empty hash becomes the head: the last entry's is kept apart
      this.lastEntryText = this.head;
    }
    if (seq === null) {
      // Not comparable: count it, check the links, and move on.
      this.check(lineNo, this.expected, String(this.expected), f.prev_hash, recomputed, stored);
    } else {
      this.check(lineNo, seq, seqText!, f.prev_hash, recomputed, stored);
    }
    this.lastEntryIsHead = entry;
  }
}

/** The hashed fields of a parsed row with the reference's coercions (missing -> "", null -> "None"). */
export function rowHashFields(row: PyObject) {
  const effort = row.get("effort");
  return {
    prev_hash: pyStr(row.get("prev_hash"), ""),
    input_hash: pyStr(row.get("input_hash"), ""),
    model: row.get("model") ?? null,
    prompt: row.get("prompt") ?? null,
    tool_call: row.get("tool_call") ?? null,
    tool_result: row.get("tool_result") ?? null,
    effort: effort === null || effort === undefined ? null : effort,
  };
}
