import { existsSync } from "node:fs";
import { join } from "node:path";
import { InputError, UsageError } from "../errors.ts";
import { checkInput, inputAsFile, isStdinPath, openInput, readChunks, spoolStdin } from "../fsutil/input.ts";
import { isRemotePath } from "../storage/ref.ts";
import { compareCodePoints } from "../pyjson/encode.ts";
import type { PyObject } from "../pyjson/types.ts";
import { LineSplitter, refusingOverlong, type LineDialect } from "../fsutil/lines.ts";
import { agentJournalDir, BUCKET_NAME } from "../steps/paths.ts";
import { classifyLine } from "../steps/reader.ts";
import { ArchiveError, walkArchive, type MemberInfo } from "./archive.ts";
import { DEFAULT_RECEIPT_LIMITS, type ReceiptLimits } from "./verify.ts";

/**
 * Where a journal comes from for `diff-journal`: an agent id, a journal
 * file, or a receipt. All are read as streams of tolerant-reader entries
 * (blank, unparseable, non-object and `step_hash`-less lines skipped).
 */
export type JournalSource = ({ kind: "agent"; agentId: string; path: string } | { kind: "file"; path: string } | { kind: "receipt"; path: string }) & {
  /** Standard input spooled to a temporary file: remove it when done. */
  cleanup?: () => void;
};

/** True when the file starts like a tar (ustar magic) or a gzip stream. */
export function looksLikeArchive(path: string): boolean {
  const input = openInput(path, { what: "journal" });
  if (input === null) return false;
  try {
    const head = new Uint8Array(263);
    const got = input.read(head, 0, head.length, 0);
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
export function resolveJournalSource(spec: string, sddDir: string): JournalSource {
  if (isStdinPath(spec)) {
    const spool = spoolStdin({ what: "journal" });
    try {
      return { ...(looksLikeArchive(spool.path) ? { kind: "receipt" as const } : { kind: "file" as const }), path: spool.path, cleanup: spool.cleanup };
    } catch (err) {
      spool.cleanup();
      throw err;
    }
  }
  if (isRemotePath(spec)) {
    // A journal in storage is read in place; a receipt (walked by descriptor, in more than one pass) is copied first.
    if (!looksLikeArchive(spec)) return { kind: "file", path: spec };
    const copy = inputAsFile(spec, { what: "receipt" })!;
    return { kind: "receipt", path: copy.path, cleanup: copy.cleanup };
  }
  if (checkInput(spec, { what: "journal" }) === "regular") {
    return looksLikeArchive(spec) ? { kind: "receipt", path: spec } : { kind: "file", path: spec };
  }
  const dir = agentJournalDir(sddDir, spec);
  if (!existsSync(dir)) throw new InputError("agent_journal_missing", `no journal for agent ${spec}`, { agent_id: spec });
  return { kind: "agent", agentId: spec, path: join(dir, BUCKET_NAME) };
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

async function* fileEntries(path: string, dialect: LineDialect, maxLineBytes: number): AsyncGenerator<PyObject> {
  let batch: PyObject[] = [];
  const splitter = new LineSplitter(
    dialect,
    refusingOverlong((line) => {
      const k = classifyLine(line);
      if (k.kind === "entry") batch.push(k.row);
    }, maxLineBytes),
    maxLineBytes,
  );
  for (const chunk of readChunks(path, { what: "journal" })) {
    splitter.push(chunk);
    if (batch.length) {
      yield* batch;
      batch = [];
    }
  }
  splitter.end();
  yield* batch;
}

async function* receiptEntries(path: string, limits: ReceiptLimits): AsyncGenerator<PyObject> {
  const members: MemberInfo[] = [];
  try {
    await walkArchive(path, (m) => {
      if (m.name.startsWith("journal/")) members.push(m);
      return null;
    }, limits);
  } catch (err) {
    if (err instanceof ArchiveError) throw new InputError("receipt_malformed", err.message);
    throw err;
  }
  if (members.length === 0) throw new InputError("receipt_malformed", `receipt missing journal payload: ${path}`);
  const order = members.map((m, i) => ({ m, i })).sort((a, b) => compareCodePoints(a.m.name, b.m.name) || a.i - b.i).map((x) => x.m);
  const inOrder = order.every((m, i) => m === members[i]);
  if (!inOrder && order.length > limits.maxUnorderedJournalMembers) {
    throw new InputError("receipt_malformed", `receipt has ${order.length} journal members out of name order (limit ${limits.maxUnorderedJournalMembers})`);
  }
  const ch = new Channel<PyObject[]>();
  let batch: PyObject[] = [];
  const splitter = new LineSplitter(
    "splitlines",
    refusingOverlong((line) => {
      const k = classifyLine(line);
      if (k.kind === "entry") batch.push(k.row);
    }, limits.maxLineBytes),
    limits.maxLineBytes,
  );
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const b = batch;
    batch = [];
    await ch.put(b);
  };
  const feedMember = () => {
    let size = 0;
    let last = 0;
    return {
      data: async (chunk: Uint8Array) => {
        if (chunk.length === 0) return;
        size += chunk.length;
        last = chunk[chunk.length - 1]!;
        splitter.push(chunk);
        await flush();
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
        await walkArchive(path, (m) => (wanted.has(m.index) ? feedMember() : null), limits);
      } else {
        for (const target of order) await walkArchive(path, (m) => (m.index === target.index ? feedMember() : null), limits);
      }
      splitter.end();
      await flush();
      ch.close();
    } catch (err) {
      if (err instanceof ChannelCancelled) return ch.close();
      ch.close(err instanceof ArchiveError ? new InputError("receipt_malformed", err.message) : err);
    }
  })();
  try {
    for await (const b of ch) yield* b;
  } finally {
    ch.cancel();
    await producer;
  }
}

/** Entries of a source, streaming. */
export function sourceEntries(src: JournalSource, limits: ReceiptLimits = DEFAULT_RECEIPT_LIMITS): AsyncGenerator<PyObject> {
  if (src.kind === "receipt") return receiptEntries(src.path, limits);
  return fileEntries(src.path, "universal", limits.maxLineBytes);
}
