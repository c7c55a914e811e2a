import { paint } from "../render/ansi.ts";
import { idColumn, Table, type CellInput, type PiecedCell } from "../render/table.ts";
import { JOURNAL_MAX_ROW_BYTES, openInput, type OpenInput } from "../fsutil/input.ts";
import { classifyLine } from "../journal/reader.ts";
import { RAW_STRING_MIN } from "../pyjson/row.ts";
import type { PyObject } from "../pyjson/types.ts";
import { SpoolKind, type CellSpool } from "./cell-spool.ts";
import { displayRow, eventStyle, shownRow, type DisplayRow, type ShownRow, type ShownText } from "./display.ts";
import { CellSpans, FastTableWriter, timeFromTs } from "./fast-cells.ts";
import { readFastLines } from "./fast-lines.ts";
import { DISPLAY_GC_CHUNKS, EVENT_HASH_SLOT, type LoadedRow } from "./fast-row.ts";
import { KernelRowReader, LongLineKernel } from "./kernel-row.ts";
import { runRows } from "./run-view.ts";
import { utf8, type ByteOutput } from "./sink.ts";

/**
 * The rows of `replay <RUN_ID>`'s table: TIME · EVENT · AGENT · TASK ·
 * DETAIL. Ids (AGENT, TASK) get their full measured width and are never
 * cut below `ID_MIN_WIDTH` cells; on a narrow terminal EVENT gives way
 * first, then the ids (to that minimum), and when DETAIL would have fewer
 * than 20 cells it moves below the row, wrapped to the terminal (then TASK
 * too, labelled), so no line is wider than the terminal at any width of 60
 * or more.
 *
 * `writeRunTable` lays out the rows the scan pass left in its spool
 * (cell-spool.ts), or without one reads each row in the writer's envelope
 * on the display's kernel (kernel-row.ts); a row whose cells are plain
 * printable ASCII that fits its column is laid out without the general
 * table code; anything else takes the exact path (the full row parsed;
 * `Table.format`). `writeRunTableExact` is the exact path alone, the reference.
 */

export function runTable(ids: { agent: number; task: number }, width: number): Table {
  return new Table(
    [
      { header: "TIME", width: 6, minWidth: 4, style: "dim" },
      { header: "EVENT", width: 24, minWidth: 12, shrinkPriority: 2 },
      idColumn("AGENT", ids.agent, { shrinkPriority: 1 }),
      idColumn("TASK", ids.task, { shrinkPriority: 1, fold: "task: ", foldPriority: 1 }),
      { header: "DETAIL", width: 32, minWidth: 20, flex: true, overflow: "wrap", fold: "", foldPriority: 2 },
    ],
    { width },
  );
}

/** Column styles of runTable (the EVENT cell brings its own). */
const TIME_STYLE = "dim";
const PLAIN = /^[\x20-\x7e]*$/;

/**
 * `table.format(cells)` joined, for a row whose cells are plain printable
 * ASCII (so sanitizing changes nothing and a character is a cell) that fit
 * their columns on one line with no folded column; null for any other row.
 */
function plainRowText(table: Table, time: string, event: string, eventStyle: string, agent: string, task: string, detail: string): string | null {
  const w = table.widths;
  if (table.folded.size !== 0) return null;
  if (time.length > w[0]! || event.length > w[1]! || agent.length > w[2]! || task.length > w[3]! || detail.length > w[4]!) return null;
  if (!PLAIN.test(time) || !PLAIN.test(event) || !PLAIN.test(agent) || !PLAIN.test(task) || !PLAIN.test(detail)) return null;
  // Padding stays outside the styled span; the last cell is not padded; the line is trimmed at its end.
  const cell = (text: string, width: number, style: string): string => {
    const fill = " ".repeat(width - text.length);
    return (style && text !== "" ? paint(style, text) : text) + fill;
  };
  const line =
    cell(time, w[0]!, TIME_STYLE) + "  " + cell(event, w[1]!, eventStyle) + "  " + cell(agent, w[2]!, "") + "  " + cell(task, w[3]!, "") + "  " + detail;
  return line.trimEnd() + "\n";
}

/** The lines of a row's display cells. */
function cellsText(table: Table, d: DisplayRow): string {
  const fast = plainRowText(table, d.time, d.event, d.eventStyle, d.agent, d.task, d.detail);
  if (fast !== null) return fast;
  let text = "";
  for (const line of table.format([d.time, { text: d.event, style: d.eventStyle }, d.agent, d.task, d.detail])) text += line + "\n";
  return text;
}

/** The lines of a row's cells, any of them a LongText (laid out piece by piece), made as they are taken: `table.format`'s lines. */
export function shownLines(table: Table, d: ShownRow): Generator<string> {
  const cell = (t: ShownText, style?: string): CellInput | PiecedCell => (typeof t === "string" ? { text: t, style } : { pieces: () => t.pieces(), style });
  return table.formatLines([d.time, cell(d.event, d.eventStyle), cell(d.agent), cell(d.task), cell(d.detail)]);
}

/**
 * A long row's lines make garbage many times their bytes (each line is cut, padded and joined), which the engine
 * collects too late: collected after this many flushes of the writer.
 */
const LONG_ROW_GC_FLUSHES = 4;

/**
 * The row's lines into `w`: a row a long string field shows in (a LongText
 * cell) goes out line by line as its cells are decoded and laid out, `w`
 * written to `out` whenever it fills, since its lines can be many times
 * the field (a wrapped DETAIL, padded).
 */
function writeRow(table: Table, row: PyObject, baseTs: number | null, w: FastTableWriter, out: ByteOutput): void {
  const d = shownRow(row, baseTs);
  if (typeof d.event === "string" && typeof d.agent === "string" && typeof d.task === "string" && typeof d.detail === "string") {
    w.text(cellsText(table, d as DisplayRow));
    return;
  }
  let flushes = 0;
  for (const line of shownLines(table, d)) {
    w.text(line + "\n");
    if (w.flushable()) {
      if (++flushes % LONG_ROW_GC_FLUSHES === 0) Bun.gc(true);
      out.writeSync(w.out.subarray(0, w.pos));
      w.reset();
      if (out.closed()) return;
    }
  }
}

/**
 * `spool`: what the scan pass (run-view.ts scanRunFast) left, which holds
 * the rows it read (at most `limit`); without one (or a broken one) the
 * journal is read again.
 */
export async function writeRunTable(
  journal: string,
  baseTs: number | null,
  limit: number | undefined,
  table: Table,
  out: ByteOutput,
  spool?: CellSpool,
): Promise<void> {
  if (spool?.finish()) return writeSpooledTable(journal, baseTs, table, out, spool);
  const w = new FastTableWriter(table, baseTs);
  w.text(table.header() + "\n");
  if (limit === undefined || limit > 0) {
    // rows in the writer's envelope on the display's kernel (in the read buffer, or from a copy); any other on the exact path
    const k = new KernelRowReader();
    const copies = new LongLineKernel();
    let n = 0;
    const show = (row: LoadedRow): true => {
      if (!w.row(row)) writeRow(table, row.displayFields(EVENT_HASH_SLOT), baseTs, w, out);
      n++;
      return true;
    };
    for (const _ of readFastLines(journal, {
      buffer: k.readBuffer,
      gcEvery: DISPLAY_GC_CHUNKS,
      fast: (b, s, e) => {
        if (!k.holds(b)) {
          const row = copies.take(b.subarray(s, e));
          return row !== null && show(row);
        }
        // the fingerprint text the kernel appends is not wanted here
        k.clear();
        return k.take(s, e) && show(k);
      },
      long: (bytes) => {
        const row = copies.take(bytes);
        return row !== null && show(row);
      },
      // an exact row is only shown (display.ts shownRow decodes what it shows, as it lays it out)
      rawStrings: true,
      exact: (v) => {
        if (v.kind !== "row") return;
        writeRow(table, v.row, baseTs, w, out);
        n++;
      },
      done: () => (limit !== undefined && n >= limit) || out.closed(),
    })) {
      if (w.flushable()) {
        await out.write(w.out.subarray(0, w.pos));
        w.reset();
      }
      if (out.closed()) return; // the reader went away: stop reading the journal
    }
  }
  await out.write(w.out.subarray(0, w.pos));
}

const latin1 = new TextDecoder("latin1");
/** Bytes of rows parsed (Fields and Exact records) after which garbage is collected, as readFastLines does. */
const GC_BYTES = 1 << 20;

/** writeRunTable from the spool: plain cells are padded to the widths; the rest is shown as the exact path shows it. */
async function writeSpooledTable(journal: string, baseTs: number | null, table: Table, out: ByteOutput, spool: CellSpool): Promise<void> {
  const w = new FastTableWriter(table, baseTs);
  w.text(table.header() + "\n");
  const rows = spool.reader();
  const c = new CellSpans();
  const time = new Uint8Array(32);
  const text = (b: Uint8Array, s: number, e: number): string => latin1.decode(b.subarray(s, e));
  let input = null as OpenInput | null;
  let parsed = 0;
  /** The row on the record's line, read again from the journal and shown as the exact reader reads it. */
  const exactRow = (): void => {
    input ??= openInput(journal, { what: "journal" });
    const bytes = new Uint8Array(rows.length);
    let got = 0;
    while (input !== null && got < bytes.length) {
      const n = input.read(bytes, got, bytes.length - got, rows.offset + got);
      if (n === 0) break;
      got += n;
    }
    // shown and dropped: its long strings stay bytes (display.ts shownRow decodes what it shows, as it lays it out)
    const v = classifyLine(bytes.subarray(0, got), JOURNAL_MAX_ROW_BYTES, true, RAW_STRING_MIN);
    if (v.kind === "row") writeRow(table, v.row, baseTs, w, out);
    parsed += got;
  };
  try {
    while (rows.next()) {
      if (rows.kind === SpoolKind.Exact) exactRow();
      else if (rows.kind === SpoolKind.Fields) {
        writeRow(table, rows.fieldsRow(), baseTs, w, out);
        parsed += rows.length;
      } else {
        rows.cells(c);
        // a row with a ts was read, so the time base is known; a TIME that is not plain is the exact path's
        const n = rows.kind === SpoolKind.Time ? 0 : baseTs === null ? -1 : timeFromTs(c.timeB, c.timeS, c.timeE, baseTs, time);
        if (n < 0) exactRow();
        else {
          if (rows.kind === SpoolKind.Ts) {
            c.timeB = time;
            c.timeS = 0;
            c.timeE = n;
          }
          if (!w.line(c)) {
            const event = text(c.eventB, c.eventS, c.eventE);
            const agent = text(c.agentB, c.agentS, c.agentE);
            const task = text(c.taskB, c.taskS, c.taskE);
            w.text(cellsText(table, { time: text(c.timeB, c.timeS, c.timeE), event, eventStyle: eventStyle(event), agent, task, detail: text(c.detailB, c.detailS, c.detailE) }));
          }
        }
      }
      if (parsed >= GC_BYTES) {
        Bun.gc(true);
        parsed = 0;
      }
      if (w.flushable()) {
        await out.write(w.out.subarray(0, w.pos));
        w.reset();
        if (out.closed()) return; // the reader went away
      }
    }
  } finally {
    input?.close();
  }
  await out.write(w.out.subarray(0, w.pos));
}

/** The exact path alone (every row parsed, every row through Table.format): the reference of writeRunTable. */
export async function writeRunTableExact(journal: string, baseTs: number | null, limit: number | undefined, table: Table, out: ByteOutput): Promise<void> {
  let buf = table.header() + "\n";
  for await (const row of runRows(journal, limit)) {
    const d = displayRow(row, baseTs);
    for (const line of table.format([d.time, { text: d.event, style: d.eventStyle }, d.agent, d.task, d.detail])) buf += line + "\n";
    if (buf.length >= 65536) {
      await out.write(utf8(buf));
      buf = "";
      if (out.closed()) return;
    }
  }
  await out.write(utf8(buf));
}
