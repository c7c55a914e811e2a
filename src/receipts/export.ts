import type { KeyObject } from "node:crypto";
import { closeSync, existsSync, openSync, readSync, statSync, type Stats } from "node:fs";
import { readLineChunks } from "../fsutil/line-chunks.ts";
import { join } from "node:path";
import { BernsteinError, InputError, NegativeError, UsageError } from "../errors/index.ts";
import type { PyValue } from "../pyjson/types.ts";
import { GENESIS_HASH } from "../steps/hash.ts";
import { contentEnd, lineFeedsIn, LineSplitter } from "../fsutil/lines.ts";
import { JOURNAL_MAX_ROW_BYTES } from "../fsutil/input.ts";
import { agentJournalDir, BUCKET_NAME } from "../steps/paths.ts";
import { classifyLine } from "../steps/reader.ts";
import { ChainWalker } from "../steps/walk.ts";
import { CanonicalRow } from "../steps/canonical-row.ts";
import { KERNEL_DICT_FORM, KERNEL_PUBLISH } from "../steps/kernel.ts";
import { TakenRuns } from "../steps/runs.ts";
import { stepKernelEnabled } from "../steps/kernel.ts";
import { fieldSlots, OutHead, startKernelPublish } from "./redact-fast.ts";
import { loadSigningKey, signManifest } from "./keys.ts";
import { buildManifest, manifestBytes } from "./manifest.ts";
import { DEFAULT_REDACT, dictForm, dictFormLine, redactRow, REDACTABLE, rowLine, RowFormError } from "./rows.ts";
import { planReceiptOutput } from "./output.ts";
import { describeLeak, PathLeakScanner, type PathLeak } from "./path-leaks.ts";
import { bytesMember, memberSpan, PlacedTarWriter, writeTarAtomic, type OutMember, type TarWriteOptions } from "./tarwrite.ts";
import { isRemotePath } from "../storage/ref.ts";
import { nextTurn, TurnPacer } from "../fsutil/turn.ts";

export interface ExportOptions {
  sddDir: string;
  agentId: string;
  /** Output path of the receipt (parent dirs are created); see planReceiptOutput for what is refused. */
  out: string;
  signingKeyPath?: string;
  /** Replace an existing regular file at `out`. */
  force?: boolean;
  /** `out` is the default `<sdd>/runtime/receipts/<agent>[.published].tar` (refreshed without --force). */
  defaultOut?: boolean;
}

export interface ExportResult {
  path: string;
  head_hash: string;
  steps: number;
  signed: boolean;
}

export interface PublishOptions extends ExportOptions {
  /** Fields to redact; default `prompt` and `tool_result` (§5). */
  redact?: readonly string[];
}

export interface PublishResult extends ExportResult {
  /** Head of the local (unredacted) journal; not stored in the receipt. */
  original_head_hash: string;
  /** Unredacted fields that still hold absolute paths or home directories (one per field path). */
  warnings: string[];
  leaks: PathLeak[];
}

type Mode = { kind: "export" } | { kind: "publish"; policy: ReadonlySet<string> };

const encoder = new TextEncoder();
const latin1 = new TextDecoder("latin1");
const OUT_BATCH = 256 * 1024;
const HUGE_LINE_BYTES = 4 << 20;

/** The agent's journal directory, refused when absent (exit 3, `agent_journal_missing`: missing input). */
function requireAgentDir(sddDir: string, agentId: string): string {
  const dir = agentJournalDir(sddDir, agentId);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new InputError("agent_journal_missing", `no journal for agent ${agentId}`, { agent_id: agentId });
  }
  return dir;
}

interface Scan {
  steps: number;
  /** Head of the local chain (self-verification). */
  head: string;
  /** Head of what is written (the redacted chain for publish). */
  outHead: string;
  outBytes: number;
  blobDigests: string[];
  /** publish: unredacted fields that still hold absolute paths. */
  leaks: PathLeak[];
  /** Bytes of the longest line. */
  longest: number;
  /** Export: the journal's bytes are its output as they are (each line a dict-form row that verified); its stat then. */
  copyable: Stats | null;
}

/** Errors a refusal to export or publish names (the rest are counted). */
const ERRORS_SHOWN = 5;

function failure(mode: Mode, message: string): NegativeError {
  return new NegativeError(mode.kind === "export" ? "export_failed" : "publish_failed", message);
}

/**
 * Turn each entry into its output line. Shared by both passes so the size
 * declared in the tar header and the bytes written agree.
 */
class RowEmitter {
  /** The head of what is written (publish: the redacted chain, shared with the byte path). */
  readonly head = new OutHead();
  constructor(
    private readonly mode: Mode,
    private readonly dir: string,
    private readonly leaks: PathLeakScanner | null = null,
  ) {}
  emit(row: Map<string, PyValue>, lineNo: number): { line: string; refs: PyValue[]; stepHash: string } {
    let d: Map<string, PyValue>;
    try {
      d = dictForm(row);
    } catch (err) {
      if (err instanceof RowFormError) throw failure(this.mode, `journal at ${this.dir}: line ${lineNo} cannot be exported: ${err.message}`);
      throw err;
    }
    const stepHash = d.get("step_hash") as string;
    const refs = d.get("blob_refs") as PyValue[];
    if (this.mode.kind === "publish") {
      d = redactRow(d, this.mode.policy, this.head.text);
      this.head.text = d.get("step_hash") as string;
      this.leaks?.row(d, lineNo - 1);
    } else {
      this.head.text = stepHash;
    }
    return { line: rowLine(d), refs, stepHash };
  }
}

/**
 * One row's output: `fast` = the line's own bytes (export of a row already
 * in dict form), else the re-serialised text. Shared by both passes so the
 * size declared in the tar header and the bytes written agree.
 */
function rowOutput(
  mode: Mode,
  emitter: RowEmitter,
  rows: CanonicalRow,
  line: Uint8Array | null,
  lineNo: number,
): { fast: boolean; text: string; bytes: number; refs: PyValue[]; stepHash: string } | null {
  if (line !== null && mode.kind === "export") {
    const f = dictFormLine(line, rows);
    if (f !== null) {
      emitter.head.text = f.stepHash;
      return { fast: true, text: "", bytes: line.length + 1, refs: f.refs, stepHash: f.stepHash };
    }
  }
  const k = classifyLine(line);
  if (k.kind !== "entry") return null;
  const r = emitter.emit(k.row, lineNo);
  return { fast: false, text: r.line, bytes: r.line.length, refs: r.refs, stepHash: r.stepHash };
}

/**
 * One pass over the journal. The step kernel takes the rows whose bytes
 * are their export dict form (and that verify) in runs (`run`): export
 * reuses a run's bytes as they are, publish's kernel has written the run's
 * published lines (KERNEL_PUBLISH; it reports the rows that need the leak
 * scanner to `leak`). Every other line goes to `line`, the exact path. Universal-newline splitting whose probe hands
 * canonical rows over whole (a canonical row cannot contain another line
 * break), so each row is scanned once per pass instead of split byte by
 * byte (by the walker's scanner, whose spans the sink's readers then reuse).
 */
interface PassSinks {
  line(line: Uint8Array | null, lineNo: number): void;
  /** A run of rows the kernel took, whole lines (`crlfs` of them ended by CR LF, whose CR is no part of the output). */
  run?(buf: Uint8Array, start: number, to: number, rows: number, crlfs: number): void;
  leak?(u8: Uint8Array, spans: Int32Array, p: number, q: number, lineNo: number): void;
}

function journalPass(mode: Mode, walker: ChainWalker, sinks: PassSinks): LineSplitter {
  walker.kernelMode = mode.kind === "export" ? KERNEL_DICT_FORM : KERNEL_DICT_FORM | KERNEL_PUBLISH;
  walker.readBuffer();
  const rows = walker.canonical;
  const probe = (buf: Uint8Array, start: number, end: number, lineNo: number): boolean => {
    const seg = buf.subarray(start, end);
    if (!rows.scanRow(seg)) return false;
    sinks.line(seg, lineNo);
    return true;
  };
  const k = walker.stepKernel;
  let splitter: LineSplitter | null = null;
  const runs = new TakenRuns(walker, () => splitter!.lines, (buf, start, to, n, crlfs) => sinks.run?.(buf, start, to, n, crlfs));
  const leak = sinks.leak;
  if (k !== null && leak) k.onRow = (p, q) => leak(k.u8, k.spans, p, q, runs.rowLine(k.rowsBefore));
  splitter = new LineSplitter("universal", sinks.line, JOURNAL_MAX_ROW_BYTES, probe, k === null ? null : runs);
  return splitter;
}

/**
 * Pass 1: self-verify, count, size the output, collect blob digests. With
 * a `sink` (publish) the output lines are written there as they are made
 * (straight into the receipt's temp file), so there is no second pass.
 */
async function scan(bucket: string, dir: string, mode: Mode, sink: ((bytes: Uint8Array) => void) | null = null): Promise<Scan> {
  const walker = new ChainWalker("disk", JOURNAL_MAX_ROW_BYTES);
  const leaks = mode.kind === "publish" ? new PathLeakScanner(mode.policy) : null;
  const emitter = new RowEmitter(mode, dir, leaks);
  const scanned = leaks === null ? [] : fieldSlots(leaks.scanned);
  const digests = new Set<string>();
  let steps = 0;
  let outBytes = 0;
  let longest = 0;
  const spooled = sink === null ? null : new OutBuffer();
  // Export: true while every line so far was a run the kernel took (the output is then the file's own bytes).
  let verbatim = true;
  const before = existsSync(bucket) ? statSync(bucket) : null;
  // Rows read the JavaScript way since the last minor collection (the kernel's leave no garbage).
  let parsed = 0;
  if (before !== null) {
    const splitter = journalPass(mode, walker, {
      line: (line, lineNo) => {
        parsed++;
        longest = Math.max(longest, line?.length ?? 0);
        walker.line(line, lineNo);
        const out = rowOutput(mode, emitter, walker.canonical, line, lineNo);
        // A row cut by a chunk's end comes here too: it is still its own output.
        if (out === null || !out.fast) verbatim = false;
        if (out === null) return;
        if (spooled !== null) {
          if (out.fast) spooled.bytes(line!);
          else spooled.ascii(out.text);
        }
        // Canonical output is ASCII: its length is its byte count.
        outBytes += out.bytes;
        for (const r of out.refs) {
          if (typeof r !== "string") throw failure(mode, `journal at ${dir}: line ${lineNo} has a blob_refs item that is not a string`);
          digests.add(r);
        }
        steps++;
      },
      run: (_buf, start, to, rows, crlfs) => {
        steps += rows;
        if (mode.kind === "export") {
          outBytes += to - start - crlfs;
          emitter.head.text = walker.head;
          return;
        }
        takePublished();
        emitter.head.changed();
      },
      leak: (u8, spans, p, q, lineNo) => {
        // The kernel's pre-scan is mayHold's; the row is parsed only when a field it scans may hold a path.
        if (scanned.some((key) => leaks!.mayHold(u8, spans[4 * key]!, spans[4 * key + 1]!))) {
          parsed++;
          const k = classifyLine(u8.subarray(p, q));
          if (k.kind === "entry") leaks!.row(dictForm(k.row), lineNo - 1);
        }
      },
    });
    const k = walker.stepKernel;
    // The kernel's published lines (at a run's end, or when its area is full), after what the exact path left in the batch.
    const takePublished = (): void => {
      const lines = k!.published();
      spooled!.drainSync(sink!);
      sink!(lines);
      outBytes += lines.length;
    };
    if (k !== null && mode.kind === "publish") {
      startKernelPublish(k, mode.policy, leaks!, emitter.head);
      k.onFlush = takePublished;
    }
    let chunks = 0;
    // a signal's handler gets its turn now and then (it removes the receipt's temp file)
    const turns = new TurnPacer();
    for (const chunk of readLineChunks(bucket, { what: "journal" }, walker.readBuffer())) {
      // The per-row garbage of the JavaScript paths is young: a minor collection
      // after every thousand such rows (and now and then) keeps RSS flat.
      const eighth = chunks++ % 8 === 7;
      if (parsed >= 1000 || (eighth && parsed > 0)) {
        Bun.gc(false);
        parsed = 0;
      }
      if (turns.due()) await nextTurn();
      // A row's own bytes hold no CR (it is escaped), so one here ends a line the output ends with LF.
      if (verbatim && chunk.indexOf(0x0d) !== -1) verbatim = false;
      splitter.push(chunk);
      if (spooled !== null && (spooled.len >= OUT_BATCH || spooled.hasPieces)) spooled.drainSync(sink!);
    }
    splitter.end();
    spooled?.drainSync(sink!);
  }
  const verb = mode.kind;
  if (steps === 0) throw failure(mode, `refusing to ${verb} empty journal at ${dir}`);
  const v = walker.result();
  if (v.errors.length > 0) {
    // the first few say where and how; a broken chain has an error on every row after the break
    const shown = v.errors.slice(0, ERRORS_SHOWN);
    const more = walker.errorCount - shown.length;
    throw failure(mode, `journal at ${dir} fails self-verification before ${verb}: ${shown.join("; ")}${more > 0 ? `; and ${more} more error(s)` : ""}`);
  }
  const copyable = mode.kind === "export" && verbatim && before !== null && before.size === outBytes ? before : null;
  const result = { steps, head: v.head_hash, outHead: emitter.head.text, outBytes, blobDigests: mode.kind === "export" ? [...digests] : [], leaks: leaks?.result() ?? [], longest, copyable };
  walker.release();
  return result;
}

/**
 * Output bytes collected between writes (the line views are only valid
 * during a callback). A huge line gets its own piece instead of growing
 * the batch buffer to twice its size.
 */
class OutBuffer {
  private buf = new Uint8Array(OUT_BATCH * 2);
  private pieces: Uint8Array[] = [];
  len = 0;
  private ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const grown = new Uint8Array(Math.max(this.buf.length * 2, this.len + n));
    grown.set(this.buf.subarray(0, this.len));
    this.buf = grown;
  }
  /** The batch so far becomes a piece. */
  private cut(): void {
    if (this.len === 0) return;
    this.pieces.push(this.buf.slice(0, this.len));
    this.len = 0;
  }
  bytes(b: Uint8Array): void {
    if (b.length >= OUT_BATCH) {
      this.cut();
      const line = new Uint8Array(b.length + 1);
      line.set(b);
      line[b.length] = 0x0a;
      this.pieces.push(line);
      return;
    }
    this.ensure(b.length + 1);
    this.buf.set(b, this.len);
    this.len += b.length;
    this.buf[this.len++] = 0x0a;
  }
  /** Bytes that already end in their line feeds (a run of rows). */
  raw(b: Uint8Array): void {
    if (b.length >= OUT_BATCH) {
      this.cut();
      this.pieces.push(b.slice());
      return;
    }
    this.ensure(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }
  ascii(text: string): void {
    this.ensure(text.length);
    this.len += encoder.encodeInto(text, this.buf.subarray(this.len)).written;
  }
  /** A huge line is waiting (write it now, not after the next batch). */
  get hasPieces(): boolean {
    return this.pieces.length > 0;
  }
  /** What is waiting, in order: the batch is a view, written (the tar writer keeps nothing) before the buffer is reused. */
  private takePieces(): Uint8Array[] {
    const pieces = this.pieces;
    this.pieces = [];
    if (this.len > 0) pieces.push(this.buf.subarray(0, this.len));
    this.len = 0;
    return pieces;
  }
  /** Write what is waiting, in order. */
  async drain(write: (bytes: Uint8Array) => Promise<void>): Promise<void> {
    for (const p of this.takePieces()) await write(p);
  }
  drainSync(write: (bytes: Uint8Array) => void): void {
    for (const p of this.takePieces()) write(p);
  }
}

/**
 * Pass 2 from bytes already made: the first `size` bytes of `path` (the
 * journal itself when it is its own output). Returns the line feeds seen.
 */
async function copyBytes(path: string, size: number, write: (bytes: Uint8Array) => Promise<void>): Promise<number> {
  const fd = openSync(path, "r");
  let lines = 0;
  // One buffer: the tar writer has written a chunk when `write` returns.
  const chunk = new Uint8Array(OUT_BATCH * 4);
  // the tar writer's writes do not wait on the event loop: a signal's handler gets its turn now and then
  const turns = new TurnPacer();
  try {
    for (let off = 0; off < size; ) {
      const n = readSync(fd, chunk, 0, Math.min(chunk.length, size - off), off);
      if (n === 0) break;
      const got = chunk.subarray(0, n);
      lines += lineFeedsIn(got, n);
      await write(got);
      off += n;
      if (turns.due()) await nextTurn();
    }
  } finally {
    closeSync(fd);
  }
  return lines;
}

const sameFile = (a: Stats, b: Stats): boolean =>
  a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.ino === b.ino && a.dev === b.dev;

/** Pass 2: stream the first `steps` entries again as output lines (or copy them, see Scan). */
function journalMember(bucket: string, dir: string, mode: Mode, s: Scan): OutMember {
  const changed = () => failure(mode, `journal at ${dir} changed while the receipt was being written; nothing was written`);
  return {
    name: `journal/${BUCKET_NAME}`,
    size: s.outBytes,
    async produce(write) {
      const copyable = s.copyable;
      if (copyable !== null && sameFile(statSync(bucket), copyable)) {
        // Unchanged since pass 1, which proved every line its own output.
        const lines = await copyBytes(bucket, s.outBytes, write);
        if (lines !== s.steps || !sameFile(statSync(bucket), copyable)) throw changed();
        return;
      }
      // The first pass's buffers for a multi-megabyte row are garbage now: collect them
      // before this pass builds its own, or peak memory counts them twice.
      if (s.longest >= HUGE_LINE_BYTES) Bun.gc(true);
      const emitter = new RowEmitter(mode, dir);
      let count = 0;
      let lastHash = GENESIS_HASH;
      const out = new OutBuffer();
      // The walker only drives the kernel (which takes the rows whose bytes are reused); its verdict was pass 1's.
      const walker = new ChainWalker("disk", JOURNAL_MAX_ROW_BYTES);
      const splitter = journalPass(mode, walker, {
        line: (line, lineNo) => {
          walker.line(line, lineNo);
          if (count >= s.steps) return;
          const r = rowOutput(mode, emitter, walker.canonical, line, lineNo);
          if (r === null) return;
          if (r.fast) out.bytes(line!);
          else out.ascii(r.text);
          lastHash = r.stepHash;
          count++;
        },
        run: (buf, start, to, rows, crlfs) => {
          if (count >= s.steps) return;
          const whole = count + rows <= s.steps;
          if (whole && crlfs === 0) {
            out.raw(buf.subarray(start, to));
            count += rows;
            lastHash = walker.head;
            return;
          }
          // Line by line: lines that end in CR LF (the output's end in LF: a row's own bytes hold no CR), or the
          // journal grew since pass 1 (only its first `steps` rows are written).
          for (let p = start; p < to && count < s.steps; count++) {
            const nl = buf.indexOf(0x0a, p);
            const line = buf.subarray(p, contentEnd(buf, p, nl));
            out.bytes(line);
            if (!whole) lastHash = dictFormLine(line, walker.canonical)!.stepHash;
            p = nl + 1;
          }
          if (whole) lastHash = walker.head;
        },
      });
      // as in pass 1: a signal's handler gets its turn now and then
      const turns = new TurnPacer();
      for (const chunk of readLineChunks(bucket, { what: "journal" }, walker.readBuffer())) {
        splitter.push(chunk);
        if (out.len >= OUT_BATCH || out.hasPieces) await out.drain(write);
        if (count >= s.steps) break;
        if (turns.due()) await nextTurn();
      }
      splitter.end();
      await out.drain(write);
      walker.release();
      // The journal is append-only: the first `steps` rows must be the ones verified.
      if (count !== s.steps || lastHash !== s.head) throw changed();
    },
  };
}

async function writeReceipt(opts: ExportOptions, mode: Mode): Promise<{ scan: Scan; signed: boolean }> {
  if (isRemotePath(opts.out)) {
    // s3://: made in a private temporary file, then uploaded (src/storage/upload.ts).
    const { writeRemote } = await import("../storage/upload.ts");
    return writeRemote(opts.out, opts.force ?? false, (local) => writeReceipt({ ...opts, out: local, force: true, defaultOut: false }, mode));
  }
  const dir = requireAgentDir(opts.sddDir, opts.agentId);
  const bucket = join(dir, BUCKET_NAME);
  const plan = planReceiptOutput({ out: opts.out, sddDir: opts.sddDir, inputs: [bucket], force: opts.force ?? false, isDefault: opts.defaultOut ?? false });
  const key: KeyObject | null = opts.signingKeyPath ? loadSigningKey(opts.signingKeyPath) : null;
  const tarOpts = { replace: plan.replace, fileMode: plan.fileMode, dirMode: plan.dirMode };
  try {
    if (mode.kind === "publish" && stepKernelEnabled()) return await publishPlaced(opts, mode, dir, bucket, tarOpts, key);
    const s = await scan(bucket, dir, mode);
    const members: OutMember[] = headMembers(opts.agentId, s, key).map((h) => bytesMember(h.name, h.bytes));
    members.push(journalMember(bucket, dir, mode, s));
    await writeTarAtomic(opts.out, members, tarOpts);
    return { scan: s, signed: key !== null };
  } catch (err) {
    if (err instanceof BernsteinError) throw err;
    throw failure(mode, `${mode.kind === "export" ? "receipt" : "publish"} write failed: ${(err as Error).message}`);
  }
}

/** The members before the journal: the manifest of what is written, and its signature. */
function headMembers(agentId: string, s: Pick<Scan, "outHead" | "steps" | "blobDigests">, key: KeyObject | null): { name: string; bytes: Uint8Array }[] {
  const mBytes = manifestBytes(buildManifest({ agent_id: agentId, head_hash: s.outHead, steps: s.steps, blob_digests: s.blobDigests }));
  const heads = [{ name: "manifest.json", bytes: mBytes }];
  if (key) heads.push({ name: "manifest.sig", bytes: encoder.encode(signManifest(key, mBytes)) });
  return heads;
}

/**
 * Publish in one pass: the redacted lines go straight into the receipt's
 * temp file, after room for the manifest (known only at the end). The room
 * is that of a manifest with as many steps as the journal has bytes (no
 * fewer digits than the real count; the 512-byte block padding absorbs the
 * difference); when the real one needs other room the data is moved.
 */
async function publishPlaced(
  opts: ExportOptions,
  mode: Mode,
  dir: string,
  bucket: string,
  tarOpts: TarWriteOptions,
  key: KeyObject | null,
): Promise<{ scan: Scan; signed: boolean }> {
  const bytes = existsSync(bucket) ? statSync(bucket).size : 0;
  const guess = headMembers(opts.agentId, { outHead: GENESIS_HASH, steps: bytes, blobDigests: [] }, key);
  const w = new PlacedTarWriter(opts.out, tarOpts, guess.reduce((n, h) => n + memberSpan(h.bytes.length), 0));
  try {
    const s = await scan(bucket, dir, mode, (b) => w.write(b));
    await w.finish(headMembers(opts.agentId, s, key), `journal/${BUCKET_NAME}`);
    return { scan: s, signed: key !== null };
  } catch (err) {
    await w.discard();
    throw err;
  }
}

/** `replay export`: a verifiable receipt of one agent's step journal (§4). */
export async function exportReceipt(opts: ExportOptions): Promise<ExportResult> {
  const { scan: s, signed } = await writeReceipt(opts, { kind: "export" });
  return { path: opts.out, head_hash: s.head, steps: s.steps, signed };
}

/** The redaction policy, refused (exit 2) when it names a load-bearing field. */
export function redactionPolicy(extra: readonly string[] = []): Set<string> {
  const policy = new Set<string>([...DEFAULT_REDACT, ...extra]);
  const bad = [...policy].filter((f) => !(REDACTABLE as readonly string[]).includes(f)).sort();
  if (bad.length > 0) {
    const list = (xs: readonly string[]) => `[${xs.map((x) => `'${x}'`).join(", ")}]`;
    throw new UsageError(
      `cannot redact fields ${list(bad)}; only ${list([...REDACTABLE].sort())} may be redacted (others are load-bearing for chain semantics)`,
    );
  }
  return policy;
}

/** `replay publish`: a redacted, re-chained receipt (§5). The local journal is untouched. */
export async function publishReceipt(opts: PublishOptions): Promise<PublishResult> {
  const policy = redactionPolicy(opts.redact ?? []);
  const { scan: s, signed } = await writeReceipt(opts, { kind: "publish", policy });
  return { path: opts.out, original_head_hash: s.head, head_hash: s.outHead, steps: s.steps, signed, warnings: s.leaks.map(describeLeak), leaks: s.leaks };
}
