import { statSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../fsutil/atomic.ts";
import { dumps } from "../pyjson/encode.ts";
import { checkRow } from "./check-row.ts";
import { NON_DETERMINISTIC_FIELDS } from "./hash.ts";
import type { LineReadOptions } from "./lines.ts";
import { DIVERGENCE_REPORT_NAME } from "./paths.ts";
import { readJournalSync, type JournalRow } from "./reader.ts";
import type { FastVerifyOptions, FastVerifyResult } from "./fast/engine.ts";

/**
 * Chain verification (spec §1.9). Three separate verdicts, because a clean
 * chain can still be incomplete (discarded lines) or a truncated/extended
 * copy of what was sealed:
 *  - chain_consistent: every usable row links to the previous one and its
 *    event_hash is what the row's content hashes to at its position;
 *  - coverage: "complete" unless the reader discarded physical lines;
 *  - identity: against an external seal {head, event_count}; "unverifiable"
 *    without one.
 */

export interface JournalSeal {
  head: string;
  event_count: number;
}

export type Coverage = "complete" | "partial";
export type Identity = "verified" | "mismatched" | "unverifiable";

export interface JournalVerifyResult {
  ok: boolean;
  path: string;
  chain_consistent: boolean;
  coverage: Coverage;
  identity: Identity;
  /** Usable rows (objects), not physical lines. */
  count: number;
  /** Last event_hash when the chain is consistent ("" for no rows), else null. */
  head: string | null;
  divergent_index: number | null;
  expected_hash: string | null;
  actual_hash: string | null;
  discarded_line_indices: number[];
  errors: string[];
  unauthenticated_fields: string[];
}

export interface Divergence {
  index: number;
  /** Null when the row's hash cannot be computed (unknown hash_profile). */
  expected: string | null;
  actual: string;
  error: string;
}

/**
 * Walks rows in order, recomputing each event_hash at its position (never
 * the row's own `index` field). The first failure stops hashing; rows after
 * it are still counted.
 */
export class ChainWalker {
  /** Rows seen so far. */
  count = 0;
  /** Head of the verified prefix (the last stored event_hash that checked out). */
  prefixHead = "";
  divergence: Divergence | null = null;

  push(row: JournalRow): void {
    const i = this.count++;
    if (this.divergence !== null) return;
    const c = checkRow(row, this.prefixHead, i);
    if (c.failure !== null) {
      this.divergence = { index: i, expected: c.expected, actual: c.storedHash, error: `step ${i}: ${c.failure.message}` };
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
  walker: ChainWalker;
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
    head: chainConsistent ? walker.prefixHead : null,
    divergent_index: d ? d.index : null,
    expected_hash: d ? d.expected : null,
    actual_hash: d ? d.actual : null,
    discarded_line_indices: discarded,
    errors,
    unauthenticated_fields: [...NON_DETERMINISTIC_FIELDS],
  };
}

function fileExists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== "ENOENT";
  }
}

/** Synchronous core of `verifyJournal`: one streaming pass, constant memory. */
export function verifyJournalSync(
  path: string,
  opts: { seal?: JournalSeal | null } & LineReadOptions = {},
): JournalVerifyResult {
  const exists = fileExists(path);
  const walker = new ChainWalker();
  const discarded: number[] = [];
  // A line over MAX_LINE_BYTES is `row_too_large` (thrown by the reader).
  for (const item of readJournalSync(path, opts)) {
    if (item.kind === "row") walker.push(item.row);
    else discarded.push(item.line);
  }
  return verdictOf({ path, exists, walker, discarded, seal: opts.seal });
}

/**
 * The exact reference verifier: one streaming pass of the py-json reader
 * and hash code, single-threaded. `verifyJournal` must always agree with it.
 */
export async function verifyJournalExact(path: string, opts: { seal?: JournalSeal | null } = {}): Promise<JournalVerifyResult> {
  return verifyJournalSync(path, opts);
}

/**
 * Verify the journal at `path` (a missing file is an empty, consistent
 * chain; with a seal it is `mismatched`). Unreadable files throw
 * `InputError` (`journal_unreadable`). Runs the fast engine
 * (src/journal/fast: byte-level, multi-threaded, same verdict as
 * `verifyJournalExact`), loaded on first use.
 */
export async function verifyJournal(path: string, opts: FastVerifyOptions = {}): Promise<FastVerifyResult> {
  const { verifyJournalFast } = await import("./fast/engine.ts");
  return verifyJournalFast(path, opts);
}

/** Python's `verify_events` over rows already in memory. */
export function verifyRows(rows: Iterable<JournalRow>, seal?: JournalSeal | null): JournalVerifyResult {
  const walker = new ChainWalker();
  for (const row of rows) walker.push(row);
  return verdictOf({ path: "", exists: true, walker, discarded: [], seal });
}

/** The bytes of `divergence_report.json`: sorted keys, indent 2, trailing newline. */
export function divergenceReportText(runId: string, r: JournalVerifyResult): string {
  const report = {
    actual_hash: r.actual_hash,
    expected_hash: r.expected_hash,
    run_id: runId,
    step_index: r.divergent_index,
  };
  return dumps(report, { sortKeys: true, indent: 2 }) + "\n";
}

/**
 * Write `<runDir>/divergence_report.json` (atomically) and return its path.
 * Throws on a write failure; callers that treat the report as best effort
 * catch it.
 */
export function writeDivergenceReport(runDirPath: string, runId: string, r: JournalVerifyResult): string {
  const path = join(runDirPath, DIVERGENCE_REPORT_NAME);
  writeFileAtomic(path, divergenceReportText(runId, r));
  return path;
}
