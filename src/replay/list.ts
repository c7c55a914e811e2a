import { statSync, type BigIntStats } from "node:fs";
import { join } from "node:path";
import { readJournalSync } from "../journal/reader.ts";
import { DEFAULT_CHUNK_SIZE } from "../journal/lines.ts";
import { readMetadata } from "../journal/metadata.ts";
import { runsRoot } from "../journal/paths.ts";
import { discoverRuns, type FoundRun } from "./discovery.ts";
import { ListCache, sameToken, type CachedMetadata, type StatToken } from "./list-cache.ts";

/**
 * `replay list`: every run with a journal, greatest run id first, with its
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
}

export interface RunList {
  runsDir: string;
  runsDirExists: boolean;
  runs: RunListEntry[];
  /** Entries refused for escaping the runs root (symlinks pointing out). */
  skipped: string[];
  /** How many journals had to be (re)counted (0 = all served from the cache). */
  counted: number;
}

export function statToken(st: BigIntStats): StatToken {
  return { size: Number(st.size), mtime_ns: st.mtimeNs.toString(), ino: st.ino.toString() };
}

/**
 * Usable rows of a journal, streamed (constant memory). The read buffer is
 * sized to the file (a run list counts thousands of small journals; a 1 MiB
 * buffer each would dominate the cost).
 */
export function countEvents(journal: string, sizeHint = DEFAULT_CHUNK_SIZE): number {
  const chunkSize = Math.min(DEFAULT_CHUNK_SIZE, Math.max(4096, sizeHint + 1));
  let n = 0;
  for (const item of readJournalSync(journal, { chunkSize })) if (item.kind === "row") n++;
  return n;
}

function metadataFields(run: FoundRun, cached: CachedMetadata | null | undefined): CachedMetadata | null {
  const path = join(run.runDir, "metadata.json");
  const st = statSync(path, { bigint: true, throwIfNoEntry: false });
  if (!st) return null;
  const token = statToken(st);
  if (cached && sameToken(cached.token, token)) return cached;
  const meta = readMetadata(run.runDir);
  return {
    token,
    started_at: meta && Number.isFinite(meta.started_at) && meta.started_at !== 0 ? meta.started_at : null,
    git_branch: meta?.git_branch ?? "",
    git_sha: meta?.git_sha ?? "",
  };
}

export async function listRuns(sddDir: string, options: { limit?: number } = {}): Promise<RunList> {
  const runsDir = runsRoot(sddDir);
  const found = discoverRuns(sddDir);
  const selected = options.limit === undefined ? found.runs : found.runs.slice(0, options.limit);
  const cache = ListCache.load(runsDir);
  let counted = 0;
  const runs: RunListEntry[] = [];
  for (const run of selected) {
    const token = statToken(run.stat);
    const cached = cache.get(run.runId);
    let eventCount: number;
    if (cached && sameToken(cached.journal, token)) {
      eventCount = cached.event_count;
    } else {
      eventCount = countEvents(run.journal, token.size);
      counted++;
    }
    // A journal appended to while it was counted is not cached: its token no longer matches the count.
    const after = statSync(run.journal, { bigint: true, throwIfNoEntry: false });
    const stable = after !== undefined && sameToken(statToken(after), token);
    const metadata = metadataFields(run, cached?.metadata);
    if (stable && (!cached || !sameToken(cached.journal, token) || cached.event_count !== eventCount || !sameMetadata(cached.metadata, metadata))) {
      cache.set(run.runId, { journal: token, event_count: eventCount, metadata });
    }
    runs.push({
      run_id: run.runId,
      started_at: metadata?.started_at ?? null,
      git_branch: metadata?.git_branch ?? "",
      git_sha: metadata?.git_sha ?? "",
      event_count: eventCount,
      size_bytes: token.size,
      journal: run.journal,
    });
  }
  if (found.runsDirExists) {
    cache.retain(new Set(found.runs.map((r) => r.runId)));
    cache.save();
  }
  return { runsDir, runsDirExists: found.runsDirExists, runs, skipped: found.skipped, counted };
}

function sameMetadata(a: CachedMetadata | null | undefined, b: CachedMetadata | null): boolean {
  if (!a || !b) return (a ?? null) === b;
  return sameToken(a.token, b.token) && a.started_at === b.started_at && a.git_branch === b.git_branch && a.git_sha === b.git_sha;
}
