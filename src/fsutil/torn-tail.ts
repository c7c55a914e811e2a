import { closeSync, constants, existsSync, fstatSync, fsyncSync, ftruncateSync, openSync, readSync } from "node:fs";
import { RefusalError } from "../errors/index.ts";
import { writeFileAtomic } from "./atomic.ts";

/**
 * The one torn-tail policy, for run journals and step journals alike.
 *
 * A writer killed mid-append (or a power loss after its last fsync) leaves
 * exactly one thing: a final line without a line terminator. That line,
 * and nothing else, may be removed. Two or more unreadable lines, an
 * unreadable line that is terminated, or one followed by readable lines
 * are not what a killed writer leaves (re-encoded files, appended garbage,
 * interior damage): they are refused (`repair_refused`, exit 2) and the
 * file is not touched.
 *
 * The cut (etcd's wal/repair shape): copy the fragment beside the journal
 * (`<file>.torn-<ms>`, 0600, fsynced), truncate, fsync. A file with more
 * than one hard link is refused: truncating it would cut every other name.
 */

/** What a line scan learned about a file's unreadable lines. */
export interface TailFacts {
  path: string;
  /** Physical line numbers of the unreadable lines, ascending. */
  discarded: readonly number[];
  /** Number of the last physical line. */
  lastLine: number;
  /** Byte offset where the first unreadable line starts. */
  firstDiscardedAt: number | null;
  /** The file's last byte is a line terminator (LF or CR). */
  terminated: boolean;
}

export type TailVerdict =
  | { kind: "clean" }
  | { kind: "torn"; cutOffset: number }
  | { kind: "refused"; reason: string };

/** Classify the tail (no I/O). */
export function tailVerdict(f: TailFacts): TailVerdict {
  if (f.discarded.length === 0) return { kind: "clean" };
  const lines = f.discarded.join(", ");
  const last = f.discarded[f.discarded.length - 1]!;
  if (last !== f.lastLine || f.discarded.some((n, i) => i > 0 && n !== f.discarded[i - 1]! + 1)) {
    return {
      kind: "refused",
      reason: `reader discarded physical line(s) ${lines} in the middle of the journal (corruption, not a torn write); repair truncates only a trailing fragment`,
    };
  }
  if (f.discarded.length > 1) {
    return {
      kind: "refused",
      reason: `reader discarded ${f.discarded.length} trailing physical lines (${abbreviate(f.discarded)}); a killed writer leaves at most one unterminated final line, so this is not a torn write (a re-encoded file or appended garbage?)`,
    };
  }
  if (f.terminated) {
    return {
      kind: "refused",
      reason: `the unreadable final line ${last} ends with a line terminator, so it is a complete line, not a torn write`,
    };
  }
  return { kind: "torn", cutOffset: f.firstDiscardedAt! };
}

function abbreviate(xs: readonly number[]): string {
  return xs.length <= 6 ? xs.join(", ") : `${xs.slice(0, 3).join(", ")}, ..., ${xs.slice(-2).join(", ")}`;
}

/** Whether the last byte of `path` is LF or CR (false for an empty or missing file). */
export function endsWithTerminator(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return false;
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return false;
    const b = new Uint8Array(1);
    readSync(fd, b, 0, 1, size - 1);
    return b[0] === 0x0a || b[0] === 0x0d;
  } finally {
    closeSync(fd);
  }
}

export function repairRefused(path: string, reason: string, facts: Record<string, unknown> = {}): RefusalError {
  return new RefusalError("repair_refused", `refusing repair of ${path}: ${reason}`, { path, ...facts });
}

export interface TornTailCut {
  /** Where the fragment was saved. */
  saved: string;
  /** Bytes removed from the journal. */
  bytes: number;
}

/**
 * Remove the fragment from `cutOffset` to the end of `path`: save it
 * beside the file, truncate, fsync. The caller holds the journal's writer
 * lock and has classified the tail with `tailVerdict`.
 */
export function cutTornTail(path: string, cutOffset: number): TornTailCut {
  const fd = openSync(path, constants.O_RDWR | (constants.O_NOFOLLOW ?? 0));
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw repairRefused(path, "it is not a regular file");
    if (st.nlink > 1) {
      throw repairRefused(path, `it has ${st.nlink} hard links; truncating it would also cut the file under every other name`, { links: st.nlink });
    }
    const fragment = new Uint8Array(st.size - cutOffset);
    let off = 0;
    while (off < fragment.length) {
      const got = readSync(fd, fragment, off, fragment.length - off, cutOffset + off);
      if (got === 0) break;
      off += got;
    }
    let saved = `${path}.torn-${Date.now()}`;
    for (let i = 1; existsSync(saved); i++) saved = `${path}.torn-${Date.now()}-${i}`;
    writeFileAtomic(saved, fragment.subarray(0, off), { mode: 0o600 });
    ftruncateSync(fd, cutOffset);
    fsyncSync(fd);
    return { saved, bytes: off };
  } finally {
    closeSync(fd);
  }
}
