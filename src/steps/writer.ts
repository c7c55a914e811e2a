import { chmodSync, closeSync, existsSync, fchmodSync, fstatSync, fsyncSync, mkdirSync, openSync, readSync, writeSync } from "node:fs";
import { join } from "node:path";
import { BernsteinError, ExitCode, InputError, RefusalError } from "../errors/index.ts";
import { JOURNAL_MAX_ROW_BYTES, rowLimitText } from "../fsutil/input.ts";
import { acquireLock, LockHeldError, type FileLock } from "../fsutil/lock.ts";
import { stateWritePath } from "../fsutil/state-path.ts";
import { cutTornTail, endsWithTerminator, repairRefused, tailVerdict } from "../fsutil/torn-tail.ts";
import { canonical } from "../pyjson/encode.ts";
import { DEFAULT_MAX_DEPTH } from "../pyjson/parse.ts";
import { pyInt as pyIntOf, pyRepr, pyStr, pyPrefix } from "../pyjson/python.ts";
import { PyNum, PyRaw, pyFloat, type PyLike, type PyObject } from "../pyjson/types.ts";
import { GENESIS_HASH, stepHash } from "./hash.ts";
import { agentJournalDir, BUCKET_NAME } from "./paths.ts";
import { classifyLine, forEachFileLineSync } from "./reader.ts";
import { rowHashFields, type WalkResult } from "./walk.ts";
import { walkStepJournalSync } from "./verify.ts";

/** One step as the orchestrator records it (one per agent invocation). */
export interface StepInput {
  input_hash: string;
  model?: string | null;
  prompt?: string | null;
  tool_call?: PyLike;
  tool_result?: PyLike;
  blob_refs?: string[];
  effort?: string | null;
}

export interface AppendedStep {
  seq: number;
  step_hash: string;
}

/** A journal that cannot be continued safely (exit 3: the file is not what it claims). */
export class StepJournalCorruptError extends InputError {
  constructor(message: string, facts: Record<string, unknown> = {}) {
    super("agent_journal_corrupt", message, facts);
  }
}

export interface Tip {
  head: string;
  nextSeq: number;
  /** First malformed line after the last good row (a torn tail), if any. */
  tornFrom: number | null;
}

/**
 * The tip of the bucket, every row revalidated (fail closed, §1.4). The
 * verifier's walk (the step kernel, at hashing speed) that finds no error
 * has checked every line as the exact walk below would (each non-blank
 * line an entry, its seq the next, its link, its recomputed hash), so its
 * head and count are the tip; anything else (a torn tail, a refusal) is
 * decided by the exact walk. `quick` false: the exact walk alone (tests
 * hold the two to the same outcome).
 */
export function recoverTip(path: string, quick = true): Tip {
  if (quick && existsSync(path)) {
    const tip = cleanTip(path);
    if (tip !== null) return tip;
  }
  return recoverTipExact(path);
}

function cleanTip(path: string): Tip | null {
  let walk: WalkResult;
  try {
    walk = walkStepJournalSync(path).walk;
  } catch {
    return null; // (an unreadable or overlong line: the exact walk names it)
  }
  return walk.errors.length === 0 ? { head: walk.head_hash, nextSeq: walk.steps, tornFrom: null } : null;
}

/**
 * Walk the bucket and revalidate every row exactly: a malformed line
 * followed by any well-formed row is interior corruption and refuses;
 * malformed lines at the very end are a torn tail.
 */
function recoverTipExact(path: string): Tip {
  const tip: Tip = { head: GENESIS_HASH, nextSeq: 0, tornFrom: null };
  if (!existsSync(path)) return tip;
  let firstBad: { lineNo: number; offset: number } | null = null;
  const bad: number[] = [];
  let lastLine = 0;
  let lineStart = 0;
  const fail = (lineNo: number, what: string): never => {
    throw new StepJournalCorruptError(`journal ${path}: line ${lineNo} ${what} Move the journal aside to recover.`, {
      path,
      line: lineNo,
    });
  };
  forEachFileLineSync(path, "universal", (line, lineNo, splitter) => {
    const start = lineStart;
    lineStart = splitter.nextLineStart;
    lastLine = lineNo;
    const k = classifyLine(line);
    if (k.kind === "blank") return;
    if (k.kind === "malformed") {
      if (firstBad === null) firstBad = { lineNo, offset: start };
      bad.push(lineNo);
      return;
    }
    if (firstBad !== null) {
      throw new StepJournalCorruptError(
        `journal ${path}: line ${(firstBad as { lineNo: number }).lineNo} is corrupt but line ${lineNo} continues the chain; refusing to recover across a broken interior row. Move the journal aside to recover.`,
        { path, line: (firstBad as { lineNo: number }).lineNo },
      );
    }
    const row = k.row;
    const rawSeq = row.get("seq");
    const seq = rawSeq === undefined ? null : pyIntOf(rawSeq);
    if (seq === null) fail(lineNo, `has a non-integer seq (got ${pyRepr(rawSeq ?? null)}); chain is broken.`);
    if (seq !== BigInt(tip.nextSeq)) fail(lineNo, `seq mismatch (expected ${tip.nextSeq}, got ${seq}); chain is broken.`);
    const f = rowHashFields(row);
    if (f.prev_hash !== tip.head) {
      fail(lineNo, `prev_hash mismatch (expected ${pyPrefix(tip.head, 16)}..., got ${pyPrefix(f.prev_hash, 16)}...); chain is broken.`);
    }
    const recomputed = stepHash(f);
    const stored = pyStr(row.get("step_hash"), "");
    if (recomputed !== stored) {
      fail(
        lineNo,
        `step_hash mismatch (recomputed ${pyPrefix(recomputed, 16)}..., stored ${pyPrefix(stored, 16)}...); the row is tampered or inconsistent.`,
      );
    }
    tip.head = stored;
    tip.nextSeq++;
  });
  if (firstBad !== null) {
    const v = tailVerdict({ path, discarded: bad, lastLine, firstDiscardedAt: (firstBad as { offset: number }).offset, terminated: endsWithTerminator(path) });
    if (v.kind === "refused") throw repairRefused(path, v.reason, { discarded_line_indices: bad });
    if (v.kind === "torn") tip.tornFrom = v.cutOffset;
  }
  return tip;
}

/**
 * The append-only, hash-chained step journal of one agent
 * (`<sdd>/runtime/journal/<id>/000000.jsonl`). Opening takes a cross-process
 * lock (`000000.jsonl.lock`, held until `close()`), so at most one writer per
 * agent exists across processes; appends are synchronous, so writers in one
 * thread never interleave.
 */
export class StepJournal {
  readonly dir: string;
  readonly path: string;
  private fd: number | null;
  private lock: FileLock | null;
  private tip: string;
  private seq: number;
  /** The bucket ends in a complete row without a line break: end that line before the next row. */
  private needsNewline: boolean;

  private constructor(
    dir: string,
    path: string,
    fd: number,
    lock: FileLock,
    tip: string,
    seq: number,
    needsNewline: boolean,
    /** The longest row written: what every reader of a step journal takes (a longer one is row_too_large, nothing written). */
    private readonly maxRowBytes: number,
  ) {
    this.dir = dir;
    this.path = path;
    this.fd = fd;
    this.lock = lock;
    this.tip = tip;
    this.seq = seq;
    this.needsNewline = needsNewline;
  }

  static open(sddDir: string, agentId: string, opts: { maxRowBytes?: number } = {}): StepJournal {
    const dir = agentJournalDir(sddDir, agentId);
    const path = stateWritePath(sddDir, join(dir, BUCKET_NAME), `the step journal of agent ${agentId}`);
    const unwritable = (err: unknown): BernsteinError =>
      new BernsteinError("agent_journal_unwritable", `cannot open the step journal at ${path}: ${(err as Error).message}`, ExitCode.INPUT);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw unwritable(err);
    }
    try {
      chmodSync(dir, 0o700);
    } catch {
      /* best effort, as the reference */
    }
    let lock: FileLock;
    try {
      lock = acquireLock(`${path}.lock`);
    } catch (err) {
      if (err instanceof LockHeldError) {
        throw new RefusalError("agent_journal_locked", `the step journal of agent ${agentId} is open in another writer (${err.message})`);
      }
      throw unwritable(err);
    }
    try {
      const tip = recoverTip(path);
      // The one torn-tail policy (src/fsutil/torn-tail.ts): the fragment is saved beside the journal.
      if (tip.tornFrom !== null) cutTornTail(path, tip.tornFrom);
      let fd: number;
      try {
        fd = openSync(path, "a+", 0o600);
      } catch (err) {
        throw unwritable(err);
      }
      return new StepJournal(dir, path, fd, lock, tip.head, tip.nextSeq, endsWithoutBreak(fd), opts.maxRowBytes ?? JOURNAL_MAX_ROW_BYTES);
    } catch (err) {
      lock.release();
      throw err;
    }
  }

  head(): string {
    return this.tip;
  }

  nextSeq(): number {
    return this.seq;
  }

  append(step: StepInput): AppendedStep {
    if (this.fd === null) throw new BernsteinError("agent_journal_closed", `journal at ${this.dir} is closed`, ExitCode.USAGE);
    if (typeof step.input_hash !== "string") throw new TypeError("input_hash must be a string");
    const fields = {
      prev_hash: this.tip,
      input_hash: step.input_hash,
      model: step.model ?? null,
      prompt: step.prompt ?? null,
      tool_call: step.tool_call ?? null,
      tool_result: step.tool_result ?? null,
      effort: step.effort ?? null,
    };
    const hash = stepHash(fields);
    const row: Record<string, PyLike> = {
      seq: this.seq,
      prev_hash: fields.prev_hash,
      input_hash: fields.input_hash,
      model: fields.model,
      prompt: fields.prompt,
      tool_call: fields.tool_call,
      tool_result: fields.tool_result,
      step_hash: hash,
      ts: pyFloat((performance.timeOrigin + performance.now()) / 1000),
      blob_refs: [...(step.blob_refs ?? [])],
      schema_version: 2,
    };
    if (fields.effort !== null) row.effort = fields.effort;
    // The writer never writes a row its readers refuse: nested deeper than they read (as Python's json, which
    // fails near the same depth) ...
    if (nestedPast(row, DEFAULT_MAX_DEPTH)) {
      throw new InputError(
        "row_too_deep",
        `step ${this.seq} would be a row nested more than ${DEFAULT_MAX_DEPTH} levels deep, past what a step journal's readers take; refusing to write it (the journal is unchanged)`,
        { seq: this.seq, limit_depth: DEFAULT_MAX_DEPTH },
      );
    }
    const line = canonical(row);
    // ... or longer. Canonical JSON is ASCII: its length is its size in bytes.
    if (line.length > this.maxRowBytes) {
      throw new InputError(
        "row_too_large",
        `step ${this.seq} would be a row of ${line.length} bytes, over the row limit of ${this.maxRowBytes} bytes (${rowLimitText(this.maxRowBytes)}) a step journal's readers take; refusing to write it (the journal is unchanged)`,
        { seq: this.seq, row_bytes: line.length, limit_bytes: this.maxRowBytes },
      );
    }
    const bytes = Buffer.from((this.needsNewline ? "\n" : "") + line + "\n", "utf8");
    try {
      // One write per line (O_APPEND): a crash leaves at most a torn tail.
      let off = 0;
      while (off < bytes.length) off += writeSync(this.fd, bytes, off, bytes.length - off);
      try {
        fchmodSync(this.fd, 0o600);
      } catch {
        /* best effort */
      }
    } catch (err) {
      throw new BernsteinError("agent_journal_append_failed", `journal append failed: ${(err as Error).message}`, ExitCode.INPUT);
    }
    const seq = this.seq;
    this.needsNewline = false;
    this.tip = hash;
    this.seq++;
    return { seq, step_hash: hash };
  }

  /** fsync the bucket (appends are written immediately; this makes them durable). */
  sync(): void {
    if (this.fd !== null) fsyncSync(this.fd);
  }

  close(): void {
    const fd = this.fd;
    if (fd === null) return;
    this.fd = null;
    try {
      fsyncSync(fd);
    } catch {
      /* best effort */
    }
    try {
      closeSync(fd);
    } finally {
      // a close that fails (EIO, EBADF) still lets the journal go: the next writer is not refused for it
      this.lock?.release();
      this.lock = null;
    }
  }
}

/**
 * Whether the file's last byte is not a line break (a complete last row
 * whose "\n" never reached the disk, or a foreign writer's file): the next
 * row must not be glued onto that line.
 */
function endsWithoutBreak(fd: number): boolean {
  const size = fstatSync(fd).size;
  if (size === 0) return false;
  const last = new Uint8Array(1);
  readSync(fd, last, 0, 1, size - 1);
  return last[0] !== 0x0a && last[0] !== 0x0d;
}

export type { PyObject };

/**
 * Whether `v`'s containers nest more than `limit` deep (a value that is one
 * container is 1 deep). A `PyRaw` is a value a reader kept as its bytes, so
 * within its bound already: counted as one level.
 */
function nestedPast(v: PyLike, limit: number): boolean {
  if (limit < 1) return v !== null && typeof v === "object" && !(v instanceof PyNum);
  if (v === null || typeof v !== "object" || v instanceof PyNum || v instanceof PyRaw) return false;
  const items = Array.isArray(v) ? v : v instanceof Map ? v.values() : Object.values(v);
  for (const x of items) if (nestedPast(x as PyLike, limit - 1)) return true;
  return false;
}
