import { readJournal } from "../journal/reader.ts";
import { pyStr } from "../pyjson/python.ts";
import type { PyObject } from "../pyjson/types.ts";
import { numberField } from "./display.ts";
import { ReplayFingerprint } from "./fingerprint.ts";

/**
 * The data behind `replay <RUN_ID>`: a first streaming pass that computes
 * the header and footer facts (event count, duration, the time base,
 * fingerprint, last event hash), and a second streaming pass that yields the
 * rows for the table or JSON. Both passes stop after `limit` rows, so
 * `--limit 20` on a million-row journal reads only its first screen; the
 * facts then describe the rows read, and `complete` says whether they are
 * the whole journal.
 *
 * The display does not verify the chain (`--verify` does): rows are shown as
 * recorded, and lines the reader discards are counted, not shown.
 */
export interface RunScan {
  /** Usable rows read (all of them, or the first `limit`). */
  events: number;
  /** True when every row of the journal was read (no `limit` cut it short). */
  complete: boolean;
  /** Lines the reader discarded among those read (unparsable, non-object, undecodable). */
  discarded: number[];
  /** `int(last.ts - first.ts)` in seconds (a missing `ts` counts as 0). */
  durationSeconds: number;
  /** `ts` of the first `run_started` row read (else the first row with a `ts`): TIME is measured from it. */
  baseTs: number | null;
  /** The timing-excluded fingerprint of the rows read (`""` when none). */
  fingerprint: string;
  /** `event_hash` of the last row read (`""` when none): the Merkle head if the chain is intact. */
  lastEventHash: string;
}

/** Rows of a journal, at most `limit` (undefined = all), streamed. */
export async function* runRows(journal: string, limit?: number): AsyncGenerator<PyObject> {
  if (limit !== undefined && limit <= 0) return;
  let n = 0;
  for await (const item of readJournal(journal)) {
    if (item.kind !== "row") continue;
    yield item.row;
    if (limit !== undefined && ++n >= limit) return;
  }
}

function tsOf(row: PyObject): number {
  const n = numberField(row.get("ts"));
  return n === null || Number.isNaN(n) ? 0 : n;
}

/** `onRow` sees every row the scan reads (the display measures its id columns with it). */
export async function scanRun(journal: string, limit?: number, onRow?: (row: PyObject) => void): Promise<RunScan> {
  const fp = new ReplayFingerprint();
  const discarded: number[] = [];
  let events = 0;
  let firstTs: number | null = null;
  let lastTs = 0;
  let runStartedTs: number | null = null;
  let firstRecordedTs: number | null = null;
  let lastEventHash = "";
  let complete = true;
  for await (const item of readJournal(journal)) {
    if (item.kind === "discarded") {
      discarded.push(item.line);
      continue;
    }
    if (limit !== undefined && events >= limit) {
      // One row beyond the limit exists: what was read is not the whole journal.
      complete = false;
      break;
    }
    const row = item.row;
    events++;
    onRow?.(row);
    fp.update(row);
    const ts = tsOf(row);
    if (firstTs === null) firstTs = ts;
    lastTs = ts;
    if (firstRecordedTs === null && row.has("ts")) firstRecordedTs = ts;
    if (runStartedTs === null && pyStr(row.get("event"), "") === "run_started" && row.has("ts")) runStartedTs = ts;
    lastEventHash = pyStr(row.get("event_hash"), "");
  }
  const span = lastTs - (firstTs ?? 0);
  return {
    events,
    complete,
    discarded,
    durationSeconds: Number.isFinite(span) ? Math.trunc(span) : 0,
    baseTs: runStartedTs ?? firstRecordedTs,
    fingerprint: events === 0 ? "" : fp.digest(),
    lastEventHash,
  };
}
