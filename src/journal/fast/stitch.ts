import { rowTooLarge } from "../../fsutil/input.ts";
import { eventHash } from "../hash.ts";
import { journalProfile } from "../hash-profiles.ts";
import { chainVerdict } from "../verdict.ts";
import type { Divergence, JournalSeal, JournalVerifyResult, LastLine } from "../model.ts";
import type { RangeResult } from "./range.ts";

/**
 * Join the results of consecutive ranges into the exact verifier's verdict.
 *
 * Each range checked its rows against their own stored prev_hash, so what
 * is left is the link at every range boundary: range k's first row must
 * point at range k-1's last stored event_hash (genesis "" for the first).
 * Walking the ranges in order reproduces Python's single walk: the first
 * failure in row order wins, later rows are only counted, and `head` is the
 * head of the verified prefix.
 */

export interface StitchInput {
  path: string;
  exists: boolean;
  results: readonly RangeResult[];
  seal?: JournalSeal | null;
}

/** True base row index of each range (sum of the rows before it). */
export function trueBases(results: readonly RangeResult[]): number[] {
  const bases: number[] = [];
  let base = 0;
  for (const r of results) {
    bases.push(base);
    base += r.rows;
  }
  return bases;
}

/**
 * Ranges whose hashes were computed at a wrong base index (the stored
 * `index` of their first row, the guess, was not the row's position: rows
 * deleted or duplicated before it, or a lying or missing index) and that
 * can still matter: those up to and including the first range with a
 * failure among the correctly based ones.
 */
export function rangesToRedo(results: readonly RangeResult[]): number[] {
  const bases = trueBases(results);
  const redo: number[] = [];
  for (let k = 0; k < results.length; k++) {
    const r = results[k]!;
    if (r.baseIndex !== bases[k]) {
      if (r.rows > 0) redo.push(k);
      continue;
    }
    if (r.failure !== null) break; // a divergence here: nothing after it can matter
  }
  return redo;
}

export function stitch({ path, exists, results, seal }: StitchInput): JournalVerifyResult {
  let prev = "";
  let base = 0;
  let lineBase = 0;
  let divergence: Divergence | null = null;
  refuseOverlong(path, results);
  const discarded: number[] = [];
  let lastLine: LastLine | null = null;
  for (const r of results) {
    if (divergence === null && r.rows > 0) {
      if (r.baseIndex !== base) throw new Error(`range at byte ${r.start} was verified at row ${r.baseIndex}, not ${base}`);
      const f = r.first!;
      if (f.profileError !== null) {
        divergence = { index: base, line: lineBase + f.line, expected: null, actual: f.storedHash, error: `step ${base}: ${f.profileError}` };
      } else if (f.prev !== prev) {
        const expected = f.payloadHash === null ? null : eventHash(prev, f.eventType, f.payloadHash, base, journalProfile(f.profile));
        divergence = { index: base, line: lineBase + f.line, expected, actual: f.storedHash, error: `step ${base}: prev_hash break` };
      } else if (r.failure !== null) {
        const i = base + r.failure.local;
        divergence = { index: i, line: lineBase + r.failure.line, expected: r.failure.expected, actual: r.failure.actual, error: `step ${i}: ${r.failure.message}` };
        prev = r.failure.prefixHash ?? prev; // the head of the verified prefix
      } else {
        prev = r.lastHash!;
      }
    }
    base += r.rows;
    for (const d of r.discarded) discarded.push(lineBase + d);
    lineBase += r.physLines;
    if (r.physLines > 0) lastLine = { index: lineBase - 1, start: r.lastLineStart, terminated: r.lastLineTerminated };
  }
  return chainVerdict({ path, exists, walk: { count: base, prefixHead: prev, divergence }, discarded, lastLine, seal });
}

/**
 * As the exact reader: a line over the row limit anywhere refuses the
 * whole input (`row_too_large`), named by its 1-based line number — the
 * first such line in file order, whichever thread found it first.
 */
export function refuseOverlong(path: string, results: readonly RangeResult[]): void {
  let lineBase = 0;
  for (const r of results) {
    if (r.overlong.length > 0) throw rowTooLarge(path, lineBase + r.overlong[0]! + 1, r.rowLimit);
    lineBase += r.physLines;
  }
}
