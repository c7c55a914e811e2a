import { pyStr } from "../pyjson/python.ts";
import { checkRow } from "./check-row.ts";
import { NON_DETERMINISTIC_FIELDS } from "./hash.ts";
import type { Coverage, Divergence, Identity, JournalSeal, JournalVerifyResult } from "./model.ts";
import type { JournalRow } from "./reader.ts";

/**
 * The exact check of a run journal's chain, row by row, and the verdict it
 * adds up to: shared by the exact verifier, the writer's tip recovery and
 * the fast verifier's stitcher (which hands rows it could not prove here).
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

function joinIndices(xs: readonly number[]): string {
  return xs.join(", ");
}

export interface VerdictInput {
  path: string;
  exists: boolean;
  walker: EventChainWalker;
  discarded: number[];
  seal?: JournalSeal | null;
}

/** Combine a finished walk, the discarded lines and an optional seal into the verdict. */
export function verdictOf({ path, exists, walker, discarded, seal }: VerdictInput): JournalVerifyResult {
  const errors: string[] = [];
  const d = walker.divergence;
  const chainConsistent = d === null;
  if (d) errors.push(d.error);
  const coverage: Coverage = discarded.length === 0 ? "complete" : "partial";
  if (coverage === "partial") {
    errors.push(`reader discarded unparsable or non-object physical line(s): ${joinIndices(discarded)}`);
  }
  let identity: Identity = "unverifiable";
  if (seal) {
    if (!exists) {
      identity = "mismatched";
      errors.push("journal file is missing but an external seal exists");
    } else if (
      chainConsistent &&
      coverage === "complete" &&
      walker.prefixHead === seal.head &&
      walker.count === seal.event_count
    ) {
      identity = "verified";
    } else {
      identity = "mismatched";
      if (walker.count !== seal.event_count) {
        errors.push(`journal holds ${walker.count} events but the seal commits to ${seal.event_count}`);
      }
      if (walker.prefixHead !== seal.head) {
        errors.push(
          `journal head ${walker.prefixHead || "(empty)"} does not match sealed head ${seal.head || "(empty)"}`,
        );
      }
    }
  }
  return {
    ok: chainConsistent && coverage === "complete" && identity !== "mismatched",
    path,
    chain_consistent: chainConsistent,
    coverage,
    identity,
    count: walker.count,
    head: walker.prefixHead,
    divergent_index: d ? d.index : null,
    divergent_line: d && d.line != null ? d.line + 1 : null,
    expected_hash: d ? d.expected : null,
    actual_hash: d ? d.actual : null,
    discarded_line_indices: discarded,
    errors,
    unauthenticated_fields: [...NON_DETERMINISTIC_FIELDS],
  };
}

