import type { KeyObject } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { readChunks } from "../fsutil/input.ts";
import { join } from "node:path";
import { BernsteinError, InputError, NegativeError, UsageError } from "../errors.ts";
import type { PyValue } from "../pyjson/types.ts";
import { GENESIS_HASH } from "../steps/hash.ts";
import { DEFAULT_MAX_LINE_BYTES, LineSplitter } from "../fsutil/lines.ts";
import { agentJournalDir, BUCKET_NAME } from "../steps/paths.ts";
import { classifyLine } from "../steps/reader.ts";
import { ChainWalker } from "../steps/walk.ts";
import { CanonicalRow } from "../steps/fastrow.ts";
import { loadSigningKey, signManifest } from "./keys.ts";
import { buildManifest, manifestBytes } from "./manifest.ts";
import { DEFAULT_REDACT, dictForm, dictFormLine, redactRow, REDACTABLE, rowLine, RowFormError } from "./rows.ts";
import { planReceiptOutput } from "./output.ts";
import { describeLeak, PathLeakScanner, type PathLeak } from "./path-leaks.ts";
import { bytesMember, writeTarAtomic, type OutMember } from "./tarwrite.ts";
import { isRemotePath } from "../storage/ref.ts";

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
}

function failure(mode: Mode, message: string): NegativeError {
  return new NegativeError(mode.kind === "export" ? "export_failed" : "publish_failed", message);
}

/**
 * Turn each entry into its output line. Shared by both passes so the size
 * declared in the tar header and the bytes written agree.
 */
class RowEmitter {
  outHead = GENESIS_HASH;
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
      d = redactRow(d, this.mode.policy, this.outHead);
      this.outHead = d.get("step_hash") as string;
      this.leaks?.row(d, lineNo - 1);
    } else {
      this.outHead = stepHash;
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
      emitter.outHead = f.stepHash;
      return { fast: true, text: "", bytes: line.length + 1, refs: f.refs, stepHash: f.stepHash };
    }
  }
  const k = classifyLine(line);
  if (k.kind !== "entry") return null;
  const r = emitter.emit(k.row, lineNo);
  return { fast: false, text: r.line, bytes: r.line.length, refs: r.refs, stepHash: r.stepHash };
}

/**
 * Universal-newline splitting whose probe hands canonical rows over whole
 * (a canonical row cannot contain another line break), so each row is
 * scanned once per pass instead of split byte by byte (by `rows`, whose
 * spans the sink's readers then reuse).
 */
function lineSplitter(rows: CanonicalRow, sink: (line: Uint8Array | null, lineNo: number) => void): LineSplitter {
  const probe = (buf: Uint8Array, start: number, end: number, lineNo: number): boolean => {
    const seg = buf.subarray(start, end);
    if (!rows.scanRow(seg)) return false;
    sink(seg, lineNo);
    return true;
  };
  return new LineSplitter("universal", sink, DEFAULT_MAX_LINE_BYTES, probe);
}

/** Pass 1: self-verify, count, size the output, collect blob digests. */
async function scan(bucket: string, dir: string, mode: Mode): Promise<Scan> {
  const walker = new ChainWalker("disk", DEFAULT_MAX_LINE_BYTES);
  const leaks = mode.kind === "publish" ? new PathLeakScanner(mode.policy) : null;
  const emitter = new RowEmitter(mode, dir, leaks);
  const digests = new Set<string>();
  let steps = 0;
  let outBytes = 0;
  let longest = 0;
  if (existsSync(bucket)) {
    const splitter = lineSplitter(walker.canonical, (line, lineNo) => {
      longest = Math.max(longest, line?.length ?? 0);
      walker.line(line, lineNo);
      const out = rowOutput(mode, emitter, walker.canonical, line, lineNo);
      if (out === null) return;
      // Canonical output is ASCII: its length is its byte count.
      outBytes += out.bytes;
      for (const r of out.refs) {
        if (typeof r !== "string") throw failure(mode, `journal at ${dir}: line ${lineNo} has a blob_refs item that is not a string`);
        digests.add(r);
      }
      steps++;
    });
    for (const chunk of readChunks(bucket, { what: "journal" })) splitter.push(chunk);
    splitter.end();
  }
  const verb = mode.kind;
  if (steps === 0) throw failure(mode, `refusing to ${verb} empty journal at ${dir}`);
  const v = walker.result();
  if (v.errors.length > 0) {
    throw failure(mode, `journal at ${dir} fails self-verification before ${verb}: ${v.errors.join("; ")}`);
  }
  return { steps, head: v.head_hash, outHead: emitter.outHead, outBytes, blobDigests: mode.kind === "export" ? [...digests] : [], leaks: leaks?.result() ?? [], longest };
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
  ascii(text: string): void {
    this.ensure(text.length);
    this.len += encoder.encodeInto(text, this.buf.subarray(this.len)).written;
  }
  /** A huge line is waiting (write it now, not after the next batch). */
  get hasPieces(): boolean {
    return this.pieces.length > 0;
  }
  /** Write what is waiting, in order. */
  async drain(write: (bytes: Uint8Array) => Promise<void>): Promise<void> {
    this.cut();
    const pieces = this.pieces;
    this.pieces = [];
    for (const p of pieces) await write(p);
  }
}

/** Pass 2: stream the first `steps` entries again as output lines. */
function journalMember(bucket: string, dir: string, mode: Mode, s: Scan): OutMember {
  return {
    name: `journal/${BUCKET_NAME}`,
    size: s.outBytes,
    async produce(write) {
      // The first pass's buffers for a multi-megabyte row are garbage now: collect them
      // before this pass builds its own, or peak memory counts them twice.
      if (s.longest >= HUGE_LINE_BYTES) Bun.gc(true);
      const emitter = new RowEmitter(mode, dir);
      let count = 0;
      let lastHash = GENESIS_HASH;
      const out = new OutBuffer();
      const rows = new CanonicalRow();
      const splitter = lineSplitter(rows, (line, lineNo) => {
        if (count >= s.steps) return;
        const r = rowOutput(mode, emitter, rows, line, lineNo);
        if (r === null) return;
        if (r.fast) out.bytes(line!);
        else out.ascii(r.text);
        lastHash = r.stepHash;
        count++;
      });
      for (const chunk of readChunks(bucket, { what: "journal" })) {
        splitter.push(chunk);
        if (out.len >= OUT_BATCH || out.hasPieces) await out.drain(write);
        if (count >= s.steps) break;
      }
      splitter.end();
      await out.drain(write);
      // The journal is append-only: the first `steps` rows must be the ones verified.
      if (count !== s.steps || lastHash !== s.head) {
        throw failure(mode, `journal at ${dir} changed while the receipt was being written; nothing was written`);
      }
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
  const s = await scan(bucket, dir, mode);
  const manifest = buildManifest({ agent_id: opts.agentId, head_hash: s.outHead, steps: s.steps, blob_digests: s.blobDigests });
  const mBytes = manifestBytes(manifest);
  const members: OutMember[] = [bytesMember("manifest.json", mBytes)];
  if (key) members.push(bytesMember("manifest.sig", encoder.encode(signManifest(key, mBytes))));
  members.push(journalMember(bucket, dir, mode, s));
  try {
    await writeTarAtomic(opts.out, members, { replace: plan.replace, fileMode: plan.fileMode, dirMode: plan.dirMode });
  } catch (err) {
    if (err instanceof BernsteinError) throw err;
    throw failure(mode, `${mode.kind === "export" ? "receipt" : "publish"} write failed: ${(err as Error).message}`);
  }
  return { scan: s, signed: key !== null };
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
