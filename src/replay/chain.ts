import { errorMessage } from "../errors/index.ts";
import { readJournalSync } from "../journal/reader.ts";
import { pyStr } from "../pyjson/python.ts";
import { resolveRun } from "./discovery.ts";
import type { RunRef } from "./run-ref.ts";

/**
 * Runs that continue one another: a resumed run's `run_started` names the
 * run it continues in `resumed_from_run` (and the saved session in
 * `resumed_from_session`). `replay <RUN> --with-previous` follows those
 * names back; `replay list` shows each run's predecessor.
 */

/** Reads of the first row: a run list reads a thousand journals' first rows, and a buffer each is garbage outside the heap. */
const FIRST_ROW_CHUNK = 4096;

/** `resumed_from_run` of the journal's first row when it is `run_started` (null otherwise). Reads one row. */
export function continuesRun(journal: string): string | null {
  for (const item of readJournalSync(journal, { chunkSize: FIRST_ROW_CHUNK })) {
    if (item.kind !== "row") continue;
    const row = item.row;
    if (pyStr(row.get("event"), "") !== "run_started" || !row.has("resumed_from_run")) return null;
    const prev = row.get("resumed_from_run");
    return typeof prev === "string" && prev !== "" ? prev : null;
  }
  return null;
}

export interface RunChain {
  /** The runs, oldest first; the last is the run asked for. */
  runs: RunRef[];
  /** The predecessor named by the oldest run listed that could not be found or read, with why (null: the chain is whole). */
  missing: { runId: string; reason: string } | null;
}

/**
 * The chain of runs `run` continues, oldest first, ending with `run`. A
 * predecessor that is gone (pruned, removed) or unreadable ends the chain
 * with a `missing` note; a loop (a run named twice) ends it too.
 */
export function runChain(sddDir: string, run: RunRef): RunChain {
  const runs: RunRef[] = [run];
  const seen = new Set([run.runId]);
  let missing: RunChain["missing"] = null;
  let current = run;
  for (;;) {
    let prevId: string | null;
    try {
      prevId = continuesRun(current.journal);
    } catch {
      break; // the display of that run reports its own read errors
    }
    if (prevId === null) break;
    if (seen.has(prevId)) {
      missing = { runId: prevId, reason: "named twice in the chain (a loop); the chain stops here" };
      break;
    }
    try {
      const prev = resolveRun(sddDir, prevId, { requireJournal: true });
      runs.push(prev);
      seen.add(prevId);
      current = prev;
    } catch (err) {
      missing = { runId: prevId, reason: errorMessage(err) };
      break;
    }
  }
  return { runs: runs.reverse(), missing };
}
