import { statSync } from "node:fs";
import { verifyInThread } from "../journal/fast/in-thread.ts";
import { verifyJournal } from "../journal/verify.ts";
import { VerifyWorkers } from "../journal/model.ts";
import { runsRoot } from "../journal/paths.ts";
import { GrowthCollector } from "../fsutil/turn.ts";
import { continuesRun } from "./chain.ts";
import { discoverRuns } from "./discovery.ts";
import { ListCache, sameToken, statToken } from "./list-cache.ts";
import { orderByStart, unreadableReason, type SkippedRun, type StartedRun } from "./start-order.ts";

export { statToken };

/**
 * `replay list`: every run with a journal, newest start first, with its
 * start time, git branch and SHA (from `metadata.json`), event count and
 * journal size. Event counts are usable rows as the journal reader counts
 * them (the number `--verify` reports), counted by streaming the journal
 * once and then served from the sidecar cache while the journal's stat token
 * is unchanged.
 */
export interface RunListEntry {
  run_id: string;
  /** `metadata.started_at` (Unix seconds), null without metadata. */
  started_at: number | null;
  git_branch: string;
  git_sha: string;
  event_count: number;
  size_bytes: number;
  journal: string;
  /** The run this resumed run continues (its `run_started`'s `resumed_from_run`), null when none. */
  continues: string | null;
}

export interface RunList {
  runsDir: string;
  runsDirExists: boolean;
  runs: RunListEntry[];
  /** Entries refused for escaping the runs root (symlinks pointing out). */
  skipped: string[];
  /** Runs left out because their journal or metadata could not be read. */
  unreadable: SkippedRun[];
  /** How many journals had to be (re)counted (0 = all served from the cache). */
  counted: number;
}

/**
 * Journals at least this big are counted by a links-only pass of the fast
 * verifier on all cores; smaller ones (a list of thousands of small runs)
 * by the same pass in this thread, with no workers to start. Either counts
 * usable rows as the reader does, from the bytes: parsing every row of a
 * thousand small runs took several times as long.
 */
export const FAST_COUNT_BYTES = 8 << 20;

/** Growth of the resident set (bytes) after which the list collects garbage (its live heap is small: a collection is cheap). */
const LIST_GC_GROWTH = 4 << 20;

/** Usable rows of a journal of `size` bytes (rows a writer appends meanwhile may be counted too: the caller's token check says so). */
export async function countUsableRows(journal: string, size: number, fastFrom = FAST_COUNT_BYTES, workers?: VerifyWorkers): Promise<number> {
  if (size < fastFrom) return verifyInThread(journal, { linksOnly: true }).count;
  return (await verifyJournal(journal, { linksOnly: true, endOffset: size, workers })).count;
}

/** The entry of one ordered run: its count (cached while the journal token is unchanged). */
async function listEntry(s: StartedRun, cache: ListCache, workers: VerifyWorkers): Promise<{ entry: RunListEntry; counted: boolean }> {
  const { run, metadata } = s;
  const token = statToken(run.stat);
  const cached = cache.get(run.runId);
  const fresh = cached !== undefined && sameToken(cached.journal, token) && cached.event_count !== undefined;
  const eventCount = fresh ? cached.event_count! : await countUsableRows(run.journal, token.size, FAST_COUNT_BYTES, workers);
  // Only the first row is read for it (run_started), once per journal token.
  const atToken = cached && sameToken(cached.journal, token) ? cached : undefined;
  const continues = atToken?.continues !== undefined ? atToken.continues : continuesRun(run.journal);
  // A journal appended to while it was counted is not cached: its token no longer matches the count.
  const after = statSync(run.journal, { bigint: true, throwIfNoEntry: false });
  if ((!fresh || atToken?.continues === undefined) && after !== undefined && sameToken(statToken(after), token)) {
    const base = atToken ?? { journal: token, metadata };
    cache.set(run.runId, { ...base, metadata, event_count: eventCount, continues });
  }
  return {
    counted: !fresh,
    entry: {
      run_id: run.runId,
      started_at: metadata?.started_at ?? null,
      git_branch: metadata?.git_branch ?? "",
      git_sha: metadata?.git_sha ?? "",
      event_count: eventCount,
      size_bytes: token.size,
      journal: run.journal,
      continues,
    },
  };
}

/**
 * The runs, newest start first (see `start-order.ts`), at most `limit`.
 * A run whose journal or metadata cannot be read is skipped and named in
 * `unreadable`; the others are still listed.
 */
export async function listRuns(sddDir: string, options: { limit?: number } = {}): Promise<RunList> {
  const runsDir = runsRoot(sddDir);
  const found = discoverRuns(sddDir);
  const cache = ListCache.load(runsDir);
  const { ordered, skipped: unreadable } = orderByStart(found.runs, cache);
  let counted = 0;
  const runs: RunListEntry[] = [];
  // one set of worker threads counts every run's journal
  const workers = new VerifyWorkers();
  // each journal counted leaves its read buffers behind, outside the heap the engine watches
  const gc = new GrowthCollector(LIST_GC_GROWTH);
  try {
    for (const s of ordered) {
      if (options.limit !== undefined && runs.length >= options.limit) break;
      try {
        const r = await listEntry(s, cache, workers);
        if (r.counted) {
          counted++;
          gc.poll();
        }
        runs.push(r.entry);
      } catch (err) {
        unreadable.push({ runId: s.run.runId, reason: unreadableReason(err) });
      }
    }
  } finally {
    workers.close();
  }
  // what counting left is collected before the caller lays out a thousand rows on top of it
  if (counted > 0) Bun.gc(true);
  if (found.runsDirExists) {
    cache.retain(new Set(found.runs.map((r) => r.runId)));
    cache.save();
  }
  return { runsDir, runsDirExists: found.runsDirExists, runs, skipped: found.skipped, unreadable, counted };
}
