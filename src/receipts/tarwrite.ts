import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, mkdirSync, openSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fsyncDir } from "../fsutil/atomic.ts";
import { publishTemp } from "../fsutil/atomic-stream.ts";
import { trackTemp, untrackTemp } from "../fsutil/temp-files.ts";

export interface TarWriteOptions {
  /** Rename over an existing file (default); false: create only, refused atomically when the name exists. */
  replace?: boolean;
  fileMode?: number;
  /** Mode of parent directories this call creates. */
  dirMode?: number;
}

/** A member to write: its exact size, and a producer of exactly that many bytes. */
export interface OutMember {
  name: string;
  size: number;
  produce(write: (chunk: Uint8Array) => Promise<void>): Promise<void>;
}

/** Python's tarfile pads the archive to a 20-block record. */
const RECORD = 10240;

function writeAll(fd: number, bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
}

/** A tar block. */
const BLOCK = 512;

const ascii = new TextEncoder();

/** `val` in octal, zero-padded to `n` digits and a space (all sevens when it does not fit), as tar-stream writes it. */
function octal(val: number, n: number): string {
  const o = val.toString(8);
  return o.length > n ? "7".repeat(n) + " " : "0".repeat(n - o.length) + o + " ";
}

/**
 * The ustar header of a regular file: the bytes tar-stream 3 writes for it
 * (the receipt format was first written with it; a test compares the two),
 * written here without a stream so a member's data goes straight to the
 * file instead of through the stream's buffers.
 */
export function ustarHeader(name: string, size: number, mode: number, mtime: Date): Uint8Array {
  if (name.length > 100 || !/^[\x20-\x7e]+$/.test(name)) throw new Error(`tar member name ${JSON.stringify(name)} needs an extended header`);
  const h = new Uint8Array(BLOCK);
  const put = (text: string, at: number) => ascii.encodeInto(text, h.subarray(at));
  put(name, 0);
  put(octal(mode & 0o7777, 6), 100);
  put(octal(0, 6), 108);
  put(octal(0, 6), 116);
  if (size.toString(8).length > 11) {
    // base-256, as tar-stream writes a size of 8 GiB or more
    h[124] = 0x80;
    for (let i = 11, n = size; i > 0; i--, n = Math.floor(n / 0x100)) h[124 + i] = n & 0xff;
  } else put(octal(size, 11), 124);
  put(octal((mtime.getTime() / 1000) | 0, 11), 136);
  h[156] = 0x30; // regular file
  h.set([0x75, 0x73, 0x74, 0x61, 0x72, 0x00, 0x30, 0x30], 257); // "ustar\0" "00"
  put(octal(0, 6), 329);
  put(octal(0, 6), 337);
  let sum = 8 * 32;
  for (let i = 0; i < BLOCK; i++) if (i < 148 || i >= 156) sum += h[i]!;
  put(octal(sum, 6), 148);
  return h;
}

/**
 * Write an uncompressed ustar archive (§2.1: mode 0600, uid/gid 0, empty
 * owner names, mtime now, regular files, 10240-byte record padding) to a
 * temp file beside `out`, fsync it and rename it into place — a receipt
 * never exists half-written under its final name. Parent dirs are created.
 * `opts.replace: false` never overwrites an existing name. Members' bytes
 * are written as they are produced (nothing is buffered here).
 */
const YIELD_EVERY_BYTES = 4 << 20;

export async function writeTarAtomic(out: string, members: OutMember[], opts: TarWriteOptions = {}): Promise<void> {
  const dir = dirname(out);
  mkdirSync(dir, { recursive: true, mode: opts.dirMode ?? 0o755 });
  const tmp = join(dir, `${basename(out)}.tmp.${process.pid}.${randomBytes(4).toString("hex")}`);
  const fd = openSync(tmp, "wx", opts.fileMode ?? 0o644);
  trackTemp(tmp);
  let closed = false;
  try {
    let total = 0;
    let yielded = 0;
    const emit = async (bytes: Uint8Array): Promise<void> => {
      writeAll(fd, bytes);
      total += bytes.length;
      // Give the event loop a turn every few MB so a SIGINT/SIGTERM handler
      // can run (and remove this temp file) instead of waiting for the whole receipt.
      if (total - yielded >= YIELD_EVERY_BYTES) {
        yielded = total;
        await new Promise<void>((r) => setImmediate(r));
      }
    };
    const mtime = new Date(Math.floor(Date.now() / 1000) * 1000);
    for (const m of members) {
      await emit(ustarHeader(m.name, m.size, 0o600, mtime));
      let written = 0;
      await m.produce(async (chunk) => {
        written += chunk.length;
        if (written > m.size) throw new Error(`tar member ${m.name}: more bytes than its declared size ${m.size}`);
        await emit(chunk);
      });
      if (written !== m.size) throw new Error(`tar member ${m.name}: ${written} bytes, not its declared size ${m.size}`);
      const tail = m.size % BLOCK;
      if (tail > 0) await emit(new Uint8Array(BLOCK - tail));
    }
    // The end-of-archive marker (two zero blocks), then the record padding.
    await emit(new Uint8Array(2 * BLOCK));
    const pad = (RECORD - (total % RECORD)) % RECORD;
    if (pad > 0) writeAll(fd, new Uint8Array(pad));
    fsyncSync(fd);
    // The rename is the point of no return: a signal that came during the
    // (long) fsync is handled first, and the receipt is not published.
    await new Promise<void>((r) => setImmediate(r));
    closeSync(fd);
    closed = true;
    publishTemp(tmp, out, opts.replace ?? true);
    untrackTemp(tmp);
    fsyncDir(dir);
  } catch (err) {
    if (!closed) {
      try {
        closeSync(fd);
      } catch {
        /* already closed */
      }
    }
    try {
      unlinkSync(tmp);
    } catch {
      /* never created or already renamed */
    }
    untrackTemp(tmp);
    throw err;
  }
}

/** A member whose bytes are already in memory (manifest, signature). */
export function bytesMember(name: string, bytes: Uint8Array): OutMember {
  return { name, size: bytes.length, produce: (write) => write(bytes) };
}
