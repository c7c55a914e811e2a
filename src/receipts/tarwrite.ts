import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, mkdirSync, openSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { pack as tarPack } from "tar-stream";
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

/**
 * Write an uncompressed ustar archive (§2.1: mode 0600, uid/gid 0, empty
 * owner names, mtime now, regular files, 10240-byte record padding) to a
 * temp file beside `out`, fsync it and rename it into place — a receipt
 * never exists half-written under its final name. Parent dirs are created.
 * `opts.replace: false` never overwrites an existing name.
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
    const pack = tarPack();
    let total = 0;
    let yielded = 0;
    const consuming = (async () => {
      for await (const chunk of pack) {
        writeAll(fd, chunk as Uint8Array);
        total += (chunk as Uint8Array).length;
        // The stream's promises resolve without a trip through the event
        // loop; give it one every few MB so a SIGINT/SIGTERM handler can run
        // (and remove this temp file) instead of waiting for the whole receipt.
        if (total - yielded >= YIELD_EVERY_BYTES) {
          yielded = total;
          await new Promise<void>((r) => setImmediate(r));
        }
      }
    })();
    const mtime = new Date(Math.floor(Date.now() / 1000) * 1000);
    for (const m of members) {
      let entryError: Error | null = null;
      const finished = new Promise<void>((resolve, reject) => {
        const sink = pack.entry(
          { name: m.name, size: m.size, mode: 0o600, mtime, uid: 0, gid: 0, uname: "", gname: "", type: "file" },
          (err) => (err ? reject(err) : resolve()),
        );
        const write = async (chunk: Uint8Array): Promise<void> => {
          if (entryError) throw entryError;
          if (!sink.write(chunk)) await new Promise<void>((r) => sink.once("drain", () => r()));
        };
        sink.once("error", (err: Error) => {
          entryError = err;
        });
        m.produce(write).then(
          () => (sink as unknown as { end(): void }).end(),
          (err) => {
            entryError = err as Error;
            sink.destroy(err as Error);
            reject(err);
          },
        );
      });
      await finished;
    }
    pack.finalize();
    await consuming;
    const pad = (RECORD - (total % RECORD)) % RECORD;
    if (pad > 0) writeAll(fd, new Uint8Array(pad));
    fsyncSync(fd);
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
