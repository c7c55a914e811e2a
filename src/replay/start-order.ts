import { statSync } from "node:fs";
import { join } from "node:path";
import { BernsteinError, errorMessage } from "../errors/index.ts";
import { readJournalSync } from "../journal/reader.ts";
import { readMetadata } from "../journal/metadata.ts";
import { compareCodePoints } from "../pyjson/encode.ts";
import { numberField } from "./display.ts";
import type { FoundRun } from "./run-ref.ts";
import { ListCache, sameToken, statToken, type CachedMetadata, type CachedRun } from "./list-cache.ts";

/**
 * When a run started, for `latest` and the `replay list` order:
 * `metadata.started_at` when the run has a usable one, else the `ts` of the
 * journal's first row, else unknown. Runs are ordered newest start first;
 * runs without a known start come after every run with one; equal starts
 * (and unknown ones) are ordered by run id, greatest first.
 *
 * Both inputs are served from the `replay list` cache while the stat token
 * of the file they came from is unchanged, so `latest` over thousands of
 * runs costs a stat per file, not a read.
 */
export interface StartedRun {
  run: FoundRun;
  metadata: CachedMetadata | null;
  /** `ts` of the journal's first row, when it was needed (no usable `started_at`) and numeric. */
  firstTs: number | null;
  /** The start the order uses, or null when unknown. */
  start: number | null;
}

/** A run that could not be read while ordering, with the reason. */
export interface SkippedRun {
  runId: string;
  reason: string;
}

/** `metadata.json`'s list fields, from the cache when its stat token still matches. */
export function metadataFields(runDir: string, cached: CachedMetadata | null | undefined): CachedMetadata | null {
  const st = statSync(join(runDir, "metadata.json"), { bigint: true, throwIfNoEntry: false });
  if (!st) return null;
  const token = statToken(st);
  if (cached && sameToken(cached.token, token)) return cached;
  const meta = readMetadata(runDir);
  return {
    token,
    started_at: meta && Number.isFinite(meta.started_at) && meta.started_at !== 0 ? meta.started_at : null,
    git_branch: meta?.git_branch ?? "",
    git_sha: meta?.git_sha ?? "",
  };
}

/** `ts` of the first usable row (null when it has none, or it is not a finite number). Reads one row. */
export function firstRowTs(journal: string): number | null {
  for (const item of readJournalSync(journal, { chunkSize: 65536 })) {
    if (item.kind !== "row") continue;
    const ts = item.row.has("ts") ? numberField(item.row.get("ts")) : null;
    return ts !== null && Number.isFinite(ts) && ts !== 0 ? ts : null;
  }
  return null;
}

function startOf(run: FoundRun, cache: ListCache): StartedRun {
  const prev = cache.get(run.runId);
  const token = statToken(run.stat);
  const metadata = metadataFields(run.runDir, prev?.metadata);
  const fresh = prev !== undefined && sameToken(prev.journal, token);
  // A cached count or first ts belongs to the journal token it was taken at; a new token starts over.
  const next: CachedRun = fresh ? { ...prev, metadata } : { journal: token, metadata };
  let firstTs: number | null = null;
  if (metadata?.started_at == null) {
    firstTs = next.first_ts !== undefined ? next.first_ts : firstRowTs(run.journal);
    next.first_ts = firstTs;
  }
  if (!prev || !sameEntry(prev, next)) cache.set(run.runId, next);
  return { run, metadata, firstTs, start: metadata?.started_at ?? firstTs };
}

function sameEntry(a: CachedRun, b: CachedRun): boolean {
  return sameToken(a.journal, b.journal) && a.event_count === b.event_count && a.first_ts === b.first_ts && sameMetadata(a.metadata, b.metadata);
}

export function sameMetadata(a: CachedMetadata | null | undefined, b: CachedMetadata | null): boolean {
  if (!a || !b) return (a ?? null) === b;
  return sameToken(a.token, b.token) && a.started_at === b.started_at && a.git_branch === b.git_branch && a.git_sha === b.git_sha;
}

export function compareStarted(a: StartedRun, b: StartedRun): number {
  if (a.start !== b.start) {
    if (a.start === null) return 1;
    if (b.start === null) return -1;
    return b.start - a.start;
  }
  return compareCodePoints(b.run.runId, a.run.runId);
}

/**
 * The runs, newest start first. A run whose files cannot be read is left
 * out and reported in `skipped` (never a reason to fail the whole order).
 */
export function orderByStart(runs: readonly FoundRun[], cache: ListCache): { ordered: StartedRun[]; skipped: SkippedRun[] } {
  const ordered: StartedRun[] = [];
  const skipped: SkippedRun[] = [];
  for (const run of runs) {
    try {
      ordered.push(startOf(run, cache));
    } catch (err) {
      skipped.push({ runId: run.runId, reason: unreadableReason(err) });
    }
  }
  ordered.sort(compareStarted);
  return { ordered, skipped };
}

/** One line saying why a run's files could not be read. */
export function unreadableReason(err: unknown): string {
  if (err instanceof BernsteinError) return err.message;
  const code = (err as NodeJS.ErrnoException).code;
  return code ? `${code}: ${errorMessage(err)}` : errorMessage(err);
}
