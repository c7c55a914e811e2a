import { indexRow, KeyTable, RowIndex, Spell, Tok } from "../codec/row-index.ts";
import { classifyLine, type LineVerdict } from "../journal/reader.ts";
import { parse } from "../pyjson/parse.ts";
import type { PyObject, PyValue } from "../pyjson/types.ts";
import { readFastLines } from "../replay/fast-lines.ts";
import { RowTranscoder } from "../replay/fast-json.ts";
import { DISPLAY_FIELDS, FastRowReader, FINGERPRINT_BATCH, valueAt } from "../replay/fast-row.ts";
import type { ReplayFingerprint } from "../replay/fingerprint.ts";
import { KernelRowReader } from "../replay/kernel-row.ts";

/**
 * The rows of the timeline page's pass, read the fast way: every line is
 * indexed by the row codec (src/codec/row-index.ts), and the few fields the
 * page reads of every row (PAGE_FIELDS) are taken from the tape into one
 * small map, refilled per row; the row's replay fingerprint text comes from
 * the verify kernel in fingerprint mode (kernel-row.ts), or from
 * FastRowReader for a line the kernel declines, batched in the kernel's
 * memory. Only a row the page's table shows is parsed whole (`full`), and
 * only when the table asks for it. A line the codec or both fingerprint
 * readers decline takes the exact path (classifyLine: the full row, as the
 * reference pass reads it), so every row's facts are the exact pass's.
 */

/**
 * Every key the page reads of a row (generate.ts, attempts.ts, and the
 * table's cells: display.ts reads DISPLAY_FIELDS): nothing else is made a value.
 */
export const PAGE_FIELDS: readonly string[] = [...new Set<string>([
  "event",
  "ts",
  "event_hash",
  "agent_id",
  "task_id",
  "model",
  "role",
  "failed_signals",
  "reason",
  "agent_ids",
  "cost_usd",
  "spent_usd",
  "cost_source",
  "cost_known",
  "tokens",
  "total_tokens",
  "input_tokens",
  "output_tokens",
  "git_branch",
  "git_sha",
  ...DISPLAY_FIELDS,
])];

const KEYS = new KeyTable(PAGE_FIELDS);

/** One row as the page's pass sees it. */
export interface PageRowSink {
  /** A row: its fields, and the whole of it on demand (valid during the call only). */
  row(row: PageRow): void;
  /** A line the reader discards (not a row). */
  discarded(): void;
  /** True once no more rows are wanted. */
  done(): boolean;
}

/** One row of the pass. */
export interface PageRow {
  /** At least the row's PAGE_FIELDS, as the full row has them. */
  fields: PyObject;
  /** The whole row, parsed (the exact reader's). */
  full(): PyObject;
  /** `renderJson(full(), null)` made from the row's bytes, or null where only the exact path makes it. */
  json(): string | null;
}

const utf8 = new TextDecoder();

/** The value of tape token t (a row the codec took), as the exact parser gives it. */
function tapeValue(ix: RowIndex, t: number): PyValue {
  const b = ix.buf;
  const s = ix.start(t);
  const e = ix.end(t);
  // valueAt reads ASCII; raw UTF-8 is decoded and parsed as the exact reader does
  if ((ix.flags(t) & Spell.Utf8) !== 0) return parse(utf8.decode(b.subarray(s, e)));
  return valueAt(b, s, e);
}

const FIELD_ID = new Map(PAGE_FIELDS.map((k, i) => [k, i + 1]));

/**
 * The PAGE_FIELDS of the row on the tape, as a row (`get` / `has`: all the
 * page's readers use): a value is made when it is first read, once per row.
 * Any other key reads as absent; the differential test holds the readers
 * to PAGE_FIELDS.
 */
class TapeFields extends Map<string, PyValue> {
  private row = 1;
  private readonly made = new Int32Array(PAGE_FIELDS.length + 1);
  private readonly cache: (PyValue | undefined)[] = new Array(PAGE_FIELDS.length + 1);

  constructor(private readonly ix: RowIndex) {
    super();
  }

  /** The tape holds the next row: forget the values made. */
  next(): void {
    this.row++;
  }

  override has(key: string): boolean {
    const id = FIELD_ID.get(key);
    return id !== undefined && this.ix.valueOf(id) >= 0;
  }

  override get(key: string): PyValue | undefined {
    const id = FIELD_ID.get(key);
    if (id === undefined) return undefined;
    if (this.made[id] === this.row) return this.cache[id];
    const t = this.ix.valueOf(id);
    const v = t < 0 ? undefined : tapeValue(this.ix, t);
    this.made[id] = this.row;
    this.cache[id] = v;
    return v;
  }
}

/**
 * Read the journal up to `endOffset` (the verified bytes), handing every
 * row to `sink` in file order and every row's fingerprint text to `fp`. A
 * generator that yields after each chunk of the file (the caller writes
 * what it produced, and lets a signal handler run).
 */
export function* readPageRows(path: string, endOffset: number, fp: ReplayFingerprint, sink: PageRowSink): Generator<number> {
  const ix = new RowIndex();
  const k = new KernelRowReader();
  const r = new FastRowReader();
  const em = r.em;
  const fields = new TapeFields(ix);
  let batched = 0;
  let offset = 0;
  const flush = (): void => {
    if (batched === 0) return;
    fp.updateText(k.batch(), batched);
    k.clear();
    batched = 0;
  };
  let line: Uint8Array = new Uint8Array(0);
  let lineS = 0;
  let lineE = 0;
  const tc = new RowTranscoder();
  const fast: PageRow = {
    fields,
    full: (): PyObject => {
      const v: LineVerdict = classifyLine(line.subarray(lineS, lineE));
      if (v.kind !== "row") throw new Error("timeline: a row the codec took is not a row to the exact reader");
      return v.row;
    },
    json: (): string | null => {
      tc.reset();
      return tc.rowInline(line, ix.start(0), ix.end(0)) ? utf8.decode(tc.buf.subarray(0, tc.len)) : null;
    },
  };
  const exact: PageRow = { fields: new Map(), full: () => exact.fields, json: () => null };
  for (const _ of readFastLines(path, {
    buffer: k.readBuffer,
    endOffset,
    fast: (buf, s, e, _lineNo, at) => {
      if (!indexRow(buf, s, e, ix, KEYS) || ix.kind(0) !== Tok.Object) return false;
      if (!k.take(s, e)) {
        if (!r.loadCopy(buf, s, e)) return false;
        const o = r.fingerprintText(em.rowBase, em.rowBase + Math.min(em.rowCap, k.maxText));
        if (o < 0) return false;
        if (!k.fits(o - em.rowBase + 1)) flush();
        k.append(em.mem, em.rowBase, o);
      }
      batched++;
      if (k.textLength() >= FINGERPRINT_BATCH) flush();
      fields.next();
      line = buf;
      lineS = s;
      lineE = e;
      offset = at;
      sink.row(fast);
      return true;
    },
    exact: (v, _bytes, _lineNo, at) => {
      offset = at;
      if (v.kind !== "row") {
        sink.discarded();
        return;
      }
      flush();
      fp.update(v.row);
      exact.fields = v.row;
      sink.row(exact);
    },
    done: () => sink.done(),
  })) {
    yield offset;
  }
  flush();
}
