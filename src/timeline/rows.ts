import { indexRow, KeyTable, RowIndex, Spell, Tok } from "../codec/row-index.ts";
import { classifyLine, type LineVerdict } from "../journal/reader.ts";
import { parse } from "../pyjson/parse.ts";
import { pyStr } from "../pyjson/python.ts";
import type { PyObject, PyValue } from "../pyjson/types.ts";
import { readFastLines } from "../replay/fast-lines.ts";
import { numberField } from "../replay/display.ts";
import { numberAt } from "../replay/fast-cells.ts";
import { RowTranscoder } from "../replay/fast-json.ts";
import { DISPLAY_FIELDS, FINGERPRINT_BATCH, valueAt } from "../replay/fast-row.ts";
import type { ReplayFingerprint } from "../replay/fingerprint.ts";
import { KernelRowReader, LONG_LINE_MAX, LongLineKernel } from "../replay/kernel-row.ts";

/**
 * The rows of the timeline page's pass, read the fast way: every line is
 * indexed by the row codec (src/codec/row-index.ts), and the few fields the
 * page reads of every row (PAGE_FIELDS) are taken from the tape into one
 * small map, refilled per row; the row's replay fingerprint text comes from
 * the verify kernel in fingerprint mode (kernel-row.ts), batched in its
 * memory (a line that crossed a read, or a long one, from a copy). Only a
 * row the page's table shows is parsed whole (`full`), and only when the
 * table asks for it. A line the codec or the kernel declines (a row outside
 * the writer's envelope) takes the exact path (classifyLine: the full row, as the
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
const latin1 = new TextDecoder("latin1");

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

  /** numberField of the key's value, made from the tape (a string's value only is decoded); undefined: no such key. */
  number(key: string): number | null | undefined {
    const id = FIELD_ID.get(key);
    if (id === undefined) return undefined;
    const ix = this.ix;
    const t = ix.valueOf(id);
    if (t < 0) return undefined;
    switch (ix.kind(t)) {
      case Tok.Int:
      case Tok.Float: {
        const n = lexemeNumber(ix.buf, ix.start(t), ix.end(t));
        return n === 0 ? 0 : n;
      }
      case Tok.Object:
      case Tok.Array:
        // falsy when empty (0), else not a number
        return ix.next(t) === t + 1 ? 0 : null;
      default:
        return numberField(this.get(key));
    }
  }

  /** The key's value when it is a string of plain ASCII (no escapes) that fits `out`: copied there, its length; else -1. */
  plainString(key: string, out: Uint8Array): number {
    const id = FIELD_ID.get(key);
    const ix = this.ix;
    const t = id === undefined ? -1 : ix.valueOf(id);
    if (t < 0 || ix.kind(t) !== Tok.String || (ix.flags(t) & (Spell.Escaped | Spell.Utf8)) !== 0) return -1;
    const s = ix.start(t) + 1;
    const n = ix.end(t) - 1 - s;
    if (n > out.length) return -1;
    const b = ix.buf;
    for (let i = 0; i < n; i++) out[i] = b[s + i]!;
    return n;
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

/** Room for a number's lexeme, and a view of each length (no view made per number). */
const LEXEME = new Uint8Array(32);
const LEXEME_VIEWS = Array.from({ length: LEXEME.length + 1 }, (_, n) => LEXEME.subarray(0, n));

/** `Number(text)` of the JSON number b[s, e) (a timestamp has 17 digits: too many for numberAt's exact shortcut). */
function lexemeNumber(b: Uint8Array, s: number, e: number): number {
  const n = e - s;
  if (n <= 15 || n > LEXEME.length) return numberAt(b, s, e);
  for (let i = 0; i < n; i++) LEXEME[i] = b[s + i]!;
  return Number(latin1.decode(LEXEME_VIEWS[n]!));
}

/**
 * `pyStr(row.get(key), "")` of the last row kept, made only when asked:
 * a row on the tape whose value is a plain string leaves its bytes (the
 * page needs the last row's event_hash, and decoding every row's cost a
 * string each).
 */
export class LastText {
  private bytes = new Uint8Array(128);
  /** Bytes kept (-1: `text` holds the value). */
  private len = -1;
  private text = "";

  keep(row: PyObject, key: string): void {
    if (row instanceof TapeFields) {
      const n = row.plainString(key, this.bytes);
      if (n >= 0) {
        this.len = n;
        return;
      }
    }
    this.len = -1;
    this.text = pyStr(row.get(key), "");
  }

  value(): string {
    return this.len < 0 ? this.text : latin1.decode(this.bytes.subarray(0, this.len));
  }
}

/** numberField of `row`'s `key` (undefined: the row has no such key), from the tape when the row is on one. */
export function fieldNumber(row: PyObject, key: string): number | null | undefined {
  if (row instanceof TapeFields) return row.number(key);
  return row.has(key) ? numberField(row.get(key)) : undefined;
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
  /** Hand the sink the row the codec indexed, the line buf[s, e) at file offset `at`. */
  const taken = (buf: Uint8Array, s: number, e: number, at: number): void => {
    fields.next();
    line = buf;
    lineS = s;
    lineE = e;
    offset = at;
    sink.row(fast);
  };
  const copies = new LongLineKernel();
  /** The line buf[s, e) the reader assembled (it spanned two reads, or is long), indexed, taken from a copy; false: declined. */
  const copied = (buf: Uint8Array, s: number, e: number, at: number): boolean => {
    const row = copies.take(buf.subarray(s, e));
    if (row === null) return false;
    // its text is hashed after the rows before it, on its own
    flush();
    fp.updateText(row.batch(), 1);
    taken(buf, s, e, at);
    return true;
  };
  for (const _ of readFastLines(path, {
    buffer: k.readBuffer,
    endOffset,
    // no collection per exact line's bytes (fast-lines.ts gcEvery): on a journal of ~1 MB rows that was a full collection
    // per row, +0.3 s for 30 MB; the pass collects on the growth of its resident set instead (generate.ts)
    fast: (buf, s, e, _lineNo, at) => {
      if (!indexRow(buf, s, e, ix, KEYS) || ix.kind(0) !== Tok.Object) return false;
      if (!k.holds(buf)) return copied(buf, s, e, at);
      if (!k.take(s, e)) return false;
      batched++;
      if (k.textLength() >= FINGERPRINT_BATCH) flush();
      taken(buf, s, e, at);
      return true;
    },
    long: (bytes, _lineNo, at) => bytes.length <= LONG_LINE_MAX && indexRow(bytes, 0, bytes.length, ix, KEYS) && ix.kind(0) === Tok.Object && copied(bytes, 0, bytes.length, at),
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
