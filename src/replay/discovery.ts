import { checkInput } from "../fsutil/input.ts";
import { closeSync, existsSync, lstatSync, openSync, readdirSync, statSync, type BigIntStats } from "node:fs";
import { join } from "node:path";
import { InputError } from "../errors/index.ts";
import { compareCodePoints } from "../pyjson/encode.ts";
import { JOURNAL_FILE_NAME, journalPath, runDir, runsRoot, validateRunId } from "../journal/paths.ts";
import { ListCache } from "./list-cache.ts";
import { orderByStart, type SkippedRun } from "./start-order.ts";

/**
 * Which runs exist under `<sdd>/runs`, and which one a user means.
 *
 * A run is a directory directly under `<sdd>/runs` whose name is a valid run
 * id and which holds a `journal.jsonl` that resolves inside `<sdd>/runs`
 * (a symlink pointing elsewhere is skipped, never followed out). `latest`
 * is the run that started last (`start-order.ts`), not the greatest name as
 * in Python: a run named `torn` must not beat every timestamped run.
 */
import type { FoundRun, RunRef } from "./run-ref.ts";
export type { FoundRun, RunRef } from "./run-ref.ts";

function isValidRunId(name: string): boolean {
  try {
    validateRunId(name);
    return true;
  } catch {
    return false;
  }
}

/** The journal's path resolves inside the runs root (symlinks followed). */
function isContained(sddDir: string, runId: string): boolean {
  try {
    journalPath(sddDir, runId);
    return true;
  } catch {
    return false;
  }
}

/**
 * Every run with a journal, greatest name first (a stable base order; the
 * start-time order is `orderByStart`). Costs one `readdir` plus
 * one `lstat` per run (a `realpath` only for symlinks), so 10,000 runs list
 * quickly. `skipped` names entries refused for escaping the runs root.
 */
export function discoverRuns(sddDir: string): { runsDirExists: boolean; runs: FoundRun[]; skipped: string[] } {
  const root = runsRoot(sddDir);
  let entries;
  try {
    entries = readdirSync(root, { withFileTypes: true });
  } catch {
    return { runsDirExists: false, runs: [], skipped: [] };
  }
  const runs: FoundRun[] = [];
  const skipped: string[] = [];
  for (const entry of entries) {
    const name = entry.name;
    if (!(entry.isDirectory() || entry.isSymbolicLink())) continue;
    if (!isValidRunId(name)) continue;
    const dir = join(root, name);
    const journal = join(dir, JOURNAL_FILE_NAME);
    let st: BigIntStats;
    try {
      st = lstatSync(journal, { bigint: true });
    } catch {
      continue;
    }
    if (entry.isSymbolicLink() || st.isSymbolicLink()) {
      if (!isContained(sddDir, name)) {
        skipped.push(name);
        continue;
      }
      try {
        st = statSync(journal, { bigint: true });
      } catch {
        continue;
      }
    }
    if (!st.isFile()) continue;
    runs.push({ runId: name, runDir: dir, journal, stat: st });
  }
  runs.sort((a, b) => compareCodePoints(b.runId, a.runId));
  return { runsDirExists: true, runs, skipped };
}

/**
 * The run `latest` stands for: the one that started last (see
 * `start-order.ts`: `metadata.started_at`, else the journal's first `ts`,
 * then the run id). Runs that could not be read to find their start are
 * named in `unreadable` (the caller warns: one of them might be newer).
 */
export function resolveLatest(sddDir: string): FoundRun & { unreadable: SkippedRun[] } {
  const { runsDirExists, runs } = discoverRuns(sddDir);
  const cache = ListCache.load(runsRoot(sddDir));
  const { ordered, skipped } = orderByStart(runs, cache);
  if (runsDirExists) cache.save();
  const first = ordered[0];
  if (!first) {
    const detail = runsDirExists ? `no run journals under ${runsRoot(sddDir)}` : `no runs recorded yet (${runsRoot(sddDir)} does not exist)`;
    throw new InputError("no_runs", skipped.length ? `${detail} that could be read (${skipped.length} unreadable)` : detail, {
      runs_dir: runsRoot(sddDir),
    });
  }
  return { ...first.run, unreadable: skipped };
}

/**
 * Resolve `latest` or a run id to its paths. The id is validated (exit 2
 * `invalid_run_id`) and the run directory is contained. With
 * `requireJournal`, a missing run directory is `run_not_found` and a run
 * directory without a journal is `journal_missing` (both exit 3: the input
 * the command needs cannot be read).
 */
export function resolveRun(sddDir: string, id: string, options: { requireJournal: boolean }): RunRef & { unreadable?: SkippedRun[] } {
  if (id === "latest") return resolveLatest(sddDir);
  const runId = validateRunId(id);
  const ref: RunRef = { runId, runDir: runDir(sddDir, runId), journal: journalPath(sddDir, runId) };
  if (options.requireJournal) assertJournalExists(ref);
  return ref;
}

/**
 * `journal_unreadable` (exit 3) unless the journal is a regular file this
 * process can open: checked before any output, so a streamed JSON document
 * is never followed by an error document.
 */
export function assertReadable(ref: RunRef): void {
  try {
    checkInput(ref.journal, { what: "journal" }); // a FIFO, device or directory: input_not_regular_file
  } catch (err) {
    if (err instanceof InputError) Object.assign(err.facts, { run_id: ref.runId, journal: ref.journal });
    throw err;
  }
  try {
    if (!statSync(ref.journal).isFile()) throw Object.assign(new Error("not a regular file"), { code: "EISDIR" });
    closeSync(openSync(ref.journal, "r"));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "EIO";
    throw new InputError("journal_unreadable", `cannot read journal ${ref.journal}: ${code === "EISDIR" ? "not a regular file" : code}`, {
      run_id: ref.runId,
      journal: ref.journal,
    });
  }
}

/** `run_not_found` / `journal_missing` (exit 3) unless the run's journal exists. */
export function assertJournalExists(ref: RunRef): void {
  if (existsSync(ref.journal)) return;
  if (!existsSync(ref.runDir)) {
    throw new InputError("run_not_found", `run not found: ${ref.runId} (no ${ref.runDir}); see 'bernstein replay list'`, {
      run_id: ref.runId,
    });
  }
  throw new InputError("journal_missing", `run ${ref.runId} has no journal: ${ref.journal} does not exist`, {
    run_id: ref.runId,
    journal: ref.journal,
  });
}
