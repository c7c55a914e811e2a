import { existsSync } from "node:fs";
import { VERIFY_MAX_ROW_BYTES } from "../fsutil/input.ts";
import { cutTornTail, repairRefused } from "../fsutil/torn-tail.ts";
import { stateWritePath } from "../fsutil/state-path.ts";
import { lockJournalOrRefuse } from "./seal.ts";
import { verifyJournal, type JournalSeal } from "./verify.ts";
import { scanTail } from "./tail-scan.ts";

export { isTornTail, scanTail, type TailScan } from "./tail-scan.ts";

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
 * As repairJournalTailSync, but a clean journal (the common case: nothing to
 * repair) is recognised at verify speed: a links-only pass of the fast
 * verifier (kernel, all cores) that finds every line a row and the links
 * intact has read what the tail scan would (the same rows, the same last
 * event_hash). Anything else is classified by the exact tail scan, under
 * the same lock.
 */
export async function repairJournalTail(path: string, opts: RepairOptions = {}): Promise<RepairResult> {
  if (!existsSync(path)) return { repaired: false, removed_line_indices: [], event_count: 0, head: "" };
  if (opts.sddDir !== undefined) stateWritePath(opts.sddDir, path, "a repair of the journal");
  const lock = lockJournalOrRefuse(path, path, "repair the journal of");
  try {
    const quick = await verifyJournal(path, { linksOnly: true });
    if (quick.chain_consistent && quick.discarded_line_indices.length === 0 && quick.grew_by === 0) {
      return { repaired: false, removed_line_indices: [], event_count: quick.count, head: quick.head };
    }
    return repairLocked(path, opts);
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

/** The exact tail scan and its verdict; the caller holds the writer lock. */
function repairLocked(path: string, opts: RepairOptions): RepairResult {
  // rows as long as verify and record take them: a journal the writer wrote can be repaired
  const scan = scanTail(path, undefined, VERIFY_MAX_ROW_BYTES);
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
