import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { checkOutputTarget } from "./output-target.ts";
import { trackTemp, untrackTemp } from "./temp-files.ts";
import { randomHex } from "../hex.ts";

export interface AtomicWriteOptions {
  /** File mode of the new file (default 0o644; secrets use 0o600). */
  mode?: number;
}

/**
 * Write a file so that a crash at any instant leaves either the old content
 * or the new, never a torn file: write a temp file beside it
 * (`<name>.tmp.<pid>.<8 hex>`, as the Python writer names it), fsync, rename
 * over the target, fsync the directory. A target the rename must not
 * replace (a device, a FIFO, a symlink into /proc: see output-target.ts) is
 * refused before anything is created.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): void {
  checkOutputTarget(path);
  const dir = dirname(path);
  const tmp = join(dir, `${basename(path)}.tmp.${process.pid}.${randomSuffix()}`);
  const fd = openSync(tmp, "wx", options.mode ?? 0o644);
  trackTemp(tmp);
  try {
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch {
      /* the temp file is already gone */
    }
    untrackTemp(tmp);
    throw err;
  }
  closeSync(fd);
  try {
    renameSync(tmp, path);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      /* ignore */
    }
    throw err;
  } finally {
    untrackTemp(tmp);
  }
  fsyncDir(dir);
}

/** fsync a directory so a rename in it is durable (best effort on platforms without it). */
export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    /* not supported (e.g. Windows): the rename is still atomic */
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Eight random hex digits for a temp name. */
function randomSuffix(): string {
  return randomHex(4);
}
