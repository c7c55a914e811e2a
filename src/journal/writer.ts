import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readSync, unlinkSync, writeSync } from "node:fs";
import { fsyncDir } from "../fsutil/atomic.ts";
import { join } from "node:path";
import { BernsteinError, ExitCode, InputError, RefusalError, UsageError } from "../errors/index.ts";
import { rowLimitText, JOURNAL_MAX_ROW_BYTES } from "../fsutil/input.ts";
import type { FileLock } from "../fsutil/lock.ts";
import { dumps, dumpsRowBytes, dumpsRowChunks, dumpsRowChunksAsync, holdsRaw } from "../pyjson/encode.ts";
import { pyRound } from "../pyjson/python.ts";
import { pyFloat, pyInt, PyRaw, type PyLike, type PyValue } from "../pyjson/types.ts";
import { eventHash, HASH_PROFILE_FIELD, payloadHash, payloadHashAsync, type Payload } from "./hash.ts";
import { DEFAULT_PROFILE } from "./hash-profiles.ts";
import { writeMetadata, type RunMetadata } from "./metadata.ts";
import { journalPath, METADATA_FILE_NAME, runDir, runsRoot, SEAL_FILE_NAME } from "./paths.ts";
import { stateWritePath } from "../fsutil/state-path.ts";
import { ensureStateDir } from "../fsutil/state-dir.ts";
import { applyRetention } from "./retention.ts";
import { lockJournalOrRefuse } from "./seal.ts";
import { verifyInThread } from "./fast/in-thread.ts";
import { endsInTornTail } from "./verdict-failure.ts";
import { RecordRowBuilder } from "./fast/record-bytes.ts";
import { fastRound3, recordLine } from "./fast/record-row.ts";

/**
 * The run-journal writer (spec §1.2). Each `record` appends one complete
 * row — envelope `ts, elapsed_s, index, event, prev_hash, payload_hash,
 * event_hash`, then the payload keys in caller order, serialised like
 * Python's `json.dumps(row)` — in a single write call on an O_APPEND
 * descriptor. A cross-process lock (`<run_dir>/journal.lock`) is held from
 * open to `close()`, so a second writer cannot fork the chain.
 */

/** Envelope keys a payload may overwrite in place (they are not hashed). */
const OVERWRITABLE = new Set(["ts", "elapsed_s", "index"]);
/** Payload keys that are refused: they would break the chain on purpose. */
const CHAIN_FIELDS = new Set(["prev_hash", "payload_hash", "event_hash"]);

export interface JournalClock {
  /** Unix time in seconds (float), like Python's `time.time()`. */
  now(): number;
}

const systemClock: JournalClock = {
  now: () => (performance.timeOrigin + performance.now()) / 1000,
};

export interface CreateOptions {
  sddDir: string;
  metadata?: Partial<RunMetadata>;
  /** Start over when journal.jsonl already has content (it is truncated). */
  overwrite?: boolean;
  env?: Record<string, string | undefined>;
  clock?: JournalClock;
  /** Longest row written (default JOURNAL_MAX_ROW_BYTES, what verify takes): a longer one is `row_too_large`, nothing written. */
  maxRowBytes?: number;
}

export interface ResumeOptions {
  sddDir: string;
  env?: Record<string, string | undefined>;
  clock?: JournalClock;
  /** Append even when `<run_dir>/seal.json` exists (the seal will then mismatch). */
  allowSealed?: boolean;
  /** Longest row read (resuming) or written (default JOURNAL_MAX_ROW_BYTES, what verify takes): a longer one is `row_too_large`. */
  maxRowBytes?: number;
}

/** The run's directory (made) and journal path (kept inside the state directory), with the writer lock held. */
function lockRunJournal(sddDir: string, runId: string): { dir: string; path: string; lock: ReturnType<typeof lockJournalOrRefuse> } {
  const dir = runDir(sddDir, runId);
  const path = journalPath(sddDir, runId);
  stateWritePath(sddDir, path, `the journal of run ${runId}`);
  ensureStateDir(sddDir);
  mkdirSync(dir, { recursive: true });
  return { dir, path, lock: lockJournalOrRefuse(path, runId, "record to") };
}

/** A new run's metadata.json: the caller's fields over empty defaults; `run_id` always the run's. */
function writeRunMetadata(dir: string, startedAt: number, runId: string, metadata: CreateOptions["metadata"]): void {
  writeMetadata(dir, { started_at: startedAt, git_sha: "", git_branch: "", config_hash: "", seed_path: null, ...metadata, run_id: runId });
}

export interface RecordItem {
  event: string;
  payload: Payload;
  /** The 1-based input line it came from (named when its row is refused). */
  line?: number;
}

/**
 * An input line of `{"event": ..., ...payload}` JSON Lines, recorded at
 * byte level when it is in json.dumps spelling (src/journal/fast/
 * record-bytes.ts); otherwise `parse()` turns it into a RecordItem (and
 * throws the input error for a bad line).
 */
export interface RawRecordItem {
  raw: Uint8Array;
  parse: () => RecordItem;
  line?: number;
}

/**
 * The writer never writes a row its own reader refuses: a row line (as
 * encoded, not as it came in: the re-encoding can be larger, e.g. a
 * compact `[1,1,…]` gains a space per element) over `limit` (default
 * JOURNAL_MAX_ROW_BYTES, what `journal verify` takes) is `row_too_large`
 * before anything is written. `line` is the 1-based input line, when there
 * is one.
 */
export function checkRowSize(line: string | Uint8Array, index: number, inputLine?: number, limit = JOURNAL_MAX_ROW_BYTES): void {
  const text = typeof line === "string";
  // a UTF-16 unit is at most 3 UTF-8 bytes: most rows are settled without measuring
  if ((text ? 3 * line.length : line.length) <= limit + 1) return;
  const last = text ? line.charCodeAt(line.length - 1) : line[line.length - 1];
  const exact = (text ? Buffer.byteLength(line, "utf8") : line.length) - (last === 10 ? 1 : 0);
  if (exact > limit) throw rowOverLimit(exact, index, inputLine, limit);
}

/** `row_too_large` for the row of `rowBytes` bytes (without its "\n") event `index` would be. */
function rowOverLimit(rowBytes: number, index: number, inputLine: number | undefined, limit: number): InputError {
  const from = inputLine === undefined ? "" : ` (stdin line ${inputLine})`;
  return new InputError(
    "row_too_large",
    `event ${index}${from} would be a journal row of ${rowBytes} bytes, over the row limit of ${limit} bytes (${rowLimitText(limit)}) journal verify takes; refusing to write it (the journal is unchanged)`,
    { ...(inputLine === undefined ? {} : { path: "stdin", line: inputLine }), index, row_bytes: rowBytes, limit_bytes: limit },
  );
}

/**
 * A row whose payload holds values still in their input bytes (`PyRaw`: a
 * long input line, src/pyjson/row.ts), to be written in pieces
 * (`dumpsRowChunks`) and never held whole: the input line and pieces of
 * about a megabyte are all the memory it takes. `size` is the exact row
 * line (without its "\n"), or -1 when it cannot reach the limit (it was
 * not measured).
 */
export interface StreamedRow {
  row: Map<string, PyLike>;
  hash: string;
  size: number;
}

/** Output bytes per input byte a validated JSON value can take in json.dumps' default layout (a float's repr: `1e15` → `1000000000000000.0`). */
const RAW_GROWTH = 5;

/**
 * The StreamedRow of a validated event at `ctx`, refused with `row_too_large`
 * when its line would be over `limit`: measured by a counting pass of the
 * encoder, only when a bound on it passes the limit.
 */
export function streamedRow(event: string, payload: Payload, entries: [string, PyLike][], ctx: RowContext, limit: number, inputLine?: number): StreamedRow {
  const r = rowWithHashes(event, entries, ctx, payloadHash(event, payload));
  if (sizeBound(r.row) > limit) {
    r.size = 0;
    dumpsRowChunks(r.row, "", (piece) => (r.size += piece.length));
    if (r.size > limit) throw rowOverLimit(r.size, ctx.index, inputLine, limit);
  }
  return r;
}

/** `streamedRow`, taking turns of the event loop while its long values are hashed and measured (a signal is taken meanwhile). */
export async function streamedRowAsync(event: string, payload: Payload, entries: [string, PyLike][], ctx: RowContext, limit: number, inputLine?: number): Promise<StreamedRow> {
  const r = rowWithHashes(event, entries, ctx, await payloadHashAsync(event, payload));
  if (sizeBound(r.row) > limit) {
    r.size = 0;
    await dumpsRowChunksAsync(r.row, "", (piece) => (r.size += piece.length));
    if (r.size > limit) throw rowOverLimit(r.size, ctx.index, inputLine, limit);
  }
  return r;
}

/** The row (envelope, then the payload in order) with payload hash `ph`; size not measured. */
function rowWithHashes(event: string, entries: [string, PyLike][], ctx: RowContext, ph: string): StreamedRow {
  const hash = eventHash(ctx.prev, event, ph, ctx.index);
  return { row: rowOf(event, entries, ctx, ph, hash), hash, size: -1 };
}

/** The row as Python builds it: the envelope, then the payload (dict.update: envelope-named keys overwrite in place, others append). */
function rowOf(event: string, entries: [string, PyLike][], ctx: RowContext, ph: string, hash: string): Map<string, PyLike> {
  const row = new Map<string, PyLike>([
    ["ts", pyFloat(ctx.ts)],
    ["elapsed_s", pyFloat(ctx.elapsed)],
    ["index", pyInt(ctx.index)],
    ["event", event],
    ["prev_hash", ctx.prev],
    ["payload_hash", ph],
    ["event_hash", hash],
  ]);
  for (const [k, v] of entries) row.set(k, v);
  return row;
}

/** An upper bound on the bytes of `row`'s line: when it is within the limit, the row need not be measured. */
function sizeBound(row: Map<string, PyLike>): number {
  let bound = 512;
  for (const [k, v] of row) {
    bound += 6 * k.length + 8;
    if (v instanceof PyRaw) bound += RAW_GROWTH * v.bytes.length;
    else if (typeof v === "string") bound += 6 * v.length + 2;
    else bound += dumps(v).length;
  }
  return bound;
}

/** Everything a row needs besides its event: its place in the chain and its clock readings. */
export interface RowContext {
  index: number;
  prev: string;
  ts: number;
  elapsed: number;
}

/**
 * The row line (with its "\n") and event hash of a validated event at
 * `ctx`: the string-level hot path (src/journal/fast/record-row.ts) when it
 * applies, else the generic encoder (payloads that overwrite envelope
 * fields, rows holding raw bytes). Same bytes either way. Pure: no journal,
 * no clock (the record worker calls it too).
 */
export function encodeRow(event: string, payload: Payload, entries: [string, PyLike][], ctx: RowContext): { line: string | Uint8Array; hash: string } {
  const fast = holdsRaw(payload) ? null : recordLine(event, entries, ctx.index, ctx.prev, ctx.ts, ctx.elapsed);
  if (fast) return { line: fast.line, hash: fast.eventHash };
  const { line, hash } = buildRowAt(event, payload, entries, ctx);
  return { line, hash };
}

function buildRowAt(event: string, payload: Payload, entries: [string, PyLike][], ctx: RowContext): { row: Map<string, PyValue>; line: string | Uint8Array; hash: string } {
  const ph = payloadHash(event, payload);
  const eh = eventHash(ctx.prev, event, ph, ctx.index);
  const row = rowOf(event, entries, ctx, ph, eh);
  // A huge row's large members are still bytes (PyRaw): its line is built as bytes too.
  const line = holdsRaw(row) ? dumpsRowBytes(row, "\n") : dumps(row as unknown as PyLike) + "\n";
  return { row: row as Map<string, PyValue>, line, hash: eh };
}

/** Where the journal stood at some point; `rollback` returns to it. */
export interface JournalMark {
  readonly size: number;
  readonly index: number;
  readonly head: string;
  readonly needsNewline: boolean;
}

const NEWLINE = new Uint8Array([10]);

function writeFailed(path: string, err: unknown): BernsteinError {
  return new BernsteinError(
    "journal_write_failed",
    `cannot append to journal ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    ExitCode.INPUT,
    { path },
  );
}

export function entriesOf(payload: Payload): [string, PyLike][] {
  if (payload instanceof Map) return [...payload.entries()];
  return Object.entries(payload).filter(([, v]) => v !== undefined);
}

/**
 * Refuse events the chain cannot carry honestly: an empty or non-string
 * event type, a payload key `event` (it would be silently replaced in the
 * hash), chain fields (`prev_hash`/`payload_hash`/`event_hash` would make
 * the row fail verification on purpose), or an unknown `hash_profile`.
 * `ts`/`elapsed_s`/`index` are allowed and overwrite the envelope in place,
 * as in Python (they are not authenticated).
 */
export function validateRecordInput(event: unknown, payload: Payload): void {
  checkRecordInput(event, entriesOf(payload));
}

export function checkRecordInput(event: unknown, entries: [string, PyLike][]): void {
  if (typeof event !== "string" || event.length === 0) {
    throw new UsageError("event type must be a non-empty string", "invalid_event");
  }
  for (const [k, v] of entries) {
    if (k === "event") {
      throw new UsageError(`payload key "event" collides with the event type`, "invalid_payload", { key: k });
    }
    if (CHAIN_FIELDS.has(k)) {
      throw new UsageError(`payload key "${k}" is a chain field the writer computes`, "invalid_payload", { key: k });
    }
    // The writer hashes every row with the default profile: a row may name only that one.
    if (k === HASH_PROFILE_FIELD && v !== DEFAULT_PROFILE.name) {
      throw new InputError(
        "unknown_hash_profile",
        `unknown hash_profile ${v instanceof PyRaw ? `(a value of ${v.bytes.length} bytes)` : JSON.stringify(v)}: this writer records only ${DEFAULT_PROFILE.name}`,
      );
    }
  }
}

function lastByte(path: string, size: number): number {
  if (size === 0) return -1;
  const fd = openSync(path, "r");
  try {
    const b = new Uint8Array(1);
    readSync(fd, b, 0, 1, size - 1);
    return b[0]!;
  } finally {
    closeSync(fd);
  }
}

export class EventJournal {
  readonly runId: string;
  readonly path: string;
  readonly runDirPath: string;
  private fd: number;
  private lock: FileLock;
  private index: number;
  private headHash: string;
  private size: number;
  /** The existing file ends without a line break: terminate it before the first new row. */
  private needsNewline: boolean;
  private readonly startTs: number;
  private readonly clock: JournalClock;
  private closed = false;
  /** Longest row line this writer reads (resuming) and writes (`row_too_large` beyond it). */
  readonly maxRowBytes: number;
  /** Bytes were appended (or cut) since the last fsync. */
  private dirty = false;
  /** The journal file was created by this writer: its directory entry needs an fsync too. */
  private created: boolean;
  /** Byte-level row builder for raw input lines (recordMany), created on first use. */
  private rawBuilder: RecordRowBuilder | null = null;
  /**
   * The journal file does not exist yet (fd -1): it is created with the
   * first row that is ready to be written, so a refused or interrupted
   * first append leaves no empty journal behind. `pendingMetadata` is the
   * new run's metadata.json, written just before that file.
   */
  private pendingMetadata: Partial<RunMetadata> | null = null;
  /** This writer created the journal file (and `wroteMetadata`: its metadata.json): a rollback to nothing removes them again. */
  private createdFile = false;
  private wroteMetadata = false;

  private constructor(init: {
    runId: string;
    path: string;
    runDirPath: string;
    fd: number;
    lock: FileLock;
    index: number;
    head: string;
    size: number;
    needsNewline: boolean;
    clock: JournalClock;
    created: boolean;
    maxRowBytes?: number;
  }) {
    this.created = init.created;
    this.maxRowBytes = init.maxRowBytes ?? JOURNAL_MAX_ROW_BYTES;
    this.runId = init.runId;
    this.path = init.path;
    this.runDirPath = init.runDirPath;
    this.fd = init.fd;
    this.lock = init.lock;
    this.index = init.index;
    this.headHash = init.head;
    this.size = init.size;
    this.needsNewline = init.needsNewline;
    this.clock = init.clock;
    this.startTs = init.clock.now();
  }

  /**
   * A fresh journal at genesis. Refuses (`journal_exists`) when the file
   * already has content unless `overwrite` — appending at genesis to an
   * existing chain (what Python's plain constructor does) breaks it.
   * Writes metadata.json (0600) and applies retention.
   */
  static create(runId: string, opts: CreateOptions): EventJournal {
    const { dir, path, lock } = lockRunJournal(opts.sddDir, runId);
    let fd: number | undefined;
    try {
      const created = !existsSync(path);
      fd = openSync(path, "a");
      let size = fstatSync(fd).size;
      if (size > 0) {
        if (!opts.overwrite) {
          throw new RefusalError(
            "journal_exists",
            `run ${runId} already has a journal (${path}); resume it instead of starting a second chain`,
            { run_id: runId, path },
          );
        }
        ftruncateSync(fd, 0);
        size = 0;
      }
      const clock = opts.clock ?? systemClock;
      const journal = new EventJournal({ runId, path, runDirPath: dir, fd, lock, index: 0, head: "", size, needsNewline: false, clock, created, maxRowBytes: opts.maxRowBytes });
      // a new file needs its directory entry synced; a truncated one its new length
      journal.dirty = created || opts.overwrite === true;
      writeRunMetadata(dir, journal.startTs, runId, opts.metadata);
      applyRetention(runsRoot(opts.sddDir), runId, opts.env);
      return journal;
    } catch (err) {
      if (fd !== undefined) closeSync(fd);
      lock.release();
      throw err;
    }
  }

  /**
   * Continue an existing journal from its tail (spec §1.7): the chain is
   * re-verified first. Refuses a journal with discarded lines
   * (`journal_torn_tail`, naming `bernstein replay repair`, when they are a
   * torn tail; `journal_corrupt` otherwise) or a broken chain. A missing or
   * empty journal starts at genesis.
   */
  static async resume(runId: string, opts: ResumeOptions): Promise<EventJournal> {
    return EventJournal.resumeSync(runId, opts);
  }

  static resumeSync(runId: string, opts: ResumeOptions): EventJournal {
    const { dir, path, lock } = lockRunJournal(opts.sddDir, runId);
    try {
      if (!opts.allowSealed && existsSync(join(dir, SEAL_FILE_NAME))) {
        throw new RefusalError(
          "journal_sealed",
          `run ${runId} is sealed (${join(dir, SEAL_FILE_NAME)}); appending would make its journal mismatch the seal`,
          { run_id: runId, path },
        );
      }
      applyRetention(runsRoot(opts.sddDir), runId, opts.env);
      // The chain re-verified by the fast verifier's per-row code in this thread (the exact verifier's verdict, at
      // verify speed), up to the rows this writer may have written: its row limit (verify's by default).
      const v = existsSync(path) ? verifyInThread(path, { maxRowBytes: opts.maxRowBytes ?? JOURNAL_MAX_ROW_BYTES }) : null;
      const discarded = v?.discarded_line_indices ?? [];
      if (discarded.length > 0) {
        const lines = discarded.join(", ");
        if (endsInTornTail(v!)) {
          throw new RefusalError(
            "journal_torn_tail",
            `cannot resume journal ${path}: reader discarded physical line(s): ${lines}; the tail is a torn write \u2014 repair it first with 'bernstein replay repair ${runId}'`,
            { run_id: runId, path, discarded_line_indices: discarded },
          );
        }
        throw new RefusalError(
          "journal_corrupt",
          `cannot resume journal ${path}: reader discarded physical line(s): ${lines}`,
          { run_id: runId, path, discarded_line_indices: discarded },
        );
      }
      if (v !== null && !v.chain_consistent) {
        throw new RefusalError("journal_corrupt", `cannot resume journal ${path}: ${v.errors[0]}`, {
          run_id: runId,
          path,
          divergent_index: v.divergent_index,
        });
      }
      // A missing journal is created by the first append (fd -1 until then).
      const created = !existsSync(path);
      const fd = created ? -1 : openSync(path, "a");
      const size = created ? 0 : fstatSync(fd).size;
      const last = lastByte(path, size);
      return new EventJournal({
        runId,
        path,
        runDirPath: dir,
        fd,
        lock,
        index: v?.count ?? 0,
        head: v?.head ?? "",
        size,
        needsNewline: size > 0 && last !== 10 && last !== 13,
        clock: opts.clock ?? systemClock,
        created,
        maxRowBytes: opts.maxRowBytes,
      });
    } catch (err) {
      lock.release();
      throw err;
    }
  }

  /**
   * Append to a run's journal whether or not it exists yet: resume the
   * existing chain, or start one at genesis (writing metadata.json when the
   * run has none). Everything happens under the writer lock.
   */
  static open(runId: string, opts: ResumeOptions & { metadata?: Partial<RunMetadata> }): EventJournal {
    const j = EventJournal.resumeSync(runId, opts);
    try {
      if (j.size === 0 && !existsSync(join(j.runDirPath, METADATA_FILE_NAME))) {
        // a new run: its metadata.json comes with its first row
        if (j.fd < 0) j.pendingMetadata = opts.metadata ?? {};
        else writeRunMetadata(j.runDirPath, j.startTs, runId, opts.metadata);
      }
    } catch (err) {
      j.close();
      throw err;
    }
    return j;
  }

  /** Build the row and its line for the next index without writing. */
  private buildRow(event: string, payload: Payload, index: number, prev: string): { row: Map<string, PyValue>; line: string | Uint8Array; hash: string } {
    const entries = entriesOf(payload);
    checkRecordInput(event, entries);
    const ts = this.clock.now();
    const elapsed = pyRound(this.clock.now() - this.startTs, 3);
    return buildRowAt(event, payload, entries, { index, prev, ts, elapsed });
  }

  private ensureOpen(): void {
    if (this.closed) throw new UsageError(`journal ${this.path} is closed`, "journal_closed");
  }

  /** Create the journal file (and a new run's metadata.json) for its first row. */
  private materialize(): void {
    if (this.pendingMetadata && !this.wroteMetadata) {
      writeRunMetadata(this.runDirPath, this.startTs, this.runId, this.pendingMetadata);
      this.wroteMetadata = true;
    }
    this.created = !existsSync(this.path);
    this.fd = openSync(this.path, "a");
    this.createdFile = this.created;
    this.size = fstatSync(this.fd).size;
  }

  /** Write `text` (complete lines) in one call; on failure cut back to the last complete row. */
  private append(text: string | Uint8Array): number {
    if (this.fd < 0) this.materialize();
    const bytes =
      typeof text === "string"
        ? Buffer.from(this.needsNewline ? "\n" + text : text, "utf8")
        : this.needsNewline
          ? Buffer.concat([Buffer.from("\n"), text])
          : text;
    try {
      let off = 0;
      while (off < bytes.length) off += writeSync(this.fd, bytes, off, bytes.length - off);
    } catch (err) {
      try {
        ftruncateSync(this.fd, this.size);
      } catch {
        /* the next reader sees a torn tail, which repair removes */
      }
      throw writeFailed(this.path, err);
    }
    this.needsNewline = false;
    this.size += bytes.length;
    this.dirty = true;
    return bytes.length;
  }

  /**
   * Write a StreamedRow in pieces of about a megabyte; on failure cut back
   * to the last complete row (as `append`). `size`, when measured, is
   * checked against what was written.
   */
  private appendStreamed(r: StreamedRow): void {
    const w = this.pieceWriter(r);
    try {
      w.begin();
      dumpsRowChunks(r.row, "\n", w.put);
      w.end();
    } catch (err) {
      throw w.fail(err);
    }
  }

  /** `appendStreamed`, with turns of the event loop between pieces (a signal's handler rolls back what was written). */
  private async appendStreamedAsync(r: StreamedRow): Promise<void> {
    const w = this.pieceWriter(r);
    try {
      w.begin();
      await dumpsRowChunksAsync(r.row, "\n", w.put);
      w.end();
    } catch (err) {
      throw w.fail(err);
    }
  }

  /** Writing one StreamedRow's pieces: `begin`, `put` each, `end`; on any failure `fail` cuts the file back and returns the error to throw. */
  private pieceWriter(r: StreamedRow): { begin(): void; put(bytes: Uint8Array): void; end(): void; fail(err: unknown): unknown } {
    let written = 0;
    const put = (bytes: Uint8Array): void => {
      let off = 0;
      while (off < bytes.length) off += writeSync(this.fd, bytes, off, bytes.length - off);
      written += bytes.length;
    };
    return {
      begin: () => {
        if (this.fd < 0) this.materialize();
        if (this.needsNewline) put(NEWLINE);
      },
      put,
      end: () => {
        const expected = r.size < 0 ? written : r.size + 1 + (this.needsNewline ? 1 : 0);
        if (written !== expected) throw new Error(`journal row of ${written} bytes, measured as ${expected}`);
        this.needsNewline = false;
        this.size += written;
        this.dirty = true;
      },
      fail: (err) => {
        if (this.fd >= 0) {
          try {
            ftruncateSync(this.fd, this.size);
          } catch {
            /* the next reader sees a torn tail, which repair removes */
          }
        }
        return (err as NodeJS.ErrnoException).code === undefined ? err : writeFailed(this.path, err);
      },
    };
  }

  /**
   * Append one event read from a long input line (its large values still
   * bytes, `PyRaw`: src/pyjson/row.ts) without ever holding its row: it is
   * hashed, measured when it could pass the row limit, and written in
   * pieces, with turns of the event loop in between, so SIGINT/SIGTERM is
   * taken within moments (the command's handler rolls back what was
   * written). An event without such values takes `recordMany`.
   */
  async recordLong(ev: RecordItem): Promise<void> {
    this.ensureOpen();
    const entries = entriesOf(ev.payload);
    checkRecordInput(ev.event, entries);
    if (!holdsRaw(ev.payload)) return this.recordMany([ev]);
    const ctx = this.nextRow();
    const big = await streamedRowAsync(ev.event, ev.payload, entries, ctx, this.maxRowBytes, ev.line);
    if (ctx.index !== this.index || ctx.prev !== this.headHash) throw new Error("recordLong: the journal moved meanwhile");
    await this.appendStreamedAsync(big);
    this.index++;
    this.headHash = big.hash;
  }

  /** Append one event; returns the row as written. */
  record(event: string, payload: Payload = {}): Map<string, PyValue> {
    this.ensureOpen();
    const { row, line, hash } = this.buildRow(event, payload, this.index, this.headHash);
    checkRowSize(line, this.index, undefined, this.maxRowBytes);
    this.append(line);
    this.index++;
    this.headHash = hash;
    return row;
  }

  /**
   * Append many events with few write calls (about 1 MiB of complete lines
   * each, never a partial line). Input is validated per event before its
   * batch is written, so an invalid item leaves every earlier item recorded
   * and none after it. Raw input lines in json.dumps spelling take the
   * byte-level path; everything else the generic encoder — same bytes.
   */
  recordMany(items: Iterable<RecordItem | RawRecordItem>): void {
    this.ensureOpen();
    let index = this.index;
    // The chain head as a string, or null while the raw builder holds it
    // (materialised only when needed: a generic row, a flush).
    let head: string | null = this.headHash;
    // Rows are built into the builder's batch area, in chain order, and
    // written about 1 MiB at a time (complete lines only).
    const raw = (this.rawBuilder ??= new RecordRowBuilder());
    raw.resetBatch();
    raw.setHead(head);
    const flush = (): void => {
      if (raw.batchLength() === 0) return;
      this.append(raw.batchView());
      raw.resetBatch();
      this.index = index;
      head ??= raw.head();
      this.headHash = head;
    };
    try {
      for (const item of items) {
        if (!raw.hasRoomFor(0)) flush();
        const ts = this.clock.now();
        const elapsed = fastRound3(this.clock.now() - this.startTs, pyRound);
        if ("raw" in item && raw.build(item.raw, index, ts, elapsed)) {
          head = null;
        } else {
          const prev: string = head ?? raw.head();
          const ev = "raw" in item ? item.parse() : item;
          const entries = entriesOf(ev.payload);
          checkRecordInput(ev.event, entries);
          if (holdsRaw(ev.payload)) {
            // a long input line: its row is written in pieces, never whole in memory (refused before any is written)
            const big = streamedRow(ev.event, ev.payload, entries, { index, prev, ts, elapsed }, this.maxRowBytes, item.line);
            flush();
            this.appendStreamed(big);
            this.index = index + 1;
            this.headHash = big.hash;
            head = big.hash;
            raw.setHead(head);
            index++;
            continue;
          }
          const { line, hash } = encodeRow(ev.event, ev.payload, entries, { index, prev, ts, elapsed });
          // refused before anything of it is written (the caller rolls the batch back)
          checkRowSize(line, index, item.line, this.maxRowBytes);
          const alone = typeof line !== "string" || !raw.hasRoomFor(3 * line.length);
          if (alone) flush();
          if (typeof line !== "string" || !raw.hasRoomFor(3 * line.length)) {
            // a huge generic row: write it on its own
            this.append(line);
            this.index = index + 1;
            this.headHash = hash;
          } else {
            raw.appendLine(line);
          }
          head = hash;
          raw.setHead(head);
        }
        index++;
        if (raw.batchLength() >= raw.batchBytes) flush();
      }
    } catch (err) {
      flush();
      throw err;
    }
    flush();
  }

  /** The chain position and clock readings of the next row (for a row encoded elsewhere: `appendRow`). */
  nextRow(): RowContext {
    this.ensureOpen();
    const ts = this.clock.now();
    const elapsed = fastRound3(this.clock.now() - this.startTs, pyRound);
    return { index: this.index, prev: this.headHash, ts, elapsed };
  }

  /**
   * Append a row line built by `encodeRow` at `ctx` (from `nextRow`, with
   * nothing appended since), e.g. by the record worker; `inputLine` is
   * named when the row is refused (`row_too_large`, nothing written).
   */
  appendRow(line: string | Uint8Array, hash: string, ctx: RowContext, inputLine?: number): void {
    this.ensureOpen();
    if (ctx.index !== this.index || ctx.prev !== this.headHash) throw new Error("appendRow: the journal moved since nextRow()");
    checkRowSize(line, ctx.index, inputLine, this.maxRowBytes);
    this.append(line);
    this.index++;
    this.headHash = hash;
  }

  /** The current position, for `rollback`. */
  mark(): JournalMark {
    return { size: this.size, index: this.index, head: this.headHash, needsNewline: this.needsNewline };
  }

  /**
   * Undo appends made since `m` (the lock has been held throughout, so the
   * bytes after `m.size` are ours). Used to make a batch all-or-nothing.
   */
  rollback(m: JournalMark): void {
    this.ensureOpen();
    if (m.size === 0 && this.createdFile && this.fd >= 0) {
      // Back to before the file existed: remove what this writer created (it holds the lock).
      closeSync(this.fd);
      this.fd = -1;
      this.createdFile = false;
      this.created = false;
      unlinkSync(this.path);
      if (this.wroteMetadata) {
        this.wroteMetadata = false;
        try {
          unlinkSync(join(this.runDirPath, METADATA_FILE_NAME));
        } catch {
          /* already gone */
        }
      }
      this.dirty = false;
      this.size = 0;
      this.index = m.index;
      this.headHash = m.head;
      this.needsNewline = m.needsNewline;
      return;
    }
    if (this.fd < 0) {
      this.index = m.index;
      this.headHash = m.head;
      this.needsNewline = m.needsNewline;
      return;
    }
    ftruncateSync(this.fd, m.size);
    this.dirty = true;
    this.size = m.size;
    this.index = m.index;
    this.headHash = m.head;
    this.needsNewline = m.needsNewline;
  }

  /** The last event_hash ("" before any event). */
  head(): string {
    return this.headHash;
  }

  /** Events in the chain (the next row's index). */
  count(): number {
    return this.index;
  }

  /**
   * Make every row appended so far durable: fsync the journal (and, once,
   * the run directory when this writer created the file). One fsync covers
   * a whole batch; `journal record` calls it (through close) before it
   * reports a count or head, so an acknowledged event survives power loss.
   */
  sync(): void {
    this.ensureOpen();
    if (!this.dirty || this.fd < 0) return;
    try {
      fsyncSync(this.fd);
    } catch (err) {
      throw writeFailed(this.path, err);
    }
    if (this.created) {
      fsyncDir(this.runDirPath);
      this.created = false;
    }
    this.dirty = false;
  }

  /** Sync, close the file and release the writer lock (idempotent; a failed fsync throws after releasing). */
  close(): void {
    if (this.closed) return;
    try {
      this.sync();
    } finally {
      this.closed = true;
      try {
        if (this.fd >= 0) closeSync(this.fd);
      } finally {
        this.lock.release();
      }
    }
  }
}
