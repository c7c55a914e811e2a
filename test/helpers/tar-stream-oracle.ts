/**
 * The receipt tar walk as it was before src/receipts/plaintar.ts became the
 * only reader: tar-stream 3.2.2 with its long-name handling patched to
 * Python tarfile's. Kept as a test oracle only: the product's reader must
 * visit the same members, hand over the same bytes and refuse with the same
 * message at the same point (test/receipts/tar-oracle.test.ts).
 */
import { closeSync, createReadStream, openSync, readSync, statSync } from "node:fs";
import type { Readable } from "node:stream";
import type { Header } from "tar-stream";
import { ArchiveError, DEFAULT_ARCHIVE_LIMITS, type ArchiveLimits, type MemberInfo, type MemberVisitor } from "../../src/receipts/archive.ts";

const READ_CHUNK = 1 << 20;
type Compression = "none" | "gzip" | "bzip2" | "xz";

function compressionOf(path: string): Compression {
  const fd = openSync(path, "r");
  const magic = new Uint8Array(6);
  readSync(fd, magic, 0, 6, 0);
  closeSync(fd);
  if (magic[0] === 0x1f && magic[1] === 0x8b) return "gzip";
  if (magic[0] === 0x42 && magic[1] === 0x5a && magic[2] === 0x68) return "bzip2";
  if (magic[0] === 0xfd && magic[1] === 0x37 && magic[2] === 0x7a && magic[3] === 0x58 && magic[4] === 0x5a && magic[5] === 0x00) return "xz";
  return "none";
}

export async function walkArchiveTarStream(path: string, visit: MemberVisitor, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Promise<number> {
  return walkStreamed(path, compressionOf(path), visit, limits);
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
