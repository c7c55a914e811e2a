import { closeSync, createReadStream, readSync, statSync } from "node:fs";
import { InputError } from "../errors.ts";
import { openInput } from "../fsutil/input.ts";
import type { Readable } from "node:stream";
import type { Header } from "tar-stream";
import { planPlainTar, type PlainMember } from "./plaintar.ts";

/**
 * Streaming, read-only walk over a receipt archive (plain or gzip tar).
 * Nothing is extracted to disk; member data is handed to the visitor chunk
 * by chunk. Hostile archives are refused with `ArchiveError` (the caller
 * turns it into `receipt_malformed`) in bounded time and memory:
 *  - members that are links or devices (symlink, hard link, char/block
 *    device, fifo): refused — a receipt holds regular files only;
 *  - names that are absolute or contain a `..` segment: refused;
 *  - more than `maxMembers` members: refused;
 *  - gzip: decompressed size bounded by max(floor, ratio x file size);
 *  - truncated data (declared size past the end) or an unreadable size: refused;
 *  - PAX/GNU long-name headers are applied by tar-stream; a PAX path simply
 *    renames the member (an unusual name is an unrelated member).
 * bzip2 and xz receipts (which Python would open) are refused by name: the
 * standalone binary carries no decompressor for them.
 *
 * A plain tar whose headers `planPlainTar` reads exactly as tar-stream
 * would (the usual case) is walked without streams: member data is read
 * with readSync into one reusable buffer. Any other archive (gzip, PAX/GNU
 * long names, anything refused or unusual) goes through tar-stream.
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
  type: Header["type"] | string;
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

/** The archive's tar bytes as a stream (gunzipped when the file is gzip), with the decompressed-size cap. */
async function tarStream(path: string, compression: Compression, limits: ArchiveLimits): Promise<{ stream: Readable; maxBytes: number }> {
  if (compression === "bzip2" || compression === "xz") {
    throw new ArchiveError(`receipt is ${compression}-compressed; decompress it first (only plain and gzip tars are read)`);
  }
  const file = createReadStream(path, { highWaterMark: READ_CHUNK });
  if (compression === "none") return { stream: file, maxBytes: Infinity };
  const maxBytes = Math.max(limits.gzipFloorBytes, limits.gzipMaxRatio * statSync(path).size);
  const [{ pipeline }, { createGunzip }] = await Promise.all([import("node:stream"), import("node:zlib")]);
  const gunzip = createGunzip({ chunkSize: 256 * 1024 });
  return { stream: pipeline(file, gunzip, () => undefined), maxBytes };
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

type Extractor = ReturnType<typeof import("tar-stream").extract>;

const REGULAR = new Set(["file", "contiguous-file"]);

/**
 * Long names the way Python's tarfile reads them (the reference): a GNU
 * long name ('L') or PAX `path` renames the next member, and when several
 * such headers precede one member the FIRST (outermost) wins; a PAX path
 * loses its trailing slashes; an empty one (even an 'L' of size 0) renames
 * the member to "". tar-stream 3.2 lets the last header win, ignores empty
 * names and keeps slashes. Found by the receipt fuzzer against the Python
 * reference (we walked members tarfile does not name journal/...).
 * Patched on this extractor instance only (tar-stream is pinned; the
 * regression tests fail if its internals move).
 */
function matchTarfileLongNames(ex: Extractor): void {
  type Inner = {
    _applyLongHeaders?: () => void;
    _consumeHeader?: () => boolean;
    _decodeLongHeader?: (buf: Uint8Array) => void;
    _gnuLongPath: string | null;
    _pax: Record<string, string> | null;
    _header: Header | null;
  };
  const inner = ex as unknown as Inner;
  const apply = inner._applyLongHeaders;
  const consume = inner._consumeHeader;
  const decode = inner._decodeLongHeader;
  if (typeof apply !== "function" || typeof consume !== "function" || typeof decode !== "function") return;
  /** The name the first name-setting header since the last member gave (undefined: none). */
  let first: string | undefined;
  inner._decodeLongHeader = function (this: Inner, buf: Uint8Array) {
    const type = this._header?.type as string | undefined;
    const pending = this._pax;
    decode.call(this, buf);
    if (type === "gnu-long-path") {
      if (first === undefined) first = this._gnuLongPath ?? "";
    } else if (type === "pax-header" && this._pax) {
      const path = this._pax.path;
      // Keys of an earlier PAX header win over a later one's.
      if (pending) this._pax = { ...this._pax, ...pending };
      if (first === undefined && path !== undefined) first = path.replace(/\/+$/, "");
    }
  };
  inner._consumeHeader = function (this: Inner) {
    const r = consume.call(this);
    const h = this._header;
    // A size-0 'L' header is never decoded by tar-stream: its name is "".
    if ((h?.type as string | undefined) === "gnu-long-path" && h?.size === 0 && first === undefined) first = "";
    return r;
  };
  inner._applyLongHeaders = function (this: Inner) {
    const name = first;
    first = undefined;
    apply.call(this);
    if (name !== undefined && this._header) this._header.name = name;
  };
}

/** The members of a plain tar the fast path can walk, with the file open; null: use tar-stream. */
function plainPlan(path: string, limits: ArchiveLimits): { fd: number; members: PlainMember[] } | null {
  const fd = openArchive(path);
  try {
    const members = planPlainTar(fd, limits.maxMembers, nameOk);
    if (members !== null) return { fd, members };
  } catch {
    // Unreadable here: the stream path reports it.
  }
  closeSync(fd);
  return null;
}

const YIELD_EVERY = 16;

/** The plain path's reusable read buffer (a walk takes it, so concurrent walks never share one). */
let readBuffer: Uint8Array | null = null;

async function walkPlain(fd: number, members: PlainMember[], visit: MemberVisitor): Promise<number> {
  // A walk in progress (visitor awaiting) keeps its buffer; a concurrent walk gets its own.
  const buf = readBuffer ?? new Uint8Array(READ_CHUNK);
  readBuffer = null;
  let chunks = 0;
  try {
    for (let index = 0; index < members.length; index++) {
      const m = members[index]!;
      if (m.type === "directory") continue;
      const sink = visit({ index, name: m.name, size: m.size, type: m.type });
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
        if (++chunks % YIELD_EVERY === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      }
      const r = sink.end();
      if (r !== undefined) await r;
    }
    return members.length;
  } finally {
    readBuffer = buf;
  }
}

/** Walk every member once, in archive order. */
export async function walkArchive(path: string, visit: MemberVisitor, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Promise<number> {
  const compression = compressionOf(sniff(path));
  const plan = compression === "none" ? plainPlan(path, limits) : null;
  if (plan !== null) {
    try {
      return await walkPlain(plan.fd, plan.members, visit);
    } finally {
      closeSync(plan.fd);
    }
  }
  return walkStreamed(path, compression, visit, limits);
}

/** The tar-stream walk (any archive; the plain fast path must agree with it member for member). */
export async function walkArchiveStreamed(path: string, visit: MemberVisitor, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Promise<number> {
  return walkStreamed(path, compressionOf(sniff(path)), visit, limits);
}

async function walkStreamed(path: string, compression: Compression, visit: MemberVisitor, limits: ArchiveLimits): Promise<number> {
  // Loaded only here: the plain path (the usual receipt) needs neither tar-stream nor node:stream.
  const { extract } = await import("tar-stream");
  const { stream: source, maxBytes } = await tarStream(path, compression, limits);
  let seen = 0;
  const ex: Extractor = extract();
  matchTarfileLongNames(ex);
  let sourceError: unknown = null;
  const feeding = (async () => {
    try {
      for await (const chunk of source) {
        if (ex.destroyed) return;
        seen += (chunk as Uint8Array).length;
        if (seen > maxBytes) {
          throw new ArchiveError(
            `gzip receipt decompresses past ${maxBytes} bytes (more than ${limits.gzipMaxRatio}x its size): refusing a likely gzip bomb`,
          );
        }
        if (!ex.write(chunk as Uint8Array)) {
          await new Promise<void>((resolve) => {
            const done = () => {
              ex.off("drain", done);
              ex.off("close", done);
              resolve();
            };
            ex.on("drain", done);
            ex.on("close", done);
          });
        }
      }
      (ex as unknown as { end(): void }).end();
    } catch (err) {
      sourceError = err;
      ex.destroy(err as Error);
    }
  })();
  let index = 0;
  /** An error raised by the visitor (not by the archive) propagates unchanged. */
  let visitorError: { err: unknown } | null = null;
  const guard = async <T>(fn: () => T | Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      visitorError = { err };
      throw err;
    }
  };
  try {
    for await (const entry of ex) {
      const h = entry.header;
      if (index >= limits.maxMembers) throw new ArchiveError(`receipt has more than ${limits.maxMembers} members`);
      const name = h.name; // long names as tarfile reads them: matchTarfileLongNames
      checkName(name);
      const info: MemberInfo = { index, name, size: h.size, type: h.type };
      index++;
      if (h.type === "directory") {
        entry.resume();
        continue;
      }
      if (!REGULAR.has(h.type)) {
        throw new ArchiveError(`receipt member ${JSON.stringify(name)} is a ${h.type}; a receipt holds regular files only`);
      }
      // tar-stream reads a base-256 size field that starts with neither 0x80
      // nor 0xff as null and then waits forever for the member's data.
      if (!Number.isSafeInteger(h.size)) {
        throw new ArchiveError(`receipt is not a valid tar archive: member ${JSON.stringify(name)} has an unreadable size field`);
      }
      const sink = await guard(() => visit(info));
      if (sink === null) {
        entry.resume();
        await new Promise<void>((resolve, reject) => {
          entry.once("end", resolve);
          entry.once("error", reject);
          entry.once("close", resolve);
        });
        continue;
      }
      for await (const chunk of entry) await guard(() => sink.data(chunk as Uint8Array));
      await guard(() => sink.end());
    }
  } catch (err) {
    ex.destroy();
    (source as Readable).destroy();
    await feeding;
    if (visitorError !== null) throw (visitorError as { err: unknown }).err;
    if (err instanceof ArchiveError) throw err;
    if (sourceError instanceof ArchiveError) throw sourceError;
    const detail = sourceError ? (sourceError as Error).message : (err as Error).message;
    throw new ArchiveError(`receipt is not a valid tar archive: ${detail}`);
  }
  await feeding;
  if (sourceError) {
    if (sourceError instanceof ArchiveError) throw sourceError;
    throw new ArchiveError(`receipt is not a valid tar archive: ${(sourceError as Error).message}`);
  }
  return index;
}
