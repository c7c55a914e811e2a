import { existsSync } from "node:fs";
import { join } from "node:path";
import { InputError, UsageError } from "../errors/index.ts";
import { checkInput, inputAsFile, isStdinPath, openInput, readChunks, spoolStdin } from "../fsutil/input.ts";
import { remoteSizeAsync } from "../storage/input.ts";
import { isRemotePath } from "../storage/ref.ts";
import { compareCodePoints } from "../pyjson/encode.ts";
import type { PyObject } from "../pyjson/types.ts";
import { LineSplitter, refusingOverlong, type BulkProbe, type LineDialect } from "../fsutil/lines.ts";
import { agentJournalDir, BUCKET_NAME } from "../steps/paths.ts";
import type { IndexedEntries } from "../steps/indexed.ts";
import { classifyLine } from "../steps/reader.ts";
import { ArchiveError, walkReceipt, type MemberInfo } from "./archive.ts";
import { AmbiguousMemberError } from "./members.ts";
import { ambiguous, DEFAULT_RECEIPT_LIMITS, type ReceiptLimits } from "./verify.ts";

/**
 * Where a journal comes from for `diff-journal`: an agent id, a journal
 * file, or a receipt. All are read as streams of tolerant-reader entries
 * (blank, unparseable, non-object and `step_hash`-less lines skipped).
 */
export type JournalSource = ({ kind: "agent"; agentId: string; path: string } | { kind: "file"; path: string } | { kind: "receipt"; path: string }) & {
  /** Standard input spooled to a temporary file: remove it when done. */
  cleanup?: () => void;
  /** The input as it was given (`-`, a path, an agent id), for refusals. */
  input?: string;
};

/** True when the file starts like a tar (ustar magic) or a gzip stream. */
export async function looksLikeArchive(path: string): Promise<boolean> {
  // a remote object's size first, awaited: opening it then asks nothing of the server
  if (isRemotePath(path)) await remoteSizeAsync(path);
  const input = openInput(path, { what: "journal" });
  if (input === null) return false;
  try {
    // a remote object's bytes are awaited (a signal handler can run meanwhile) and may come a few at a time
    const head = new Uint8Array(263);
    let got = 0;
    while (got < head.length) {
      const n = input.readAsync ? await input.readAsync(head, got, head.length - got, got) : input.read(head, got, head.length - got, got);
      if (n === 0) break;
      got += n;
    }
    if (got >= 2 && head[0] === 0x1f && head[1] === 0x8b) return true;
    return got >= 262 && new TextDecoder("latin1").decode(head.subarray(257, 262)) === "ustar";
  } finally {
    input.close();
  }
}

/**
 * A path that exists is a file (journal or receipt; anything but a regular
 * file is refused, `input_not_regular_file`); `-` or `/dev/stdin` is
 * standard input, copied to a private temporary file first (a receipt is
 * read in more than one pass; remove it with `cleanup`); anything else is an
 * agent id.
 */
export async function resolveJournalSource(spec: string, sddDir: string): Promise<JournalSource> {
  if (isStdinPath(spec)) {
    const spool = await spoolStdin({ what: "journal" });
    try {
      return { ...((await looksLikeArchive(spool.path)) ? { kind: "receipt" as const } : { kind: "file" as const }), path: spool.path, cleanup: spool.cleanup, input: spec };
    } catch (err) {
      spool.cleanup();
      throw err;
    }
  }
  if (isRemotePath(spec)) {
    // A journal in storage is read in place; a receipt (walked by descriptor, in more than one pass) is copied first.
    if (!(await looksLikeArchive(spec))) return { kind: "file", path: spec, input: spec };
    const copy = (await inputAsFile(spec, { what: "receipt" }))!;
    return { kind: "receipt", path: copy.path, cleanup: copy.cleanup };
  }
  if (checkInput(spec, { what: "journal" }) === "regular") {
    return (await looksLikeArchive(spec)) ? { kind: "receipt", path: spec, input: spec } : { kind: "file", path: spec, input: spec };
  }
  const dir = agentJournalDir(sddDir, spec);
  if (!existsSync(dir)) throw new InputError("agent_journal_missing", `no journal for agent ${spec}`, { agent_id: spec });
  return { kind: "agent", agentId: spec, path: join(dir, BUCKET_NAME), input: spec };
}

/** A one-slot hand-off between a push producer and a pull consumer. */
class Channel<T> {
  private item: T | null = null;
  private closed = false;
  private failure: unknown = null;
  cancelled = false;
  private wakeConsumer: (() => void) | null = null;
  private wakeProducer: (() => void) | null = null;

  async put(item: T): Promise<void> {
    while (this.item !== null && !this.cancelled) await new Promise<void>((r) => (this.wakeProducer = r));
    if (this.cancelled) throw new ChannelCancelled();
    this.item = item;
    this.wakeConsumer?.();
  }
  close(err?: unknown): void {
    this.closed = true;
    if (err !== undefined) this.failure = err;
    this.wakeConsumer?.();
  }
  cancel(): void {
    this.cancelled = true;
    this.wakeProducer?.();
  }
  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for (;;) {
      while (this.item === null && !this.closed) await new Promise<void>((r) => (this.wakeConsumer = r));
      if (this.item !== null) {
        const it = this.item;
        this.item = null;
        this.wakeProducer?.();
        yield it;
        continue;
      }
      if (this.failure !== null) throw this.failure;
      return;
    }
  }
}
class ChannelCancelled extends Error {}

/**
 * What a stream of a source's lines is turned into, batch by batch: the
 * lines of one input chunk (views valid only during `line`) are collected
 * and `take` hands them over before the next chunk is read.
 */
interface Collector<T> {
  line(bytes: Uint8Array): void;
  take(): T | null;
  /** Takes whole runs of lines from a chunk (see LineCollector). */
  readonly bulk?: (dialect: LineDialect) => BulkProbe;
}

/**
 * The bytes besides the line feed and the carriage return that may begin a
 * break of `dialect` (a lead byte stands for the characters it begins): a
 * bulk probe leaves a span holding one to the splitter.
 */
function otherBreakBytes(dialect: LineDialect): number[] {
  return dialect === "splitlines" ? [0x0b, 0x0c, 0x1c, 0x1d, 0x1e, 0xc2, 0xe2] : [];
}

/** Where the first of `bytes` stands in buf[start, limit), or `limit` (a native search for each). */
function firstOf(buf: Uint8Array, bytes: readonly number[], start: number, limit: number): number {
  for (const c of bytes) {
    const at = buf.indexOf(c, start);
    if (at !== -1 && at < limit) limit = at;
  }
  return limit;
}

/** The tolerant reader's entries (parsed). */
class EntryCollector implements Collector<PyObject[]> {
  private batch: PyObject[] = [];
  /** `skip`: physical lines passed over unread first. */
  constructor(private skip = 0) {}
  /**
   * The lines skipped, passed over a run at a time: each ends at a line
   * feed (a carriage return right before it is the same break), and no
   * view is made of it (a view a line, on a skip of many thousands, is
   * megabytes of garbage). A line that holds another break, or may be
   * over the cap, is left to the splitter, which counts and refuses as
   * for any line.
   */
  readonly bulk = (dialect: LineDialect): BulkProbe => {
    const others = otherBreakBytes(dialect);
    const probe = {
      taken: 0,
      take: (buf: Uint8Array, start: number, end: number, maxLineBytes: number): number => {
        probe.taken = 0;
        if (this.skip === 0) return start;
        const limit = firstOf(buf, others, start, end);
        let cr = buf.indexOf(0x0d, start);
        let p = start;
        let n = 0;
        while (n < this.skip) {
          const nl = buf.indexOf(0x0a, p);
          if (nl === -1 || nl >= limit || nl - p >= maxLineBytes) break;
          if (cr !== -1 && cr < nl) {
            // a carriage return alone is a break of its own
            if (cr !== nl - 1) break;
            cr = buf.indexOf(0x0d, nl + 1);
          }
          p = nl + 1;
          n++;
        }
        this.skip -= n;
        probe.taken = n;
        return p;
      },
    };
    return probe;
  };
  line(bytes: Uint8Array): void {
    if (this.skip > 0) {
      this.skip--;
      return;
    }
    const k = classifyLine(bytes);
    if (k.kind === "entry") this.batch.push(k.row);
  }
  take(): PyObject[] | null {
    if (this.batch.length === 0) return null;
    const b = this.batch;
    this.batch = [];
    return b;
  }
}

/** Values of the entries (steps/indexed.ts: from the codec's index where it can answer). */
class IndexedCollector<T> implements Collector<T[]> {
  private batch: T[] = [];
  constructor(private readonly entries: IndexedEntries<T>) {}
  line(bytes: Uint8Array): void {
    const v = this.entries.line(bytes);
    if (v !== undefined) this.batch.push(v);
  }
  take(): T[] | null {
    if (this.batch.length === 0) return null;
    const b = this.batch;
    this.batch = [];
    return b;
  }
}

/**
 * A batch of a source's lines as bytes, each followed by a line feed: line
 * k is `buf[k === 0 ? 0 : ends[k - 1] + 1, ends[k])` (`ends[k]`: its line
 * feed). `release` hands the buffer back for a later batch once the reader
 * is done with it.
 */
export interface LineBatch {
  buf: Uint8Array;
  ends: number[];
  release(): void;
}

/** Input bytes per batch. */
const BATCH_BYTES = 256 * 1024;

/** The lines themselves, copied out of the read buffers (blank ones dropped: no reader sees them). */
class LineCollector implements Collector<LineBatch> {
  private readonly free: Uint8Array[] = [];
  private buf: Uint8Array = new Uint8Array(2 * BATCH_BYTES);
  private len = 0;
  private ends: number[] = [];
  line(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (this.len + bytes.length + 1 > this.buf.length) {
      const grown = new Uint8Array(Math.max(this.buf.length * 2, this.len + bytes.length + 1));
      grown.set(this.buf.subarray(0, this.len));
      this.buf = grown;
    }
    this.buf.set(bytes, this.len);
    this.len += bytes.length;
    this.ends.push(this.len);
    this.buf[this.len++] = 0x0a;
  }
  /**
   * A bulk probe for the splitter: the lines of a chunk from `start` up to
   * its last line feed, copied with one `set`, when that span holds no
   * other break of the dialect (found with native searches) and no line
   * over the cap; anything else is left to the splitter line by line.
   */
  readonly bulk = (dialect: LineDialect): BulkProbe => {
    const others = dialect === "universal" || dialect === "splitlines" ? [0x0d, ...otherBreakBytes(dialect)] : [];
    const probe = {
      taken: 0,
      take: (buf: Uint8Array, start: number, end: number, maxLineBytes: number): number => {
        probe.taken = 0;
        const last = buf.lastIndexOf(0x0a, end - 1);
        if (last < start) return start;
        // whole lines whose line feed comes before `limit` (the first other break, if any)
        const limit = firstOf(buf, others, start, last + 1);
        const lines: number[] = [];
        for (let p = start, nl = buf.indexOf(0x0a, p); nl !== -1 && nl < limit; p = nl + 1, nl = buf.indexOf(0x0a, p)) {
          if (nl - p > maxLineBytes) break;
          lines.push(nl);
        }
        if (lines.length === 0) return start;
        const to = lines[lines.length - 1]! + 1;
        const n = to - start;
        if (this.len + n > this.buf.length) {
          const grown = new Uint8Array(Math.max(this.buf.length * 2, this.len + n));
          grown.set(this.buf.subarray(0, this.len));
          this.buf = grown;
        }
        this.buf.set(buf.subarray(start, to), this.len);
        const base = this.len - start;
        let prev = start;
        for (const nl of lines) {
          // blank lines are dropped here too (their line feed is kept: it separates nothing)
          if (nl > prev) this.ends.push(base + nl);
          prev = nl + 1;
        }
        this.len += n;
        probe.taken = lines.length;
        return to;
      },
    };
    return probe;
  };

  take(): LineBatch | null {
    if (this.ends.length === 0) return null;
    const backing = this.buf;
    const b = { buf: backing.subarray(0, this.len), ends: this.ends, release: () => void this.free.push(backing) };
    // The reader keeps a batch until it asks for the next one: a buffer it gave back, or a new one.
    this.buf = this.free.pop() ?? new Uint8Array(2 * BATCH_BYTES);
    this.len = 0;
    this.ends = [];
    return b;
  }
}

async function* fileStream<T>(path: string, dialect: LineDialect, maxLineBytes: number, c: Collector<T>): AsyncGenerator<T> {
  const splitter = new LineSplitter(dialect, refusingOverlong((line) => c.line(line), maxLineBytes), maxLineBytes, null, c.bulk?.(dialect) ?? null);
  for (const chunk of readChunks(path, { what: "journal" }, BATCH_BYTES)) {
    splitter.push(chunk);
    const b = c.take();
    if (b !== null) yield b;
  }
  splitter.end();
  const b = c.take();
  if (b !== null) yield b;
}

async function* receiptStream<T>(path: string, limits: ReceiptLimits, c: Collector<T>): AsyncGenerator<T> {
  const members: MemberInfo[] = [];
  try {
    await walkReceipt(path, (m) => {
      if (m.name.startsWith("journal/")) members.push(m);
      return null;
    }, limits);
  } catch (err) {
    if (err instanceof ArchiveError) throw new InputError("receipt_malformed", err.message);
    if (err instanceof AmbiguousMemberError) throw ambiguous(err);
    throw err;
  }
  if (members.length === 0) throw new InputError("receipt_malformed", `receipt missing journal payload: ${path}`);
  const order = members.map((m, i) => ({ m, i })).sort((a, b) => compareCodePoints(a.m.name, b.m.name) || a.i - b.i).map((x) => x.m);
  const inOrder = order.every((m, i) => m === members[i]);
  if (!inOrder && order.length > limits.maxUnorderedJournalMembers) {
    throw new InputError("receipt_malformed", `receipt has ${order.length} journal members out of name order (limit ${limits.maxUnorderedJournalMembers})`);
  }
  const ch = new Channel<T>();
  const splitter = new LineSplitter("splitlines", refusingOverlong((line) => c.line(line), limits.maxLineBytes), limits.maxLineBytes, null, c.bulk?.("splitlines") ?? null);
  const flush = async (): Promise<void> => {
    const b = c.take();
    if (b !== null) await ch.put(b);
  };
  const feedMember = () => {
    let size = 0;
    let last = 0;
    return {
      data: async (chunk: Uint8Array) => {
        if (chunk.length === 0) return;
        size += chunk.length;
        last = chunk[chunk.length - 1]!;
        // in slices, so a batch (and every buffer a reader holds) stays small
        for (let off = 0; off < chunk.length; off += BATCH_BYTES) {
          splitter.push(chunk.subarray(off, off + BATCH_BYTES));
          await flush();
        }
      },
      end: async () => {
        if (size > 0 && last !== 0x0a) splitter.push(new Uint8Array([0x0a]));
        await flush();
      },
    };
  };
  const producer = (async () => {
    try {
      if (inOrder) {
        const wanted = new Set(members.map((m) => m.index));
        await walkReceipt(path, (m) => (wanted.has(m.index) ? feedMember() : null), limits);
      } else {
        for (const target of order) await walkReceipt(path, (m) => (m.index === target.index ? feedMember() : null), limits);
      }
      splitter.end();
      await flush();
      ch.close();
    } catch (err) {
      if (err instanceof ChannelCancelled) return ch.close();
      ch.close(err instanceof ArchiveError ? new InputError("receipt_malformed", err.message) : err instanceof AmbiguousMemberError ? ambiguous(err) : err);
    }
  })();
  try {
    yield* ch;
  } finally {
    ch.cancel();
    await producer;
  }
}

function sourceStream<T>(src: JournalSource, limits: ReceiptLimits, c: Collector<T>): AsyncGenerator<T> {
  if (src.kind === "receipt") return receiptStream(src.path, limits, c);
  return fileStream(src.path, "universal", limits.maxLineBytes, c);
}

/** Entries of a source, streaming; `skipLines`: from that many physical lines on (blank ones counted). */
export async function* sourceEntries(src: JournalSource, limits: ReceiptLimits = DEFAULT_RECEIPT_LIMITS, skipLines = 0): AsyncGenerator<PyObject> {
  for await (const b of sourceStream(src, limits, new EntryCollector(skipLines))) yield* b;
}

/** A value per entry of a source (`entries` decides each line), streaming: a batch per chunk read. */
export function sourceEntryValues<T>(src: JournalSource, entries: IndexedEntries<T>, limits: ReceiptLimits = DEFAULT_RECEIPT_LIMITS): AsyncGenerator<T[]> {
  return sourceStream(src, limits, new IndexedCollector(entries));
}

/** The non-blank lines of a source as bytes, a batch per chunk read, streaming (diff-journal's fast path). */
export function sourceLines(src: JournalSource, limits: ReceiptLimits = DEFAULT_RECEIPT_LIMITS): AsyncGenerator<LineBatch> {
  return sourceStream(src, limits, new LineCollector());
}
