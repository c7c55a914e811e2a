import { readFileSync, statSync } from "node:fs";

/**
 * Cheap checks `journal verify` makes before it knows whether it needs the
 * rest of tlog/ (which loads node:crypto): kept free of imports so a plain
 * verify pays nothing for them.
 */

/** True when the file at `path` is a signed seal note or checkpoint rather than a seal.json. */
export function isNoteFile(path: string): boolean {
  try {
    // Never open what is not a regular file (a FIFO would block): the seal reader refuses it.
    if (!statSync(path).isFile()) return false;
    const head = readFileSync(path).subarray(0, 64).toString("utf8");
    return !head.trimStart().startsWith("{");
  } catch {
    return false;
  }
}

/** The file's identity (device, inode, size, mtime): unchanged from before a verify to after the leaf pass, or refused. */
export function fileIdentity(path: string): string {
  const s = statSync(path, { bigint: true });
  return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}`;
}
