import { closeSync, openSync, readSync } from "node:fs";
import { firstOfErrors, type ErrorCode } from "../errors.ts";
import type { JournalVerifyResult } from "./verify.ts";

export type JournalFailure = Extract<ErrorCode, "chain_broken" | "torn_tail" | "coverage_partial" | "seal_mismatch">;

/**
 * The error code and one-line detail of a negative journal verdict (null
 * when it is ok), so a verdict carries `error`/`detail` like every other
 * failure. The first failed check names it, in the verifier's order: the
 * chain, then coverage (a torn tail told apart from lines lost in the
 * middle), then the seal; `errors` keeps the full list.
 */
export function journalVerdictFailure(r: JournalVerifyResult): { error: JournalFailure; detail: string } | null {
  if (r.ok) return null;
  if (!r.chain_consistent) return { error: "chain_broken", detail: firstOfErrors(r.errors, "chain broken") };
  if (r.coverage !== "complete") {
    if (isTornTail(r.path, r.discarded_line_indices)) {
      const lines = r.discarded_line_indices.join(", ");
      return {
        error: "torn_tail",
        detail: firstOfErrors([`the journal ends in a torn write (physical line(s) ${lines}); 'replay repair' removes it`, ...r.errors.slice(1)], ""),
      };
    }
    return { error: "coverage_partial", detail: firstOfErrors(r.errors, "coverage partial") };
  }
  return { error: "seal_mismatch", detail: firstOfErrors(r.errors, "seal mismatch") };
}

/**
 * A torn tail: the discarded lines are consecutive and the last of them is
 * the file's last physical line (what `replay repair` cuts). Lines are
 * counted as the reader splits them (`\n`, `\r\n`, lone `\r`) in one
 * streaming pass; it runs only for a verdict that already lost lines.
 */
function isTornTail(path: string, discarded: readonly number[]): boolean {
  if (discarded.length === 0) return false;
  for (let i = 1; i < discarded.length; i++) if (discarded[i] !== discarded[i - 1]! + 1) return false;
  const last = lastLineIndex(path);
  return last !== null && discarded[discarded.length - 1] === last;
}

/** Index of the last physical line (null when unreadable or empty). */
function lastLineIndex(path: string): number | null {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return null;
  }
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    let breaks = 0;
    let size = 0;
    let prevCr = false;
    let endsWithBreak = false;
    for (let n; (n = readSync(fd, buf, 0, buf.length, null)) > 0; size += n) {
      const chunk = buf.subarray(0, n);
      if (!prevCr && chunk.indexOf(0x0d) < 0) {
        // The common case, no CR at all: count LFs with the native search.
        for (let i = chunk.indexOf(0x0a); i >= 0; i = chunk.indexOf(0x0a, i + 1)) breaks++;
      } else {
        for (let i = 0; i < n; i++) {
          const b = chunk[i]!;
          // CRLF is one break, counted at the CR.
          if (b === 0x0d || (b === 0x0a && !prevCr)) breaks++;
          prevCr = b === 0x0d;
        }
      }
      prevCr = chunk[n - 1] === 0x0d;
      endsWithBreak = chunk[n - 1] === 0x0a || chunk[n - 1] === 0x0d;
    }
    if (size === 0) return null;
    return endsWithBreak ? breaks - 1 : breaks;
  } finally {
    closeSync(fd);
  }
}
