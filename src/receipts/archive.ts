import { closeSync, createReadStream, readSync, statSync } from "node:fs";
import { InputError } from "../errors/index.ts";
import { openInput } from "../fsutil/input.ts";
import { ReceiptMembers } from "./members.ts";
import { planPlainTar, readTar, TarError, type PlainMember, type TarHeader } from "./plaintar.ts";
import { nextTurn } from "../fsutil/turn.ts";

/**
 * Streaming, read-only walk over a receipt archive (plain or gzip tar),
 * through the one tar reader (src/receipts/plaintar.ts). Nothing is
 * extracted to disk; member data is handed to the visitor chunk by chunk.
 * Hostile archives are refused with `ArchiveError` (the caller turns it
 * into `receipt_malformed`) in bounded time and memory:
 *  - members that are links or devices (symlink, hard link, char/block
 *    device, fifo): refused — a receipt holds regular files only;
 *  - names that are absolute or contain a `..` segment: refused;
 *  - more than `maxMembers` members: refused;
 *  - gzip: decompressed size bounded by max(floor, ratio x file size);
 *  - truncated data (declared size past the end) or an unreadable size: refused;
 *  - PAX/GNU long names rename the member as Python's tarfile reads them
 *    (an unusual name is an unrelated member).
 * `walkReceipt` also admits every member by the receipt format's rules
 * (src/receipts/members.ts: names normalised as tar extracts them, and
 * anything that tar and tarfile might extract differently from what is read
 * refused with `AmbiguousMemberError`); the visitor sees normalised names.
 * bzip2 and xz receipts (which Python would open) are refused by name: the
 * standalone binary carries no decompressor for them.
 *
 * A plain tar whose every header is a plain member (`planPlainTar`, the
 * usual case) is walked without streams: member data is read with readSync
 * into one reusable buffer. Any other archive is streamed through `readTar`.
 */
export class ArchiveError extends Error {}

export interface ArchiveLimits {
  maxMembers: number;
  gzipFloorBytes: number;
  gzipMaxRatio: number;
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = {
  maxMembers: 10_000,
  gzipFloorBytes: 64 * 1024 * 1024,
  gzipMaxRatio: 200,
};

export interface MemberInfo {
  index: number;
  name: string;
  size: number;
  type: string | null;
}

/**
 * Return a data sink for the member, or null to skip its data. A sink may
 * offer a `buffer` for the plain-tar path to read into (chunks are then
 * views of it, valid until `data` returns or its promise settles).
 */
export type MemberVisitor = (
  m: MemberInfo,
) => { data(chunk: Uint8Array): void | Promise<void>; end(): void | Promise<void>; buffer?: Uint8Array } | null;

const READ_CHUNK = 1 << 20;

/** Open the archive (src/fsutil/input.ts: a non-regular file is refused, never waited on). */
function openArchive(path: string): number {
  const input = openInput(path, { what: "receipt", unreadableCode: "receipt_unreadable" });
  if (input === null) throw new InputError("receipt_not_found", `receipt not found: ${path}`, { path });
  return input.fd;
}

function sniff(path: string): Uint8Array {
  const fd = openArchive(path);
  try {
    const head = new Uint8Array(6);
    const got = readSync(fd, head, 0, 6, 0);
    return head.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

type Compression = "none" | "gzip" | "bzip2" | "xz";

/** What the archive's first bytes say it is compressed with (anything unknown is read as a plain tar). */
function compressionOf(magic: Uint8Array): Compression {
  if (magic[0] === 0x1f && magic[1] === 0x8b) return "gzip";
  if (magic[0] === 0x42 && magic[1] === 0x5a && magic[2] === 0x68) return "bzip2";
  if (magic[0] === 0xfd && magic[1] === 0x37 && magic[2] === 0x7a && magic[3] === 0x58 && magic[4] === 0x5a && magic[5] === 0x00) return "xz";
  return "none";
}

/**
 * The archive's tar bytes, pulled a chunk at a time: 1 MiB reads of a plain
 * file, or what node:zlib's gunzip yields, with the decompressed-size cap.
 * `close` releases whatever is open.
 */
async function tarChunks(path: string, compression: Compression, limits: ArchiveLimits): Promise<{ next: () => Promise<Uint8Array | null>; close: () => void }> {
  if (compression === "bzip2" || compression === "xz") {
    throw new ArchiveError(`receipt is ${compression}-compressed; decompress it first (only plain and gzip tars are read)`);
  }
  if (compression === "none") {
    const fd = openArchive(path);
    let pos = 0;
    let reads = 0;
    return {
      next: async () => {
        // Let a long walk share the event loop (a server verifying a large receipt).
        if (++reads % YIELD_EVERY === 0) await nextTurn();
        const chunk = new Uint8Array(READ_CHUNK);
        const got = readSync(fd, chunk, 0, READ_CHUNK, pos);
        pos += got;
        return got === 0 ? null : chunk.subarray(0, got);
      },
      close: () => closeSync(fd),
    };
  }
  const maxBytes = Math.max(limits.gzipFloorBytes, limits.gzipMaxRatio * statSync(path).size);
  const [{ pipeline }, { createGunzip }] = await Promise.all([import("node:stream"), import("node:zlib")]);
  const file = createReadStream(path, { highWaterMark: READ_CHUNK });
  const stream = pipeline(file, createGunzip({ chunkSize: 256 * 1024 }), () => undefined);
  const it = stream[Symbol.asyncIterator]();
  let seen = 0;
  return {
    next: async () => {
      let r: IteratorResult<unknown>;
      try {
        r = await it.next();
      } catch (err) {
        // A gzip stream that is not one: node:zlib's message.
        throw new TarError((err as Error).message);
      }
      if (r.done) return null;
      const chunk = r.value as Uint8Array;
      seen += chunk.length;
      if (seen > maxBytes) {
        throw new ArchiveError(`gzip receipt decompresses past ${maxBytes} bytes (more than ${limits.gzipMaxRatio}x its size): refusing a likely gzip bomb`);
      }
      return chunk;
    },
    close: () => {
      stream.destroy();
      file.destroy();
    },
  };
}

function nameOk(name: string): boolean {
  try {
    checkName(name);
    return true;
  } catch {
    return false;
  }
}

function checkName(name: string): void {
  if (name.startsWith("/") || /^[A-Za-z]:[\\/]/.test(name)) throw new ArchiveError(`receipt member has an absolute path: ${JSON.stringify(name)}`);
  if (name.split(/[\\/]/).includes("..")) throw new ArchiveError(`receipt member path contains '..': ${JSON.stringify(name)}`);
}

const REGULAR = new Set(["file", "contiguous-file"]);

/** The members of a plain tar the fast path can walk, with the file open; null: stream it. */
function plainPlan(path: string, limits: ArchiveLimits): { fd: number; members: PlainMember[] } | null {
  const fd = openArchive(path);
  try {
    const members = planPlainTar(fd, limits.maxMembers, nameOk);
    if (members !== null) return { fd, members };
  } catch {
    // Unreadable here: the streamed walk reports it.
  }
  closeSync(fd);
  return null;
}

const YIELD_EVERY = 16;

/** The plain path's reusable read buffer (a walk takes it, so concurrent walks never share one). */
let readBuffer: Uint8Array | null = null;

async function walkPlain(fd: number, members: PlainMember[], visit: MemberVisitor, admit: ReceiptMembers | null): Promise<number> {
  // A walk in progress (visitor awaiting) keeps its buffer; a concurrent walk gets its own.
  const buf = readBuffer ?? new Uint8Array(READ_CHUNK);
  readBuffer = null;
  let chunks = 0;
  try {
    for (let index = 0; index < members.length; index++) {
      const m = members[index]!;
      const name = admit === null ? m.name : admit.admit(m);
      if (m.type === "directory") continue;
      const sink = visit({ index, name, size: m.size, type: m.type });
      if (sink === null) continue;
      const into = sink.buffer !== undefined && sink.buffer.length > 0 ? sink.buffer : buf;
      let pos = m.offset;
      const end = m.offset + m.size;
      while (pos < end) {
        const got = readSync(fd, into, 0, Math.min(into.length, end - pos), pos);
        if (got <= 0) throw new ArchiveError("receipt is not a valid tar archive: Unexpected end of data");
        pos += got;
        const r = sink.data(into.subarray(0, got));
        if (r !== undefined) await r;
        // Let a long walk share the event loop (a server verifying a large receipt).
        if (++chunks % YIELD_EVERY === 0) await nextTurn();
      }
      const r = sink.end();
      if (r !== undefined) await r;
    }
    return members.length;
  } finally {
    readBuffer = buf;
  }
}

/** Walk every member once, in archive order (names as the archive spells them; no receipt rules). */
export async function walkArchive(path: string, visit: MemberVisitor, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Promise<number> {
  return walk(path, visit, limits, null);
}

/**
 * Walk a receipt's members once, in archive order, each admitted by the
 * receipt format's rules first (`AmbiguousMemberError` at the first that is
 * not); the visitor sees normalised names. Every reader of a receipt walks it
 * this way.
 */
export async function walkReceipt(path: string, visit: MemberVisitor, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Promise<number> {
  return walk(path, visit, limits, new ReceiptMembers());
}

async function walk(path: string, visit: MemberVisitor, limits: ArchiveLimits, admit: ReceiptMembers | null): Promise<number> {
  const compression = compressionOf(sniff(path));
  const plan = compression === "none" ? plainPlan(path, limits) : null;
  if (plan !== null) {
    try {
      return await walkPlain(plan.fd, plan.members, visit, admit);
    } finally {
      closeSync(plan.fd);
    }
  }
  return walkStreamed(path, compression, visit, limits, admit);
}

/** The streamed walk (any archive; the plain fast path must agree with it member for member). */
export async function walkArchiveStreamed(path: string, visit: MemberVisitor, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Promise<number> {
  return walkStreamed(path, compressionOf(sniff(path)), visit, limits, null);
}

/** `walkReceipt` always streamed (tests hold the fast path to it). */
export async function walkReceiptStreamed(path: string, visit: MemberVisitor, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Promise<number> {
  return walkStreamed(path, compressionOf(sniff(path)), visit, limits, new ReceiptMembers());
}

async function walkStreamed(path: string, compression: Compression, visit: MemberVisitor, limits: ArchiveLimits, admit: ReceiptMembers | null): Promise<number> {
  const source = await tarChunks(path, compression, limits);
  let index = 0;
  const onMember = (h: TarHeader) => {
    if (index >= limits.maxMembers) throw new ArchiveError(`receipt has more than ${limits.maxMembers} members`);
    checkName(h.name);
    const name = admit === null ? h.name : admit.admit(h);
    const info: MemberInfo = { index, name, size: h.size, type: h.type };
    index++;
    if (h.type === "directory") return null;
    if (h.type === null || !REGULAR.has(h.type)) {
      throw new ArchiveError(`receipt member ${JSON.stringify(h.name)} is a ${h.type}; a receipt holds regular files only`);
    }
    // A base-256 size field that starts with neither 0x80 nor 0xff reads as null.
    if (!Number.isSafeInteger(h.size)) {
      throw new ArchiveError(`receipt is not a valid tar archive: member ${JSON.stringify(h.name)} has an unreadable size field`);
    }
    return visit(info);
  };
  try {
    const onEnd = (dangling: string, names: string[], strayEnd: boolean) => {
      if (admit !== null) admit.end(dangling, names, strayEnd);
    };
    return await readTar(source.next, onMember, onEnd);
  } catch (err) {
    if (err instanceof TarError) throw new ArchiveError(`receipt is not a valid tar archive: ${err.message}`);
    throw err;
  } finally {
    source.close();
  }
}
