import { existsSync } from "node:fs";
import type { RowIndex } from "../codec/row-index.ts";
import { Spell, Tok } from "../codec/row-index.ts";
import { readChunks } from "../fsutil/input.ts";
import { DEFAULT_MAX_LINE_BYTES, LineSplitter } from "../fsutil/lines.ts";
import { pyStr } from "../pyjson/python.ts";
import { rawGet } from "../pyjson/row.ts";
import { PyRaw, type PyObject, type PyValue } from "../pyjson/types.ts";
import { humanValue } from "../render/json.ts";
import { Key } from "../steps/canonical-row.ts";
import { IndexedEntries, plainStart } from "../steps/indexed.ts";

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
  const seqAt = ix.valueOf(Key.Seq);
  if (seqAt < 0 || ix.kind(seqAt) !== Tok.Int || (ix.flags(seqAt) & Spell.NotPython) !== 0) return false;
  sp.seqS = ix.start(seqAt);
  sp.seqE = ix.end(seqAt);
  const step = ix.valueOf(Key.StepHash);
  sp.stepS = plainStart(ix, step);
  if (sp.stepS < 0) return false;
  sp.stepE = Math.min(ix.end(step) - 1, sp.stepS + 16);
  const prevAt = ix.valueOf(Key.PrevHash);
  if (prevAt < 0) sp.prevS = NO_HASH;
  else {
    sp.prevS = plainStart(ix, prevAt);
    if (sp.prevS < 0) return false;
    sp.prevE = Math.min(ix.end(prevAt) - 1, sp.prevS + 16);
  }
  const modelAt = ix.valueOf(Key.Model);
  if (modelAt < 0 || isNull(ix, modelAt)) sp.modelS = DASH;
  else {
    sp.modelS = plainStart(ix, modelAt);
    if (sp.modelS < 0) return false;
    sp.modelE = ix.end(modelAt) - 1;
  }
  const toolAt = ix.valueOf(Key.ToolCall);
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

/** The cells of an indexed entry, or null when the exact path must decide them. */
function indexedCells(ix: RowIndex): AgentCells | null {
  if (!readSpans(ix)) return null;
  const text = (s: number, e: number): string => (s === DASH ? "-" : s === TOOL ? "<tool>" : s === NO_HASH ? "" : ix.latin1(s, e));
  return [ix.latin1(sp.seqS, sp.seqE), text(sp.stepS, sp.stepE) + "...", text(sp.prevS, sp.prevE) + "...", text(sp.modelS, sp.modelE), text(sp.toolS, sp.toolE)];
}

/** Bytes read at a time: one batch of rows (a batch's strings live until it is written). */
const READ_BYTES = 1 << 18;

/**
 * The agent view's table cells for the step journal at `path`, at most
 * `limit` entries (null: all), streamed: each read chunk's rows are handed
 * out as one batch before the next chunk is read.
 */
export async function* agentTableCells(path: string, limit: number | null): AsyncGenerator<AgentCells[]> {
  if (!existsSync(path) || limit === 0) return;
  let batch: AgentCells[] = [];
  let seen = 0;
  // the cells are made before the line's buffer is reused: a huge row need not be copied
  const entries = new IndexedEntries(indexedCells, exactAgentCells, true);
  const take = (cells: AgentCells): void => {
    batch.push(cells);
    seen++;
  };
  const indexed = entries.probe(take);
  const splitter = new LineSplitter(
    "universal",
    (line) => {
      if (limit !== null && seen >= limit) return;
      const cells = entries.line(line);
      if (cells !== undefined) take(cells);
    },
    DEFAULT_MAX_LINE_BYTES,
    (buf, start, end) => (limit !== null && seen >= limit) || indexed(buf, start, end),
  );
  let chunks = 0;
  for (const chunk of readChunks(path, { what: "journal" }, READ_BYTES)) {
    // The cells and line views are garbage once written: collecting every few MB keeps RSS flat.
    if (++chunks % 32 === 0) Bun.gc(true);
    splitter.push(chunk);
    yield batch;
    batch = [];
    if (limit !== null && seen >= limit) return;
  }
  splitter.end();
  yield batch;
}

/** The table's lines as bytes, a batch at a time (the buffer is reused once the caller asks for the next). */
class LineBytes {
  buf = new Uint8Array(1 << 18);
  len = 0;
  private readonly enc = new TextEncoder();

  private room(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const grown = new Uint8Array(Math.max(this.buf.length * 2, this.len + n));
    grown.set(this.buf.subarray(0, this.len));
    this.buf = grown;
  }

  /** A line of text (the exact path's), with its line feed. */
  text(line: string): void {
    this.room(3 * line.length + 1);
    this.len += this.enc.encodeInto(line, this.buf.subarray(this.len)).written;
    this.buf[this.len++] = 0x0a;
  }

  /** src[s, e), then spaces up to `width` bytes in all (padEnd: a longer cell is not cut). */
  cell(src: Uint8Array, s: number, e: number, width: number): void {
    const n = e - s;
    this.room(Math.max(n, width) + 4);
    // a cell is a few dozen bytes: copied in place, with no view made of it
    const out = this.buf;
    let o = this.len;
    for (let i = s; i < e; i++) out[o++] = src[i]!;
    this.len = o;
    this.pad(n, width);
  }

  /** ASCII text, then spaces up to `width`. */
  word(w: Uint8Array, width: number): void {
    this.room(Math.max(w.length, width) + 4);
    this.buf.set(w, this.len);
    this.len += w.length;
    this.pad(w.length, width);
  }

  pad(n: number, width: number): void {
    for (let i = n; i < width; i++) this.buf[this.len++] = 0x20;
  }

  /** End the line: trailing spaces dropped (trimEnd: a plain ASCII cell holds no other whitespace), a line feed. */
  endLine(): void {
    while (this.len > 0 && this.buf[this.len - 1] === 0x20) this.len--;
    this.room(1);
    this.buf[this.len++] = 0x0a;
  }
}

const ASCII = new TextEncoder();
const DOTS = ASCII.encode("...");
const DASH_TEXT = ASCII.encode("-");
const TOOL_TEXT = ASCII.encode("<tool>");

/**
 * The agent view's table rows in the fixed layout (`widths`: each column
 * padded to its width as `padEnd` pads, joined by one space, trailing
 * spaces dropped, a line feed after each), at most `limit` entries, as
 * bytes a batch per read chunk. An indexed row is written from its bytes
 * (no string made); every other row's cells go through `format` (the
 * same layout as text).
 */
export async function* agentTableBytes(path: string, limit: number | null, widths: readonly number[], format: (cells: AgentCells) => string): AsyncGenerator<Uint8Array> {
  if (!existsSync(path) || limit === 0) return;
  const out = new LineBytes();
  let seen = 0;
  const [wSeq, wStep, wPrev, wModel] = widths as [number, number, number, number];
  const entries = new IndexedEntries<true>(
    (ix) => {
      if (!readSpans(ix)) return null;
      const b = ix.buf;
      out.cell(b, sp.seqS, sp.seqE, wSeq);
      out.pad(0, 1);
      out.cell(b, sp.stepS, sp.stepE, 0);
      out.word(DOTS, wStep - (sp.stepE - sp.stepS));
      out.pad(0, 1);
      if (sp.prevS !== NO_HASH) out.cell(b, sp.prevS, sp.prevE, 0);
      out.word(DOTS, wPrev - (sp.prevS === NO_HASH ? 0 : sp.prevE - sp.prevS));
      out.pad(0, 1);
      if (sp.modelS === DASH) out.word(DASH_TEXT, wModel);
      else out.cell(b, sp.modelS, sp.modelE, wModel);
      out.pad(0, 1);
      if (sp.toolS === DASH) out.word(DASH_TEXT, 0);
      else if (sp.toolS === TOOL) out.word(TOOL_TEXT, 0);
      else out.cell(b, sp.toolS, sp.toolE, 0);
      out.endLine();
      return true;
    },
    (row) => {
      out.text(format(exactAgentCells(row)));
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
    DEFAULT_MAX_LINE_BYTES,
    (buf, start, end) => (limit !== null && seen >= limit) || indexed(buf, start, end),
  );
  for (const chunk of readChunks(path, { what: "journal" }, READ_BYTES)) {
    splitter.push(chunk);
    yield out.buf.subarray(0, out.len);
    out.len = 0;
    if (limit !== null && seen >= limit) return;
  }
  splitter.end();
  yield out.buf.subarray(0, out.len);
}
