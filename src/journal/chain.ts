import { checkRow } from "./check-row.ts";
import type { Divergence } from "./model.ts";
import type { JournalRow } from "./reader.ts";

/**
 * The exact check of a run journal's chain, row by row: shared by the exact
 * verifier, the writer's tip recovery and the fast verifier's stitcher
 * (which hands rows it could not prove here). What a walk adds up to is
 * decided in verdict.ts.
 * (The step journal's walker is steps/walk.ts's ChainWalker.)
 */

/**
 * Walks rows in order, recomputing each event_hash at its position (never
 * the row's own `index` field). The first failure stops hashing; rows after
 * it are still counted.
 */
export class EventChainWalker {
  /** Rows seen so far. */
  count = 0;
  /** Head of the verified prefix (the last stored event_hash that checked out). */
  prefixHead = "";
  divergence: Divergence | null = null;

  /** `line`: the row's 0-based physical line, reported with a divergence (null: not from a file). */
  push(row: JournalRow, line: number | null = null): void {
    const i = this.count++;
    if (this.divergence !== null) return;
    const c = checkRow(row, this.prefixHead, i);
    if (c.failure !== null) {
      this.divergence = { index: i, line, expected: c.expected, actual: c.storedHash, error: `step ${i}: ${c.failure.message}` };
    } else {
      this.prefixHead = c.storedHash;
    }
  }
}
