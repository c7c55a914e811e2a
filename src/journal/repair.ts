import { existsSync } from "node:fs";
import { JOURNAL_MAX_ROW_BYTES } from "../fsutil/input.ts";
import { cutTornTail, repairRefused } from "../fsutil/torn-tail.ts";
import { stateWritePath } from "../fsutil/state-path.ts";
import { lockJournalOrRefuse } from "./seal.ts";
import { verifyJournal, type JournalSeal } from "./verify.ts";
import { lastRowHead, scanTail, type TailScan } from "./tail-scan.ts";
import type { FastVerifyResult } from "./model.ts";
import { tailOfVerdict } from "./verdict-failure.ts";

export { scanTail, type TailScan } from "./tail-scan.ts";

/**
 * `replay repair` (spec §8) under the one torn-tail policy of
 * src/fsutil/torn-tail.ts: remove at most one unterminated final line (the
 * mark of a killed writer), saved beside the journal; refuse everything
 * else, and a surviving journal that disagrees with its seal, before any
 * byte is written.
 */

export interface RepairResult {
  repaired: boolean;
  removed_line_indices: number[];
  event_count: number;
  head: string;
  /** Where the removed fragment was saved (`journal.jsonl.torn-<ms>`), when repaired. */
  saved_fragment?: string;
  removed_bytes?: number;
}

/**
 * Cut a torn tail (one unterminated final line) in place; the file is
 * never rewritten. The journal's writer lock is held meanwhile, so a live
 * writer is never cut under (`journal_locked`). RefusalError
 * `repair_refused` for anything else, a seal mismatch, or a journal with
 * more than one hard link.
 */
export interface RepairOptions {
  seal?: JournalSeal | null;
  /** The state directory holding the journal: the symlink rule for writes applies (src/fsutil/state-path.ts). */
  sddDir?: string;
}

/**
 * As repairJournalTailSync, at verify speed: a links-only pass of the fast
 * verifier (kernel, all cores) reads what the tail scan would (the same
 * rows, the same discarded lines), so the policy decides from its facts
 * (quickScan). Only a broken chain that ends in a torn tail (or a blank
 * line) goes to the exact tail scan, under the same lock.
 */
export async function repairJournalTail(path: string, opts: RepairOptions = {}): Promise<RepairResult> {
  if (!existsSync(path)) return { repaired: false, removed_line_indices: [], event_count: 0, head: "" };
  if (opts.sddDir !== undefined) stateWritePath(opts.sddDir, path, "a repair of the journal");
  const lock = lockJournalOrRefuse(path, path, "repair the journal of");
  try {
    const quick = await verifyJournal(path, { linksOnly: true });
    const scan = quick.grew_by === 0 ? quickScan(path, quick) : null;
    return scan !== null ? settle(path, scan, opts) : repairLocked(path, opts);
  } finally {
    lock.release();
  }
}

export function repairJournalTailSync(path: string, opts: RepairOptions = {}): RepairResult {
  if (!existsSync(path)) return { repaired: false, removed_line_indices: [], event_count: 0, head: "" };
  if (opts.sddDir !== undefined) stateWritePath(opts.sddDir, path, "a repair of the journal");
  const lock = lockJournalOrRefuse(path, path, "repair the journal of");
  try {
    return repairLocked(path, opts);
  } finally {
    lock.release();
  }
}

type TailFacts = Pick<TailScan, "count" | "head" | "discarded" | "verdict">;

/**
 * The tail scan's facts from a links-only verify of the same bytes: its
 * count and discarded lines are the reader's, and so its head where the
 * links held. After a break the verify's head is its verified prefix's,
 * not the last row's event_hash (the scan's), which is then read from the
 * last line alone; null when that line is no row (a torn tail, a blank
 * line): the exact scan decides.
 */
function quickScan(path: string, quick: FastVerifyResult): TailFacts | null {
  const last = quick.lastLine;
  const discarded = quick.discarded_line_indices;
  const verdict = tailOfVerdict(quick);
  if (quick.chain_consistent || verdict.kind === "refused") return { count: quick.count, head: quick.head, discarded, verdict };
  const head = verdict.kind === "clean" && last !== null ? lastRowHead(path, last.start, quick.snapshot_bytes, JOURNAL_MAX_ROW_BYTES) : null;
  return head === null ? null : { count: quick.count, head, discarded, verdict };
}

/** The exact tail scan and its verdict; the caller holds the writer lock. */
function repairLocked(path: string, opts: RepairOptions): RepairResult {
  // rows as long as verify and record take them: a journal the writer wrote can be repaired
  return settle(path, scanTail(path, undefined, JOURNAL_MAX_ROW_BYTES), opts);
}

/** The policy's verdict on a scanned tail carried out: nothing, a refusal, or the cut (the caller holds the writer lock). */
function settle(path: string, scan: TailFacts, opts: RepairOptions): RepairResult {
  const v = scan.verdict;
  if (v.kind === "clean") return { repaired: false, removed_line_indices: [], event_count: scan.count, head: scan.head };
  if (v.kind === "refused") throw repairRefused(path, v.reason, { discarded_line_indices: scan.discarded });
  const seal = opts.seal;
  if (seal && (seal.head !== scan.head || seal.event_count !== scan.count)) {
    throw repairRefused(
      path,
      `the surviving journal (head=${scan.head || "(empty)"}, events=${scan.count}) does not match the external seal (head=${seal.head || "(empty)"}, events=${seal.event_count}); the journal is sealed and this command is not its authority`,
      { discarded_line_indices: scan.discarded },
    );
  }
  const cut = cutTornTail(path, v.cutOffset);
  return {
    repaired: true,
    removed_line_indices: scan.discarded,
    event_count: scan.count,
    head: scan.head,
    saved_fragment: cut.saved,
    removed_bytes: cut.bytes,
  };
}
