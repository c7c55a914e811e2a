import { readFileSync, type BigIntStats } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { writeFileAtomic } from "../fsutil/atomic.ts";

/**
 * The `replay list` sidecar cache, `<sdd>/runs/.replay-list-cache.json`:
 * per run, the journal's event count and first row's `ts` (each present
 * only once taken at that journal token) and the run's metadata fields,
 * each keyed by the stat token of the file it came from (size, mtime in ns,
 * inode). A token that differs means the file changed and is read again, so
 * a stale entry can only survive a same-size rewrite within one mtime tick.
 *
 * It is an optimisation only: a missing, unreadable, corrupt or foreign file
 * is ignored (and replaced on the next successful write); a failed write is
 * ignored. Written atomically so concurrent listers never read a torn file.
 */
export const LIST_CACHE_FILE = ".replay-list-cache.json";
/** 2: `event_count` optional, `first_ts` added (the start-time order of `latest` / `replay list`). */
/** 3: `continues` added (the run a resumed run continues); a version-2 cache is ignored and rebuilt. */
export const LIST_CACHE_VERSION = 3;

const StatTokenSchema = v.object({ size: v.number(), mtime_ns: v.string(), ino: v.string() });
export type StatToken = v.InferOutput<typeof StatTokenSchema>;

const CachedMetadataSchema = v.object({
  token: StatTokenSchema,
  started_at: v.nullable(v.number()),
  git_branch: v.string(),
  git_sha: v.string(),
});
export type CachedMetadata = v.InferOutput<typeof CachedMetadataSchema>;

const CachedRunSchema = v.object({
  journal: StatTokenSchema,
  /** Usable rows at this journal token; absent when not counted yet. */
  event_count: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  /** `ts` of the first row at this journal token (null: none usable); absent when not read. */
  first_ts: v.optional(v.nullable(v.number())),
  /** `resumed_from_run` of the first row at this journal token (null: none); absent when not read. */
  continues: v.optional(v.nullable(v.string())),
  /** null when the run has no (readable) metadata.json, keyed by its absence. */
  metadata: v.nullable(CachedMetadataSchema),
});
export type CachedRun = v.InferOutput<typeof CachedRunSchema>;

const CacheFileSchema = v.object({
  version: v.literal(LIST_CACHE_VERSION),
  runs: v.record(v.string(), CachedRunSchema),
});

export function statToken(st: BigIntStats): StatToken {
  return { size: Number(st.size), mtime_ns: st.mtimeNs.toString(), ino: st.ino.toString() };
}

export function sameToken(a: StatToken | null | undefined, b: StatToken | null | undefined): boolean {
  if (!a || !b) return a === b;
  return a.size === b.size && a.mtime_ns === b.mtime_ns && a.ino === b.ino;
}

export class ListCache {
  private readonly path: string;
  private readonly runs: Map<string, CachedRun>;
  private dirty = false;

  private constructor(path: string, runs: Map<string, CachedRun>) {
    this.path = path;
    this.runs = runs;
  }

  /** Load the cache under `runsRoot`; anything unusable yields an empty cache. */
  static load(runsRoot: string): ListCache {
    const path = join(runsRoot, LIST_CACHE_FILE);
    let runs = new Map<string, CachedRun>();
    try {
      const parsed = v.safeParse(CacheFileSchema, JSON.parse(readFileSync(path, "utf8")));
      if (parsed.success) runs = new Map(Object.entries(parsed.output.runs));
    } catch {
      /* missing or corrupt: start empty */
    }
    return new ListCache(path, runs);
  }

  get(runId: string): CachedRun | undefined {
    return this.runs.get(runId);
  }

  set(runId: string, entry: CachedRun): void {
    this.runs.set(runId, entry);
    this.dirty = true;
  }

  /** Drop entries of runs that no longer exist. */
  retain(existing: ReadonlySet<string>): void {
    for (const id of this.runs.keys()) {
      if (!existing.has(id)) {
        this.runs.delete(id);
        this.dirty = true;
      }
    }
  }

  /** Persist if anything changed; failures are swallowed (the cache is optional). */
  save(): boolean {
    if (!this.dirty) return false;
    try {
      const body = JSON.stringify({ version: LIST_CACHE_VERSION, runs: Object.fromEntries(this.runs) });
      writeFileAtomic(this.path, body + "\n");
      this.dirty = false;
      return true;
    } catch {
      return false;
    }
  }
}
