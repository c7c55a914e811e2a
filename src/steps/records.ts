import { closeSync, readSync, statSync, writeSync } from "node:fs";
import { openAnonymousFile } from "../fsutil/anonymous-file.ts";

/** Records held in memory; beyond this they go to an anonymous temporary file. */
const RECORDS_MEMORY = 8 << 20;

/**
 * The span records (kernel.wat record mode: where each value of a row lies)
 * that the agent view's verifying pass leaves for its render pass over the
 * same file, so the render pass does not scan rows again. In memory up to
 * 8 MiB (125,000 rows), the rest in a temporary file unlinked as soon as it
 * is made (nothing is left behind, memory stays bounded).
 *
 * The records hold for the file as the verifying pass read it: `stamp`
 * (device, inode, size, modification and change times) is taken before and
 * after that pass, and a render pass replays them only when the file's
 * stamp is still that one; otherwise, or for rows without a record, it
 * scans. A temporary file that cannot be written ends the records where
 * they are: a prefix of them is still right.
 */
export class SpanRecords {
  private readonly mem: Uint8Array;
  private memLen = 0;
  private fd: number | null = null;
  private fileLen = 0;
  private ended = false;
  /** The file's stamp when they were made; null: not to be replayed. */
  stamp: string | null = null;

  /**
   * `maxRecords`: no more are kept (a render pass that stops after `--limit`
   * entries needs only the first rows'); `memoryBytes`: how many bytes to
   * hold in memory (a multiple of 64; tests make it small).
   */
  constructor(
    private readonly maxRecords: number | null = null,
    memoryBytes = RECORDS_MEMORY,
  ) {
    this.mem = new Uint8Array(maxRecords === null ? memoryBytes : Math.min(memoryBytes, maxRecords * 64));
  }

  get size(): number {
    return this.memLen + this.fileLen;
  }

  /** Append records (a view is fine: copied or written before this returns). */
  add(bytes: Uint8Array): void {
    if (this.maxRecords !== null) bytes = bytes.subarray(0, Math.max(0, this.maxRecords * 64 - this.size));
    if (this.ended || bytes.length === 0) return;
    const room = this.mem.length - this.memLen;
    const inMem = Math.min(room, bytes.length);
    this.mem.set(bytes.subarray(0, inMem), this.memLen);
    this.memLen += inMem;
    if (inMem === bytes.length) return;
    try {
      const rest = bytes.subarray(inMem);
      const fd = (this.fd ??= openAnonymousFile("records"));
      for (let w = 0; w < rest.length; ) w += writeSync(fd, rest, w, rest.length - w, this.fileLen + w);
      this.fileLen += rest.length;
    } catch {
      // (a record cut by a short write is dropped with the rest)
      this.ended = true;
    }
  }

  /** Records from byte `pos` into `dst` (as many as fit): the bytes copied. */
  read(pos: number, dst: Uint8Array): number {
    const want = Math.min(dst.length, this.size - pos);
    let n = 0;
    if (pos < this.memLen) {
      n = Math.min(want, this.memLen - pos);
      dst.set(this.mem.subarray(pos, pos + n));
    }
    while (n < want) {
      const r = readSync(this.fd!, dst, n, want - n, pos + n - this.memLen);
      if (r === 0) break;
      n += r;
    }
    return n - (n % 64);
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}

/** What identifies a file's contents for the records: device, inode, size, mtime and ctime in ns. */
export function fileStamp(path: string): string | null {
  try {
    const st = statSync(path, { bigint: true });
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  } catch {
    return null;
  }
}
