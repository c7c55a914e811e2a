import { tailVerdict, type TailVerdict } from "../fsutil/torn-tail.ts";
import { MAX_LINE_BYTES, physicalLines } from "../fsutil/lines.ts";
import { pyStr } from "../pyjson/python.ts";
import { RAW_STRING_MIN } from "../pyjson/row.ts";
import { classifyLine, type JournalRow } from "./reader.ts";

/**
 * The tail scan of `replay repair`'s policy (repair.ts), on its own so the
 * verdict (verdict-failure.ts) can ask it whether lost lines are a torn
 * tail without importing the repair (which verifies, and so the verdict).
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

/** One streaming pass classifying the tail; a line over `maxLineBytes` (default: every reader's 16 MiB) is `row_too_large`. */
export function scanTail(path: string, onRow?: (row: JournalRow) => void, maxLineBytes = MAX_LINE_BYTES): TailScan {
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

/** Whether the discards of `path` are a repairable torn tail (what `resume` tells apart from corruption). */
export function isTornTail(path: string): boolean {
  return scanTail(path).tornTail;
}
