import { statSync } from "node:fs";
import { join } from "node:path";
import { JOURNAL_MAX_ROW_BYTES } from "../fsutil/input.ts";
import { writeFileAtomic } from "../fsutil/atomic.ts";
import { dumps } from "../pyjson/encode.ts";
import { physicalLines, type LineReadOptions } from "../fsutil/lines.ts";
import { DIVERGENCE_REPORT_NAME } from "./paths.ts";
import { classifyLine, type JournalRow } from "./reader.ts";
import type { FastVerifyOptions, FastVerifyResult, JournalSeal, JournalVerifyResult, LastLine } from "./model.ts";
import { EventChainWalker } from "./chain.ts";
import { chainVerdict } from "./verdict.ts";

export type { Coverage, Divergence, Identity, JournalSeal, JournalVerifyResult } from "./model.ts";
export { EventChainWalker } from "./chain.ts";
export { chainVerdict, type VerdictInput } from "./verdict.ts";

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
  const walker = new EventChainWalker();
  const discarded: number[] = [];
  let lastLine: LastLine | null = null;
  const read: LineReadOptions = { maxLineBytes: JOURNAL_MAX_ROW_BYTES, ...opts };
  // A line over the row limit (verify's, 256 MiB, unless given) is `row_too_large` (thrown by the reader).
  for (const line of physicalLines(path, read)) {
    lastLine = { index: line.index, start: line.start, terminated: line.terminated };
    const v = classifyLine(line.bytes, read.maxLineBytes, line.owned);
    if (v.kind === "row") walker.push(v.row, line.index);
    else if (v.kind === "discarded") discarded.push(line.index);
  }
  return chainVerdict({ path, exists, walk: walker, discarded, lastLine, seal: opts.seal });
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
  const walker = new EventChainWalker();
  for (const row of rows) walker.push(row);
  return chainVerdict({ path: "", exists: true, walk: walker, discarded: [], lastLine: null, seal });
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
