import { existsSync } from "node:fs";
import type { RowIndex } from "../codec/row-index.ts";
import { Spell, Tok } from "../codec/row-index.ts";
import { readChunks } from "../fsutil/input.ts";
import { LineSplitter } from "../fsutil/lines.ts";
import { pyStr } from "../pyjson/python.ts";
import { rawGet } from "../pyjson/row.ts";
import { PyRaw, type PyObject, type PyValue } from "../pyjson/types.ts";
import { humanValue } from "../render/json.ts";
import { IndexedEntries, plainString, StepKey } from "../steps/indexed.ts";

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

/** The cells of an indexed entry, or null when the exact path must decide them. */
function indexedCells(ix: RowIndex): AgentCells | null {
  const seqAt = ix.valueOf(StepKey.Seq);
  if (seqAt < 0 || ix.kind(seqAt) !== Tok.Int || (ix.flags(seqAt) & Spell.NotPython) !== 0) return null;
  const stepText = plainString(ix, ix.valueOf(StepKey.StepHash), 16);
  const prevAt = ix.valueOf(StepKey.PrevHash);
  const prevText = prevAt < 0 ? "" : plainString(ix, prevAt, 16);
  if (stepText === null || prevText === null) return null;
  const modelAt = ix.valueOf(StepKey.Model);
  const model = modelAt < 0 || isNull(ix, modelAt) ? "-" : plainString(ix, modelAt);
  if (model === null) return null;
  const toolAt = ix.valueOf(StepKey.ToolCall);
  let tool: string | null = "-";
  if (toolAt >= 0 && !isNull(ix, toolAt)) {
    const nameAt = ix.kind(toolAt) === Tok.Object ? nameValue(ix, toolAt) : -1;
    tool = nameAt < 0 ? "<tool>" : plainString(ix, nameAt);
    if (tool === null) return null;
  }
  return [ix.latin1(ix.start(seqAt), ix.end(seqAt)), stepText + "...", prevText + "...", model, tool];
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
  const splitter = new LineSplitter("universal", (line) => {
    if (limit !== null && seen >= limit) return;
    const cells = entries.line(line);
    if (cells === undefined) return;
    batch.push(cells);
    seen++;
  });
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
