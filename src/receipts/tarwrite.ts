import { randomBytes } from "node:crypto";
import { closeSync, fdatasync, fsyncSync, ftruncateSync, mkdirSync, openSync, readSync, rmdirSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fsyncDir } from "../fsutil/atomic.ts";
import { publishTemp } from "../fsutil/atomic-stream.ts";
import { trackTemp, untrackTemp } from "../fsutil/temp-files.ts";
import { nextTurn } from "../fsutil/turn.ts";

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

/** Bytes a member takes in the archive: its header, its data, the padding to a block. */
export const memberSpan = (size: number): number => BLOCK + Math.ceil(size / BLOCK) * BLOCK;

/** Written bytes after which the temp file's write-out is started ahead of its fsync (see TarTemp.wrote). */
const FLUSH_AHEAD = 4 << 20;

/**
 * The temp file beside `out` a receipt is written to: created private to
 * this call (`wx`, tracked so a signal removes it), published by fsync and
 * rename, or discarded with the parent directories this call created (a
 * refused or failed write leaves no trace).
 */
class TarTemp {
  readonly fd: number;
  readonly tmp: string;
  private readonly dir: string;
  private readonly madeDir: string | undefined;
  private closed = false;
  private unflushed = 0;
  /** The write-out started ahead, while it runs (the descriptor stays open until it ends). */
  private flushing: Promise<void> | null = null;
  constructor(out: string, opts: TarWriteOptions) {
    this.dir = dirname(out);
    this.madeDir = mkdirSync(this.dir, { recursive: true, mode: opts.dirMode ?? 0o755 });
    this.tmp = join(this.dir, `${basename(out)}.tmp.${process.pid}.${randomBytes(4).toString("hex")}`);
    // read too: a placed member's data may have to be moved
    this.fd = openSync(this.tmp, "wx+", opts.fileMode ?? 0o644);
    trackTemp(this.tmp);
  }
  /**
   * `n` more bytes were written. Every few MB the kernel is asked to start
   * writing them out (fdatasync on the I/O thread pool, while the receipt
   * is still being made), so the fsync before the rename waits for the
   * last few MB instead of the whole receipt. Only a
   * head start: that fsync is the guarantee, and reports any error.
   */
  wrote(n: number): void {
    this.unflushed += n;
    if (this.unflushed < FLUSH_AHEAD || this.flushing !== null) return;
    this.unflushed = 0;
    this.flushing = new Promise<void>((resolve) =>
      fdatasync(this.fd, () => {
        this.flushing = null;
        resolve();
      }),
    );
  }
  async publish(out: string, replace: boolean): Promise<void> {
    fsyncSync(this.fd);
    // The rename is the point of no return: a signal that came during the
    // (long) fsync is handled first, and the receipt is not published.
    await nextTurn();
    await this.flushing;
    closeSync(this.fd);
    this.closed = true;
    publishTemp(this.tmp, out, replace);
    untrackTemp(this.tmp);
    fsyncDir(this.dir);
  }
  async discard(): Promise<void> {
    await this.flushing;
    if (!this.closed) {
      try {
        closeSync(this.fd);
      } catch {
        /* already closed */
      }
    }
    try {
      unlinkSync(this.tmp);
    } catch {
      /* already renamed */
    }
    untrackTemp(this.tmp);
    if (this.madeDir === undefined) return;
    // Innermost first, up to the first directory this call made; one that is no longer empty stays.
    for (let d = this.dir; d.length >= this.madeDir.length; d = dirname(d)) {
      try {
        rmdirSync(d);
      } catch {
        return;
      }
    }
  }
}

/** The end-of-archive marker (two zero blocks) and the record padding after `dataEnd` bytes. */
function archiveEnd(dataEnd: number): number {
  const end = dataEnd + 2 * BLOCK;
  return end + ((RECORD - (end % RECORD)) % RECORD);
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
  const t = new TarTemp(out, opts);
  try {
    let total = 0;
    let yielded = 0;
    const emit = async (bytes: Uint8Array): Promise<void> => {
      writeAll(t.fd, bytes);
      t.wrote(bytes.length);
      total += bytes.length;
      // Give the event loop a turn every few MB so a SIGINT/SIGTERM handler
      // can run (and remove this temp file) instead of waiting for the whole receipt.
      if (total - yielded >= YIELD_EVERY_BYTES) {
        yielded = total;
        await nextTurn();
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
    const end = archiveEnd(total);
    if (end > total) writeAll(t.fd, new Uint8Array(end - total));
    await t.publish(out, opts.replace ?? true);
  } catch (err) {
    await t.discard();
    throw err;
  }
}

/**
 * An archive whose last member's data is written first, while it is being
 * made, straight into the temp file after a reserved head region (that
 * member's size and the members before it are known only at the end).
 * `finish` writes the members before it and the headers into the region;
 * when the region's guess was wrong the data is moved (one copy within the
 * file) so the layout is exactly `writeTarAtomic`'s.
 */
export class PlacedTarWriter {
  private readonly t: TarTemp;
  private at: number;
  private size = 0;
  /** `reserve`: the guessed bytes of the members before the placed one (see `memberSpan`). */
  constructor(
    private readonly out: string,
    private readonly opts: TarWriteOptions,
    reserve: number,
  ) {
    this.t = new TarTemp(out, opts);
    this.at = reserve + BLOCK;
  }
  /** Append bytes to the placed member's data. */
  write(bytes: Uint8Array): void {
    for (let off = 0; off < bytes.length; ) off += writeSync(this.t.fd, bytes, off, bytes.length - off, this.at + this.size + off);
    this.size += bytes.length;
    this.t.wrote(bytes.length);
  }
  async finish(heads: { name: string; bytes: Uint8Array }[], name: string): Promise<void> {
    const at = heads.reduce((n, h) => n + memberSpan(h.bytes.length), 0) + BLOCK;
    if (at !== this.at) this.move(at);
    const mtime = new Date(Math.floor(Date.now() / 1000) * 1000);
    let p = 0;
    const put = (bytes: Uint8Array, pos: number) => {
      for (let off = 0; off < bytes.length; ) off += writeSync(this.t.fd, bytes, off, bytes.length - off, pos + off);
    };
    for (const h of heads) {
      put(ustarHeader(h.name, h.bytes.length, 0o600, mtime), p);
      put(h.bytes, p + BLOCK);
      // the block's padding: the region may hold data of a wrong guess
      const padded = memberSpan(h.bytes.length) - BLOCK;
      if (padded > h.bytes.length) put(new Uint8Array(padded - h.bytes.length), p + BLOCK + h.bytes.length);
      p += memberSpan(h.bytes.length);
    }
    put(ustarHeader(name, this.size, 0o600, mtime), p);
    const dataEnd = at + Math.ceil(this.size / BLOCK) * BLOCK;
    const end = archiveEnd(dataEnd);
    put(new Uint8Array(end - (at + this.size)), at + this.size);
    ftruncateSync(this.t.fd, end);
    await this.t.publish(this.out, this.opts.replace ?? true);
  }
  /** The data to its real offset (forwards when it moves down, backwards when up: the ranges may overlap). */
  private move(to: number): void {
    const chunk = new Uint8Array(4 << 20);
    const from = this.at;
    const n = this.size;
    const copy = (off: number) => {
      const len = Math.min(chunk.length, n - off);
      const got = readSync(this.t.fd, chunk, 0, len, from + off);
      if (got !== len) throw new Error(`tar temp ${this.t.tmp}: short read while moving the data`);
      for (let w = 0; w < len; ) w += writeSync(this.t.fd, chunk, w, len - w, to + off + w);
    };
    if (to < from) for (let off = 0; off < n; off += chunk.length) copy(off);
    else for (let off = Math.floor((n - 1) / chunk.length) * chunk.length; off >= 0 && n > 0; off -= chunk.length) copy(off);
    this.at = to;
  }
  discard(): Promise<void> {
    return this.t.discard();
  }
}

/** A member whose bytes are already in memory (manifest, signature). */
export function bytesMember(name: string, bytes: Uint8Array): OutMember {
  return { name, size: bytes.length, produce: (write) => write(bytes) };
}
