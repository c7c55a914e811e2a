import { tailVerdict, type TailVerdict } from "../fsutil/torn-tail.ts";
import { JOURNAL_MAX_ROW_BYTES } from "../fsutil/input.ts";
import { physicalLines } from "../fsutil/lines.ts";
import { pyStr } from "../pyjson/python.ts";
import { RAW_STRING_MIN } from "../pyjson/row.ts";
import { classifyLine, type JournalRow } from "./reader.ts";

/**
 * The exact tail scan of `replay repair`'s policy (repair.ts) and of a
 * writer resuming a journal (writer.ts): every line classified by the
 * py-json reader, the rows handed on.
 */

export interface TailScan {
  /** Usable rows. */
  count: number;
  /** `str()` of the last row's event_hash ("" for none). */
  head: string;
  discarded: number[];
  /** True when the discards are exactly what the policy repairs: one unterminated final line. */
  tornTail: boolean;
  /** Byte offset where the first discarded line starts (the cut point), or null. */
  cutOffset: number | null;
  verdict: TailVerdict;
}

/** One streaming pass classifying the tail; a line over `maxLineBytes` (default: the run journal's row limit) is `row_too_large`. */
export function scanTail(path: string, onRow?: (row: JournalRow) => void, maxLineBytes = JOURNAL_MAX_ROW_BYTES): TailScan {
  let count = 0;
  let head = "";
  const discarded: number[] = [];
  let cutOffset: number | null = null;
  let lastLine = -1;
  let lastTerminated = true;
  for (const line of physicalLines(path, { maxLineBytes })) {
    lastLine = line.index;
    lastTerminated = line.terminated;
    // the row is checked and dropped before the next line is read: no copy of a long line, and
    // its long strings are hashed from their bytes (never decoded)
    const v = classifyLine(line.bytes, maxLineBytes, true, RAW_STRING_MIN);
    if (v.kind === "discarded") {
      if (cutOffset === null) cutOffset = line.start;
      discarded.push(line.index);
      continue;
    }
    if (v.kind === "row") {
      count++;
      onRow?.(v.row);
      head = pyStr(v.row.get("event_hash"), "");
    }
  }
  const verdict = tailVerdict({ path, discarded, lastLine, firstDiscardedAt: cutOffset, terminated: lastTerminated });
  return { count, head, discarded, tornTail: verdict.kind === "torn", cutOffset, verdict };
}

/**
 * `str()` of the event_hash of the row on the line at byte `start` (a
 * line start) of `path`, read up to `end`; null when that line is no row.
 */
export function lastRowHead(path: string, start: number, end: number, maxLineBytes = JOURNAL_MAX_ROW_BYTES): string | null {
  for (const line of physicalLines(path, { startOffset: start, endOffset: end, maxLineBytes })) {
    const v = classifyLine(line.bytes, maxLineBytes, true, RAW_STRING_MIN);
    return v.kind === "row" ? pyStr(v.row.get("event_hash"), "") : null;
  }
  return null;
}
