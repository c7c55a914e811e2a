import { existsSync } from "node:fs";
import type { RowIndex } from "../codec/row-index.ts";
import { Spell, Tok } from "../codec/row-index.ts";
import { readChunks, JOURNAL_MAX_ROW_BYTES } from "../fsutil/input.ts";
import { LineSplitter } from "../fsutil/lines.ts";
import { pyStr } from "../pyjson/python.ts";
import { rawGet } from "../pyjson/row.ts";
import { PyRaw, type PyObject, type PyValue } from "../pyjson/types.ts";
import { humanValue } from "../render/json.ts";
import { Table } from "../render/table.ts";
import { StepKey } from "../steps/row-keys.ts";
import { IndexedEntries, plainStart } from "../steps/indexed.ts";
import type { TableLayout } from "./fast-cells.ts";
import { copyTo } from "../codec/bytes.ts";
import { PlainLines } from "./plain-lines.ts";

/**
 * The cells of the agent view's prose table (`replay <AGENT_ID>`): seq,
 * step_hash and prev_hash cut to 16 characters, model, tool name, one row
 * per entry of the tolerant reader (a parsed object with `step_hash`).
 *
 * A row whose cells are plain ASCII strings and integers in Python's
 * spelling has them read straight from the codec's index: no value tree,
 * no parse. Every other row takes the exact path (steps/indexed.ts).
 */
export type AgentCells = [seq: string, stepHash: string, prevHash: string, model: string, tool: string];

/** The cells of a parsed entry (the exact path). */
export function exactAgentCells(row: PyObject): AgentCells {
  const tc = row.get("tool_call");
  // Values as JSON (never Python's `None`/`True`/`{'a': 1}`); hashes are strings on every valid row.
  // a huge row's large tool_call stays bytes (src/pyjson/row.ts): its name is read from them
  const name = tc instanceof Map ? tc.get("name") : tc instanceof PyRaw ? rawGet(tc, "name") : undefined;
  const tool = tc === null || tc === undefined ? "-" : name !== undefined ? humanValue(name) : "<tool>";
  const model = row.get("model");
  return [
    humanValue(row.get("seq") as PyValue),
    pyStr(row.get("step_hash"), "").slice(0, 16) + "...",
    pyStr(row.get("prev_hash"), "").slice(0, 16) + "...",
    model === null || model === undefined ? "-" : humanValue(model),
    tool,
  ];
}

const NAME = new TextEncoder().encode("name");

/** `null` literal at t. */
function isNull(ix: RowIndex, t: number): boolean {
  return ix.kind(t) === Tok.Literal && ix.buf[ix.start(t)] === 0x6e;
}

/** Tape position of the last `name` member's value of the object token o (json.loads keeps the last), or -1. */
function nameValue(ix: RowIndex, o: number): number {
  let found = -1;
  const b = ix.buf;
  for (let k = o + 1, end = ix.next(o); k < end; k = ix.next(k + 1)) {
    const s = ix.start(k) + 1;
    if (ix.end(k) - 1 - s !== NAME.length) continue;
    let i = 0;
    while (i < NAME.length && b[s + i] === NAME[i]) i++;
    if (i === NAME.length) found = k + 1;
  }
  return found;
}

/** Where an indexed entry's cells lie (read by readSpans): a span of the row's bytes, or a fixed text. */
const DASH = -1;
const TOOL = -2;
const NO_HASH = -3;
const sp = { seqS: 0, seqE: 0, stepS: 0, stepE: 0, prevS: 0, prevE: 0, modelS: 0, modelE: 0, toolS: 0, toolE: 0 };

/**
 * Read the cells' spans of an indexed entry into `sp`; false when the exact
 * path must decide them (a cell not a plain ASCII string, seq not an
 * integer in Python's spelling).
 */
function readSpans(ix: RowIndex): boolean {
  const seqAt = ix.valueOf(StepKey.Seq);
  if (seqAt < 0 || ix.kind(seqAt) !== Tok.Int || (ix.flags(seqAt) & Spell.NotPython) !== 0) return false;
  sp.seqS = ix.start(seqAt);
  sp.seqE = ix.end(seqAt);
  const step = ix.valueOf(StepKey.StepHash);
  sp.stepS = plainStart(ix, step);
  if (sp.stepS < 0) return false;
  sp.stepE = Math.min(ix.end(step) - 1, sp.stepS + 16);
  const prevAt = ix.valueOf(StepKey.PrevHash);
  if (prevAt < 0) sp.prevS = NO_HASH;
  else {
    sp.prevS = plainStart(ix, prevAt);
    if (sp.prevS < 0) return false;
    sp.prevE = Math.min(ix.end(prevAt) - 1, sp.prevS + 16);
  }
  const modelAt = ix.valueOf(StepKey.Model);
  if (modelAt < 0 || isNull(ix, modelAt)) sp.modelS = DASH;
  else {
    sp.modelS = plainStart(ix, modelAt);
    if (sp.modelS < 0) return false;
    sp.modelE = ix.end(modelAt) - 1;
  }
  const toolAt = ix.valueOf(StepKey.ToolCall);
  if (toolAt < 0 || isNull(ix, toolAt)) sp.toolS = DASH;
  else {
    const nameAt = ix.kind(toolAt) === Tok.Object ? nameValue(ix, toolAt) : -1;
    if (nameAt < 0) sp.toolS = TOOL;
    else {
      sp.toolS = plainStart(ix, nameAt);
      if (sp.toolS < 0) return false;
      sp.toolE = ix.end(nameAt) - 1;
    }
  }
  return true;
}

/** Bytes read at a time: the table's lines are written once per read. */
const READ_BYTES = 1 << 18;

const ASCII = new TextEncoder();
const DOTS = ASCII.encode("...");
const DASH_TEXT = ASCII.encode("-");
const TOOL_TEXT = ASCII.encode("<tool>");
const FOLD_LABELS = [null, null, null, ASCII.encode("model: "), ASCII.encode("tool: ")];

/** Python's column widths for the agent view (tool: the rest of the line). */
export const AGENT_COLUMNS = [6, 19, 19, 24, 0];
/** Below this many cells the fixed layout would overflow (the widths, the gaps and a short tool name). */
export const AGENT_TABLE_WIDTH = 6 + 19 + 19 + 24 + 4 + 12;
export const AGENT_HEADER = ["seq", "step_hash", "prev_hash", "model", "tool"];

/** The layout on a terminal narrower than AGENT_TABLE_WIDTH: model and tool fold below each row. */
export function narrowAgentTable(width: number): Table {
  return new Table(
    [
      { header: AGENT_HEADER[0]!, width: 6, minWidth: 3 },
      { header: AGENT_HEADER[1]!, width: 19, minWidth: 19 },
      { header: AGENT_HEADER[2]!, width: 19, minWidth: 19 },
      { header: AGENT_HEADER[3]!, width: 24, fold: "model: ", foldPriority: 1 },
      { header: AGENT_HEADER[4]!, width: 12, fold: "tool: ", foldPriority: 2 },
    ],
    { gap: 1, width },
  );
}

/**
 * The agent view's table layout: Python's fixed one (`fixed`: each column
 * padded to its width as `padEnd` pads, never cut, joined by one space),
 * or on a narrow terminal a render/table.ts Table's (`table`: cells cut to
 * their columns, model and tool folded below the row, labelled).
 */
export type AgentLayout = { fixed: readonly number[] } | { table: TableLayout };

/** One row's five cells, laid out in a scratch buffer: cell i is buf[s[i], e[i]). */
class AgentCellBytes {
  buf = new Uint8Array(256);
  readonly s = new Int32Array(5);
  readonly e = new Int32Array(5);
  private len = 0;

  /** Lay out the cells of the row whose spans readSpans left in `sp`. */
  read(b: Uint8Array): void {
    this.len = 0;
    this.cell(0, b, sp.seqS, sp.seqE, null);
    this.cell(1, b, sp.stepS, sp.stepE, DOTS);
    this.cell(2, b, sp.prevS, sp.prevE, DOTS);
    this.cell(3, b, sp.modelS, sp.modelE, null);
    this.cell(4, b, sp.toolS, sp.toolE, null);
  }

  private cell(i: number, b: Uint8Array, s: number, e: number, suffix: Uint8Array | null): void {
    this.s[i] = this.len;
    if (s === DASH) this.put(DASH_TEXT, 0, DASH_TEXT.length);
    else if (s === TOOL) this.put(TOOL_TEXT, 0, TOOL_TEXT.length);
    else if (s !== NO_HASH) this.put(b, s, e);
    if (suffix !== null) this.put(suffix, 0, suffix.length);
    this.e[i] = this.len;
  }

  private put(b: Uint8Array, s: number, e: number): void {
    if (this.len + e - s > this.buf.length) {
      const bigger = new Uint8Array(Math.max(2 * this.buf.length, this.len + e - s));
      bigger.set(this.buf.subarray(0, this.len));
      this.buf = bigger;
    }
    this.len = copyTo(b, s, e, this.buf, this.len);
  }
}

/** After a cell of n bytes: padded to its width (a longer one is not cut), then the gap. */
function gapAfter(out: PlainLines, n: number, width: number): void {
  out.pad(Math.max(0, width - n) + 1);
}

/** An indexed row in the fixed layout (trailing spaces dropped: a plain ASCII cell holds no other whitespace). */
function fixedRow(out: PlainLines, b: Uint8Array, widths: readonly number[]): void {
  const [wSeq, wStep, wPrev, wModel] = widths as [number, number, number, number];
  const start = out.pos;
  out.room(Math.max(sp.seqE - sp.seqS, wSeq) + wStep + wPrev + Math.max(sp.modelE - sp.modelS, wModel) + (sp.toolE - sp.toolS) + 16);
  out.copy(b, sp.seqS, sp.seqE);
  gapAfter(out, sp.seqE - sp.seqS, wSeq);
  out.copy(b, sp.stepS, sp.stepE);
  out.copy(DOTS, 0, DOTS.length);
  gapAfter(out, sp.stepE - sp.stepS + DOTS.length, wStep);
  const prevLen = sp.prevS === NO_HASH ? 0 : sp.prevE - sp.prevS;
  if (prevLen > 0) out.copy(b, sp.prevS, sp.prevE);
  out.copy(DOTS, 0, DOTS.length);
  gapAfter(out, prevLen + DOTS.length, wPrev);
  if (sp.modelS === DASH) {
    out.copy(DASH_TEXT, 0, DASH_TEXT.length);
    gapAfter(out, DASH_TEXT.length, wModel);
  } else {
    out.copy(b, sp.modelS, sp.modelE);
    gapAfter(out, sp.modelE - sp.modelS, wModel);
  }
  if (sp.toolS === DASH) out.copy(DASH_TEXT, 0, DASH_TEXT.length);
  else if (sp.toolS === TOOL) out.copy(TOOL_TEXT, 0, TOOL_TEXT.length);
  else out.copy(b, sp.toolS, sp.toolE);
  out.endLine(start);
}

/**
 * An indexed row as the narrow Table formats it: the columns left in the
 * row cut to their widths and padded, joined by one space,
 * the line trimmed; then each folded cell that is not empty, labelled,
 * wrapped below it. False (nothing written) where a column is too narrow to cut.
 */
function tableRow(out: PlainLines, c: AgentCellBytes, t: TableLayout): boolean {
  const w = t.widths;
  for (let i = 0; i < 5; i++) if (!t.folded.has(i) && w[i]! < 2) return false;
  const start = out.pos;
  out.room(w[0]! + w[1]! + w[2]! + w[3]! + w[4]! + 32);
  // the row's last cell is padded too, and the padding trimmed with the line (Table.format pads it not, then trims the line)
  for (let i = 0; i < 5; i++) if (!t.folded.has(i)) out.pad(w[i]! - out.styled(c.buf, c.s[i]!, c.e[i]!, null, w[i]!) + 1);
  out.endLine(start);
  const width = Math.max(1, t.total - t.foldIndent);
  for (let i = 3; i < 5; i++) {
    if (t.folded.has(i) && c.e[i]! > c.s[i]!) out.foldedCell(FOLD_LABELS[i]!, c.buf, c.s[i]!, c.e[i]!, width, t.foldIndent);
  }
  return true;
}

/**
 * The agent view's table rows in the fixed layout (`widths`: each column
 * padded to its width as `padEnd` pads, joined by one space, trailing
 * spaces dropped, a line feed after each), at most `limit` entries, as
 * bytes a batch per read chunk. An indexed row is written from its bytes
 * (no string made); every other row's cells go through `format` (the
 * same layout as text).
 */
export async function* agentTableBytes(path: string, limit: number | null, layout: AgentLayout, format: (cells: AgentCells) => string): AsyncGenerator<Uint8Array> {
  if (!existsSync(path) || limit === 0) return;
  const out = new PlainLines(1 << 18);
  let seen = 0;
  const cells = new AgentCellBytes();
  const entries = new IndexedEntries<true>(
    (ix) => {
      if (!readSpans(ix)) return null;
      if ("fixed" in layout) {
        fixedRow(out, ix.buf, layout.fixed);
        return true;
      }
      cells.read(ix.buf);
      return tableRow(out, cells, layout.table) ? true : null;
    },
    (row) => {
      out.text(format(exactAgentCells(row)) + "\n");
      return true;
    },
    true,
  );
  const indexed = entries.probe(() => seen++);
  const splitter = new LineSplitter(
    "universal",
    (line) => {
      if (limit !== null && seen >= limit) return;
      if (entries.line(line) !== undefined) seen++;
    },
    JOURNAL_MAX_ROW_BYTES,
    (buf, start, end) => (limit !== null && seen >= limit) || indexed(buf, start, end),
  );
  for (const chunk of readChunks(path, { what: "journal" }, READ_BYTES)) {
    splitter.push(chunk);
    yield out.out.subarray(0, out.pos);
    out.pos = 0;
    if (limit !== null && seen >= limit) return;
  }
  splitter.end();
  yield out.out.subarray(0, out.pos);
}
