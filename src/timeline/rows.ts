import { LBRACE, LBRACKET } from "../codec/bytes.ts";
import { contentEnd } from "../fsutil/lines.ts";
import { classifyLine, type LineVerdict } from "../journal/reader.ts";
import { pyStr } from "../pyjson/python.ts";
import type { PyObject, PyValue } from "../pyjson/types.ts";
import { readFastLines } from "../replay/fast-lines.ts";
import type { LastText } from "../replay/last-text.ts";
import { DecodedFields, numberField } from "../replay/display.ts";
import { numberAt } from "../replay/fast-cells.ts";
import { RowTranscoder } from "../replay/fast-json.ts";
import { DISPLAY_FIELDS, FieldTable, FINGERPRINT_BATCH, valueAt, type LoadedRow } from "../replay/fast-row.ts";
import type { ReplayFingerprint } from "../replay/fingerprint.ts";
import { holdsObject, KernelRowReader, LONG_LINE_MAX, LongLineKernel, LocatedFields } from "../replay/kernel-row.ts";
import { verifyJournal } from "../journal/verify.ts";
import type { FastVerifyOptions, FastVerifyResult } from "../journal/fast/engine.ts";
import type { RowTextSink } from "../journal/fast/range.ts";
import { CR, LF } from "../codec/bytes.ts";
import { statSync } from "node:fs";

/**
 * The rows of the timeline page's pass, read the fast way, one scan a row:
 * the verify kernel in fingerprint mode (kernel-row.ts) validates a line
 * in the writer's spelling, appends its replay fingerprint text to a batch
 * in its memory (a line that crossed a read, or a long one, from a copy),
 * and leaves the value spans of the few fields the page reads of every row
 * (PAGE_FIELDS) in its member table; they are made values only when read
 * (a value holding an object from the row parsed whole: the kernel keeps
 * a nested value sorted, the exact reader in the row's key order).
 * Only a row the page's table shows is parsed whole (`full`), and only
 * when the table asks for it. A line the kernel declines (a row outside the
 * writer's envelope) takes the exact path (classifyLine: the full row, as the
 * reference pass reads it), so every row's facts are the exact pass's.
 */

/**
 * Every key the page reads of a row (generate.ts, attempts.ts, and the
 * table's cells: display.ts reads DISPLAY_FIELDS): nothing else is made a value.
 */
export const PAGE_FIELDS: readonly string[] = [...new Set<string>([
  // first, in their order: the page's reader is a LoadedRow of the display's slots too (fast-cells.ts RowCells)
  ...DISPLAY_FIELDS,
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
])];

const PAGE_TABLE = new FieldTable(PAGE_FIELDS);

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
  /** What the table's cells are read from (display.ts displayRow): `fields`, or the whole row with its long strings still bytes, which the display reads in pieces. */
  shown: PyObject;
  /** The whole row, parsed (the exact reader's). */
  full(): PyObject;
  /** `renderJson(full(), null)` as UTF-8, made from the row's bytes (valid until the next row), or null where only the exact path makes it. */
  json(): Uint8Array | null;
  /** The kernel's spans of the row's fields, in the display's slots first (its table cells are read from them), or null (the exact path took the row). */
  loaded: LoadedRow | null;
}

/**
 * The PAGE_FIELDS of the row a kernel reader took, as a row (`get` /
 * `has`: all the page's readers use): a value is made from its span when
 * it is first read, once per row. Any other key reads as absent; the
 * differential test holds the readers to PAGE_FIELDS.
 */
class KernelFields extends Map<string, PyValue> {
  private row = 1;
  private r: LoadedRow | null = null;
  private readonly made = new Int32Array(PAGE_FIELDS.length);
  private readonly cache: (PyValue | undefined)[] = new Array(PAGE_FIELDS.length);

  /** `full`: the row parsed whole, for a value that holds an object (its keys in the row's order; holdsObject). */
  constructor(private readonly full: () => PyObject) {
    super();
  }

  /**
   * The reader `r` holds the next row: forget the values made. `inPlace`:
   * the row lies in the buffer the file is read into, untouched until the
   * next read (not in a copy a later line may overwrite).
   */
  at(r: LoadedRow, inPlace: boolean): void {
    this.r = r;
    this.row++;
    this.inPlace = inPlace;
  }

  inPlace = false;

  /** The bytes the row lies in, and the span of the key's value token there (start -1: no such key). */
  get bytes(): Uint8Array {
    return this.r!.mem;
  }
  tokenStart(key: string): number {
    const slot = PAGE_TABLE.slot(key);
    return slot < 0 ? -1 : this.r!.fieldS[slot]!;
  }
  tokenEnd(key: string): number {
    return this.r!.fieldE[PAGE_TABLE.slot(key)]!;
  }

  override has(key: string): boolean {
    const slot = PAGE_TABLE.slot(key);
    return slot >= 0 && this.r!.fieldS[slot]! >= 0;
  }

  /** numberField of the key's value, made from its span (a string's value only is decoded); undefined: no such key. */
  number(key: string): number | null | undefined {
    const slot = PAGE_TABLE.slot(key);
    if (slot < 0) return undefined;
    const r = this.r!;
    const s = r.fieldS[slot]!;
    if (s < 0) return undefined;
    const b = r.mem;
    const e = r.fieldE[slot]!;
    const c = b[s]!;
    if ((c >= 0x30 && c <= 0x39) || (c === 0x2d && b[s + 1]! >= 0x30 && b[s + 1]! <= 0x39)) {
      const n = numberAt(b, s, e);
      return n === 0 ? 0 : n;
    }
    // a container: falsy when empty (0), else not a number
    if (c === LBRACE || c === LBRACKET) return e - s === 2 ? 0 : null;
    return numberField(this.get(key));
  }

  override get(key: string): PyValue | undefined {
    const slot = PAGE_TABLE.slot(key);
    if (slot < 0) return undefined;
    if (this.made[slot] === this.row) return this.cache[slot];
    const r = this.r!;
    const s = r.fieldS[slot]!;
    const e = r.fieldE[slot]!;
    const v = s < 0 ? undefined : holdsObject(r.mem, s, e) ? this.full().get(key) : valueAt(r.mem, s, e);
    this.made[slot] = this.row;
    this.cache[slot] = v;
    return v;
  }
}

/**
 * Keep `pyStr(row.get(key), "")` in `last` (its token's bytes where they
 * can be: see replay/last-text.ts): a row on the tape in the read buffer
 * leaves where its token is, one from a copy its bytes copied at once.
 */
export function keepText(last: LastText, row: PyObject, key: string): void {
  if (row instanceof KernelFields && last.keepSpan(row.bytes, row.tokenStart(key), row.tokenEnd(key), row.inPlace)) return;
  last.keepValue(row.get(key));
}

/** numberField of `row`'s `key` (undefined: the row has no such key), from the tape when the row is on one. */
export function fieldNumber(row: PyObject, key: string): number | null | undefined {
  if (row instanceof KernelFields) return row.number(key);
  return row.has(key) ? numberField(row.get(key)) : undefined;
}

/**
 * The row a page reader hands on, one at a time: a row a kernel took, as
 * its fields (KernelFields over the kernel's spans; the whole row parsed
 * from its line only when asked), or a row the exact path parsed, whole
 * (its long strings still bytes: the payload is made from it in pieces,
 * generate.ts appendRowPayload).
 */
class LineRows {
  private line: Uint8Array = new Uint8Array(0);
  private lineS = 0;
  private lineE = 0;
  /** The row on the line, parsed whole (null: not yet, this row). */
  private whole: PyObject | null = null;
  private readonly fields = new KernelFields(() => this.full());
  private readonly tc = new RowTranscoder();
  private readonly fast: PageRow;
  private readonly exactFields = new DecodedFields();
  private readonly exact: PageRow;

  constructor() {
    const fields = this.fields;
    const tc = this.tc;
    this.fast = {
      fields,
      shown: fields,
      loaded: null,
      full: () => this.full(),
      json: (): Uint8Array | null => {
        // the kernel took the row: it fills the line (a CR before the line feed is the break's)
        tc.reset();
        return tc.rowInline(this.line, this.lineS, contentEnd(this.line, this.lineS, this.lineE)) ? tc.view() : null;
      },
    };
    const exactFields = this.exactFields;
    this.exact = {
      fields: exactFields,
      get shown() {
        return exactFields.row;
      },
      full: () => exactFields.row,
      json: () => null,
      loaded: null,
    };
  }

  /** The row a kernel took on line[s, e) (e: its line feed, or where its terminator starts), its fields' spans in `loaded` (`inPlace`: KernelFields.at). */
  kernelRow(loaded: LoadedRow, inPlace: boolean, line: Uint8Array, s: number, e: number): PageRow {
    this.fields.at(loaded, inPlace);
    this.fast.loaded = loaded;
    this.whole = null;
    this.line = line;
    this.lineS = s;
    this.lineE = e;
    return this.fast;
  }

  /** A row the exact path parsed. */
  exactRow(row: PyObject): PageRow {
    this.exactFields.row = row;
    return this.exact;
  }

  private full(): PyObject {
    if (this.whole !== null) return this.whole;
    const v: LineVerdict = classifyLine(this.line.subarray(this.lineS, this.lineE));
    if (v.kind !== "row") throw new Error("timeline: a row the kernel took is not a row to the exact reader");
    return (this.whole = v.row);
  }
}

/**
 * Read the journal up to `endOffset` (the verified bytes), handing every
 * row to `sink` in file order and every row's fingerprint text to `fp`. A
 * generator that yields after each chunk of the file (the caller writes
 * what it produced, and lets a signal handler run).
 */
export function* readPageRows(path: string, endOffset: number, fp: ReplayFingerprint, sink: PageRowSink): Generator<number> {
  const k = new KernelRowReader(PAGE_TABLE, false);
  let batched = 0;
  let offset = 0;
  const flush = (): void => {
    if (batched === 0) return;
    fp.updateText(k.batch(), batched);
    k.clear();
    batched = 0;
  };
  const lineRows = new LineRows();
  /** Hand the sink the row reader `r` took, the line buf[s, e) at file offset `at`. */
  const taken = (r: KernelRowReader, buf: Uint8Array, s: number, e: number, at: number): void => {
    offset = at;
    sink.row(lineRows.kernelRow(r, r === k, buf, s, e));
  };
  const copies = new LongLineKernel(PAGE_TABLE, false);
  /** The line buf[s, e) the reader assembled (it spanned two reads, is long, or was re-spaced), taken from a copy; false: declined. */
  const copied = (buf: Uint8Array, s: number, e: number, at: number): boolean => {
    const row = copies.take(buf.subarray(s, e));
    if (row === null) return false;
    // its text is hashed after the rows before it, on its own
    flush();
    fp.updateText(row.batch(), 1);
    taken(row, buf, s, e, at);
    return true;
  };
  for (const _ of readFastLines(path, {
    buffer: k.readBuffer,
    endOffset,
    // no collection per exact line's bytes (fast-lines.ts gcEvery): on a journal of ~1 MB rows that is a full collection
    // per row; the pass collects on the growth of its resident set instead (generate.ts)
    fast: (buf, s, e, _lineNo, at) => {
      if (!k.holds(buf)) return copied(buf, s, e, at);
      if (!k.take(s, e)) return false;
      batched++;
      if (k.textLength() >= FINGERPRINT_BATCH) flush();
      taken(k, buf, s, e, at);
      return true;
    },
    long: (bytes, _lineNo, at) => bytes.length <= LONG_LINE_MAX && copied(bytes, 0, bytes.length, at),
    // a huge row's long strings stay bytes (DecodedFields)
    rawStrings: true,
    exact: (v, _bytes, _lineNo, at) => {
      offset = at;
      if (v.kind !== "row") {
        sink.discarded();
        return;
      }
      flush();
      fp.update(v.row);
      sink.row(lineRows.exactRow(v.row));
    },
    done: () => sink.done(),
  })) {
    yield offset;
  }
  flush();
}

/** Bytes of rows on the exact path between two calls of verifyPageRows' `between` (a read's worth, as the kernel's rows). */
const BETWEEN_BYTES = 1 << 18;
/** Bytes of rows handed between two progress reports of the one pass. */
const PROGRESS_BYTES = 1 << 20;

/** The file's size now (0: it cannot be stat'ed; the verify says why). */
function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/**
 * The rows of the page's pass read by the verify itself, in this thread:
 * one read and one scan a row. The verify kernel, writing each row's
 * text, hands each row on as it takes it (range.ts RowTextSink.kernelRow);
 * it goes to `sink` at once, its fields located in the kernel's member
 * table (LocatedFields), its fingerprint text hashed with its call's; a
 * row the exact path verified is handed as the verify parsed it. A range's rows past its first failure are not handed, and rows the
 * verify reads again (a writer appending at the snapshot's end) are
 * handed again: the rows handed are the verdict's only when `handed` is
 * its count. A row longer than LONG_LINE_MAX is not handed, nor any
 * after it: the page of such a journal is drawn after the verify, by
 * readPageRows, whose exact path keeps a huge row within its bound (the
 * verify's memory for it and the page's would stand together).
 * `between()`: after each read's rows (the verify does not wait on it),
 * before the kernel's memory is read into again (a row's bytes are in
 * place until then: KernelFields.inPlace).
 */
export async function verifyPageRows(
  path: string,
  opts: Pick<FastVerifyOptions, "seal" | "onProgress">,
  fp: ReplayFingerprint,
  sink: PageRowSink,
  between: () => void,
): Promise<{ verdict: FastVerifyResult; handed: number }> {
  // the progress of the rows handed (the verify's own reports come at most every 250 ms: none on a short pass)
  const onProgress = opts.onProgress;
  const total = onProgress === undefined ? 0 : sizeOf(path);
  let done = 0;
  let reported = 0;
  const after = (): void => {
    between();
    if (onProgress !== undefined && done - reported >= PROGRESS_BYTES) {
      reported = done;
      onProgress(Math.min(done, total), total);
    }
  };
  const located = new LocatedFields(PAGE_TABLE);
  const lineRows = new LineRows();
  let handed = 0;
  let exactBytes = 0;
  /** A row too long to hand on came: no row is handed from it on (the page is drawn after the verify). */
  let declined = false;
  const rowText: RowTextSink = {
    kernelRow(k, s, e) {
      if (declined || (declined = e - s > LONG_LINE_MAX)) return;
      located.locate(k.u8, k.i32, k.membersAt, k.info);
      // the line without its terminator (LF, CR or CRLF)
      const b = k.lines;
      let t = e - 1;
      if (b[t] === LF && t > s && b[t - 1] === CR) t--;
      handed++;
      done += e - s;
      // in place: the kernel's memory is read into again only after `between()` (its texts are handed first)
      sink.row(lineRows.kernelRow(located, true, b, s, t));
    },
    kernelText(u8, s, e, rows) {
      if (declined) return;
      fp.updateText(u8.subarray(s, e), rows);
      after();
    },
    exactRow(bytes, _lineNo, row) {
      if (declined || (declined = bytes.length > LONG_LINE_MAX)) return;
      // the row as the verify parsed it (not parsed again: a huge row's copies would stand together)
      fp.update(row);
      handed++;
      sink.row(lineRows.exactRow(row));
      // as often as the kernel's rows call it (each read's), not each row
      done += bytes.length + 1;
      exactBytes += bytes.length;
      if (exactBytes >= BETWEEN_BYTES) {
        exactBytes = 0;
        after();
      }
    },
  };
  const verdict = await verifyJournal(path, { seal: opts.seal, rowText });
  if (onProgress !== undefined) onProgress(total, total);
  return { verdict, handed };
}
