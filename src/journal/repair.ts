import { existsSync, truncateSync } from "node:fs";
import { RefusalError } from "../errors.ts";
import { pyStr } from "../pyjson/python.ts";
import { physicalLines } from "./lines.ts";
import { classifyLine, type JournalRow } from "./reader.ts";
import { lockJournalOrRefuse } from "./seal.ts";
import type { JournalSeal } from "./verify.ts";

/**
 * `replay repair` (spec §8): remove a torn trailing fragment — the mark of
 * a writer killed mid-line — and nothing else. Corruption in the middle and
 * a surviving journal that disagrees with its seal are refused before any
 * byte is written.
 */

export interface TailScan {
  /** Usable rows. */
  count: number;
  /** `str()` of the last row's event_hash ("" for none). */
  head: string;
  discarded: number[];
  /** True when the discarded lines are exactly the last physical lines, contiguously. */
  tornTail: boolean;
  /** Byte offset where the first discarded line starts (the cut point), or null. */
  cutOffset: number | null;
}

/**
 * One streaming pass classifying the tail. A torn tail: the highest
 * discarded index is the last physical line and every line from the lowest
 * discarded index to the end is discarded (a blank or readable line in
 * between makes it middle corruption).
 */
export function scanTail(path: string, onRow?: (row: JournalRow) => void): TailScan {
  let count = 0;
  let head = "";
  const discarded: number[] = [];
  let cutOffset: number | null = null;
  let contiguous = true;
  let lastLineDiscarded = false;
  for (const line of physicalLines(path)) {
    const v = classifyLine(line.bytes);
    if (v.kind === "discarded") {
      if (cutOffset === null) cutOffset = line.start;
      discarded.push(line.index);
      lastLineDiscarded = true;
      continue;
    }
    lastLineDiscarded = false;
    if (cutOffset !== null) contiguous = false;
    if (v.kind === "row") {
      count++;
      onRow?.(v.row);
      head = pyStr(v.row.get("event_hash"), "");
    }
  }
  const tornTail = discarded.length > 0 && contiguous && lastLineDiscarded;
  return { count, head, discarded, tornTail, cutOffset };
}

export interface RepairResult {
  repaired: boolean;
  removed_line_indices: number[];
  event_count: number;
  head: string;
}

/** Whether the discards of `path` form a torn tail (what `resume` tells apart from corruption). */
export function isTornTail(path: string): boolean {
  return scanTail(path).tornTail;
}

/**
 * Truncate a torn tail in place (cut at the first byte of the first
 * discarded line; the file is never rewritten). The journal's writer lock
 * is held meanwhile, so a live writer is never cut under (`journal_locked`).
 * RefusalError `repair_refused` for middle corruption or a seal mismatch.
 */
export async function repairJournalTail(path: string, opts: { seal?: JournalSeal | null } = {}): Promise<RepairResult> {
  return repairJournalTailSync(path, opts);
}

export function repairJournalTailSync(path: string, opts: { seal?: JournalSeal | null } = {}): RepairResult {
  if (!existsSync(path)) return { repaired: false, removed_line_indices: [], event_count: 0, head: "" };
  const lock = lockJournalOrRefuse(path, path, "repair the journal of");
  try {
    const scan = scanTail(path);
    if (scan.discarded.length === 0) {
      return { repaired: false, removed_line_indices: [], event_count: scan.count, head: scan.head };
    }
    const lines = scan.discarded.join(", ");
    if (!scan.tornTail) {
      throw new RefusalError(
        "repair_refused",
        `refusing repair of ${path}: reader discarded physical line(s) ${lines} in the middle of the journal (corruption, not a torn write); repair truncates only a trailing fragment`,
        { path, discarded_line_indices: scan.discarded },
      );
    }
    const seal = opts.seal;
    if (seal && (seal.head !== scan.head || seal.event_count !== scan.count)) {
      throw new RefusalError(
        "repair_refused",
        `refusing repair of ${path}: the surviving journal (head=${scan.head || "(empty)"}, events=${scan.count}) does not match the external seal (head=${seal.head || "(empty)"}, events=${seal.event_count}); the journal is sealed and this command is not its authority`,
        { path, discarded_line_indices: scan.discarded },
      );
    }
    truncateSync(path, scan.cutOffset!);
    return { repaired: true, removed_line_indices: scan.discarded, event_count: scan.count, head: scan.head };
  } finally {
    lock.release();
  }
}
