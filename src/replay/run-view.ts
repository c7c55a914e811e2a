import { readJournal } from "../journal/reader.ts";
import { pyStr } from "../pyjson/python.ts";
import type { PyObject } from "../pyjson/types.ts";
import { measureIds, numberField } from "./display.ts";
import type { CellSpool } from "./cell-spool.ts";
import { numberAt, plainNumber, RowCells } from "./fast-cells.ts";
import { ReplayFingerprint } from "./fingerprint.ts";
import { readFastLines } from "./fast-lines.ts";
import { DISPLAY_FIELDS, EVENT_HASH_SLOT, FINGERPRINT_BATCH, type LoadedRow, valueAt } from "./fast-row.ts";
import { KernelRowReader, LongLineKernel } from "./kernel-row.ts";
import { nextTurn, TurnPacer } from "../fsutil/turn.ts";

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

const TS_SLOT = DISPLAY_FIELDS.indexOf("ts");
const RUN_STARTED = new TextEncoder().encode('"run_started"');

/** tsOf of a row whose ts is the JSON number b[s, e). */
function tsNumber(b: Uint8Array, s: number, e: number): number {
  const n = numberAt(b, s, e);
  return n === 0 || Number.isNaN(n) ? 0 : n;
}

/** The loaded row's event is "run_started". */
function isRunStarted(r: LoadedRow): boolean {
  const s = r.fieldS[0]!;
  if (s < 0 || r.fieldE[0]! - s !== RUN_STARTED.length) return false;
  for (let i = 0; i < RUN_STARTED.length; i++) if (r.mem[s + i] !== RUN_STARTED[i]) return false;
  return true;
}

function tsOf(row: PyObject): number {
  const n = numberField(row.get("ts"));
  return n === null || Number.isNaN(n) ? 0 : n;
}

/** What a scan accumulates, row by row (the exact and the fast scan share it). */
class ScanTally {
  readonly fp = new ReplayFingerprint();
  readonly discarded: number[] = [];
  events = 0;
  complete = true;
  private firstTs: number | null = null;
  private lastTs = 0;
  private runStartedTs: number | null = null;
  private firstRecordedTs: number | null = null;
  private lastEventHash = "";
  /** The last row's event_hash value bytes (a fast row's, decoded at the end; -1: the last row was exact). */
  private lastHashBuf = new Uint8Array(128);
  private lastHashLen = -1;

  /**
   * A row (or the fields of it the display reads: ts, event, and
   * event_hash unless `lastHashBytes` is set after) after it was fingerprinted.
   */
  add(row: PyObject): void {
    this.events++;
    const ts = tsOf(row);
    if (this.firstTs === null) this.firstTs = ts;
    this.lastTs = ts;
    if (this.firstRecordedTs === null && row.has("ts")) this.firstRecordedTs = ts;
    if (this.runStartedTs === null && pyStr(row.get("event"), "") === "run_started" && row.has("ts")) this.runStartedTs = ts;
    this.lastEventHash = pyStr(row.get("event_hash"), "");
    this.lastHashLen = -1;
    this.lastTsLen = -1;
  }

  /**
   * add() of a loaded row from its bytes (false: add() must, `ts` is not a
   * plain number): a ts is made a number only where the facts keep it, the
   * last one at the end.
   */
  addFast(r: LoadedRow): boolean {
    const b = r.mem;
    const s = r.fieldS[TS_SLOT]!;
    const e = r.fieldE[TS_SLOT]!;
    if (s >= 0 && !plainNumber(b, s)) return false;
    this.events++;
    this.lastTsLen = s < 0 ? 0 : e - s;
    if (s < 0) {
      if (this.firstTs === null) this.firstTs = 0;
      this.lastTs = 0;
      return true;
    }
    if (e - s > this.lastTsBuf.length) this.lastTsBuf = new Uint8Array(e - s);
    for (let i = s; i < e; i++) this.lastTsBuf[i - s] = b[i]!;
    if (this.firstTs !== null && this.firstRecordedTs !== null && (this.runStartedTs !== null || !isRunStarted(r))) return true;
    const ts = tsNumber(b, s, e);
    if (this.firstTs === null) this.firstTs = ts;
    if (this.firstRecordedTs === null) this.firstRecordedTs = ts;
    if (this.runStartedTs === null && isRunStarted(r)) this.runStartedTs = ts;
    return true;
  }

  /** `ts` of the last row added by addFast (-1: by add; 0: it had none). */
  private lastTsBuf = new Uint8Array(64);
  private lastTsLen = -1;

  /** The last row's event_hash is the value b[s, e) (s < 0: absent), decoded only if it stays the last. */
  lastHashAt(b: Uint8Array, s: number, e: number): void {
    if (s < 0) {
      this.lastHashLen = 0;
      return;
    }
    if (e - s > this.lastHashBuf.length) this.lastHashBuf = new Uint8Array(e - s);
    for (let i = s; i < e; i++) this.lastHashBuf[i - s] = b[i]!;
    this.lastHashLen = e - s;
  }

  private lastHashText(): string {
    const n = this.lastHashLen;
    if (n < 0) return this.lastEventHash;
    return n === 0 ? "" : pyStr(valueAt(this.lastHashBuf, 0, n), "");
  }

  result(): RunScan {
    if (this.lastTsLen > 0) this.lastTs = tsNumber(this.lastTsBuf, 0, this.lastTsLen);
    const span = this.lastTs - (this.firstTs ?? 0);
    return {
      events: this.events,
      complete: this.complete,
      discarded: this.discarded,
      durationSeconds: Number.isFinite(span) ? Math.trunc(span) : 0,
      baseTs: this.runStartedTs ?? this.firstRecordedTs,
      fingerprint: this.events === 0 ? "" : this.fp.digest(),
      lastEventHash: this.lastHashText(),
    };
  }
}

/**
 * `onRow` sees every row the scan reads (the display measures its id
 * columns with it). The exact path alone: the reference of scanRunFast.
 */
export async function scanRun(journal: string, limit?: number, onRow?: (row: PyObject) => void): Promise<RunScan> {
  const tally = new ScanTally();
  for await (const item of readJournal(journal)) {
    if (item.kind === "discarded") {
      tally.discarded.push(item.line);
      continue;
    }
    if (limit !== undefined && tally.events >= limit) {
      // One row beyond the limit exists: what was read is not the whole journal.
      tally.complete = false;
      break;
    }
    onRow?.(item.row);
    tally.fp.update(item.row);
    tally.add(item.row);
  }
  return tally.result();
}

/**
 * scanRun on the rows' bytes, measuring the id columns into `ids` as
 * measureIds would: a row in the writer's envelope is fingerprinted from
 * slices of its bytes and its ids, `ts` and `event` are read from them
 * (fast-cells.ts; its other display fields are parsed only when those
 * are not plain); any other line takes the exact path. Same result.
 * With a `spool`, each row read also leaves its record there (its cells
 * when they are plain): the table pass then lays them out (run-table.ts).
 */
export async function scanRunFast(journal: string, limit?: number, ids?: { agent: number; task: number }, spool?: CellSpool): Promise<RunScan> {
  const tally = new ScanTally();
  const onRow = ids === undefined ? undefined : (row: PyObject) => measureIds(row, ids);
  const cells = new RowCells();
  // Lines in the writer's envelope are taken by the kernel (kernel-row.ts) where they were read (their fingerprint text
  // batched in its memory), or from a copy (a line that crossed a read, or a long one); any other line is exact.
  const k = new KernelRowReader();
  let batched = 0;
  let stop = false;
  const flush = (): void => {
    if (batched === 0) return;
    tally.fp.updateText(k.batch(), batched);
    k.clear();
    batched = 0;
  };
  /** True (and the scan stops) when a row arrives after `limit` rows were read. */
  const beyondLimit = (): boolean => {
    if (limit === undefined || tally.events < limit) return false;
    tally.complete = false;
    stop = true;
    return true;
  };
  /** Everything but the fingerprint of a row taken from its bytes (the line at `offset`, `length` bytes). */
  const taken = (row: LoadedRow, offset: number, length: number): void => {
    if (spool === undefined) cells.idsPlain = ids !== undefined && cells.ids.read(row);
    else if (cells.read(row, undefined)) spool.cells(cells, offset, length);
    else spool.fields(row, offset, length);
    if (ids !== undefined && cells.idsPlain) {
      ids.agent = Math.max(ids.agent, cells.ids.agentLength);
      ids.task = Math.max(ids.task, cells.ids.taskLength);
    } else onRow?.(row.displayFields(EVENT_HASH_SLOT));
    if (!tally.addFast(row)) tally.add(row.displayFields(EVENT_HASH_SLOT));
    // event_hash matters for the last row only: kept as bytes, not decoded per row
    tally.lastHashAt(row.mem, row.fieldS[EVENT_HASH_SLOT]!, row.fieldE[EVENT_HASH_SLOT]!);
  };
  const copies = new LongLineKernel();
  /** A line the reader assembled (it spanned two reads, is long, or was re-spaced; `length`: its bytes in the file), taken from a copy; false: declined. */
  const copied = (bytes: Uint8Array, offset: number, length: number): boolean => {
    const row = copies.take(bytes);
    if (row === null) return false;
    if (beyondLimit()) return true;
    // its text is hashed after the rows before it, on its own
    flush();
    tally.fp.updateText(row.batch(), 1);
    taken(row, offset, length);
    return true;
  };
  const turns = new TurnPacer();
  for (const _ of readFastLines(journal, {
    buffer: k.readBuffer,
    // only after EXACT_GC_BYTES of exact lines (fast-lines.ts): the kernel's rows make no garbage, and periodic
    // full collections cost time and raised the peak
    gcEvery: Number.POSITIVE_INFINITY,
    fast: (buf, s, e, _lineNo, offset) => {
      if (!k.holds(buf)) return copied(buf.subarray(s, e), offset, e - s);
      const mark = k.textEnd;
      if (!k.take(s, e)) return false;
      if (beyondLimit()) {
        k.rewind(mark);
        return true;
      }
      batched++;
      if (k.textLength() >= FINGERPRINT_BATCH) flush();
      taken(k, offset, e - s);
      return true;
    },
    long: (bytes, _lineNo, offset, length) => copied(bytes, offset, length),
    // an exact row is fingerprinted, and read by the display (display.ts measureIds reads its long strings piece by piece)
    rawStrings: true,
    exact: (v, bytes, lineNo, offset) => {
      if (v.kind === "discarded") {
        tally.discarded.push(lineNo - 1);
        return;
      }
      if (beyondLimit()) return;
      flush();
      onRow?.(v.row);
      tally.fp.update(v.row);
      tally.add(v.row);
      spool?.exact(offset, bytes.length);
    },
    done: () => stop,
  })) {
    if (turns.due()) await nextTurn();
  }
  flush();
  return tally.result();
}
