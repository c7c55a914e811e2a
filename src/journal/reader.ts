import { loadsLine } from "../pyjson/row.ts";
import type { PyValue } from "../pyjson/types.ts";
import { JOURNAL_MAX_ROW_BYTES } from "../fsutil/input.ts";
import { physicalLines, type LineReadOptions } from "../fsutil/lines.ts";

/**
 * The tolerant journal reader (spec §1.8): every physical line is either a
 * row (a JSON object), blank (skipped, but still numbered), or discarded
 * with its physical index — undecodable bytes, not JSON (Python `json`
 * semantics: NaN/Infinity accepted, last duplicate key wins), or not an
 * object. Streaming: rows are produced one at a time.
 */

export type JournalRow = Map<string, PyValue>;

export type ReadItem =
  | { kind: "row"; line: number; row: JournalRow; offset: number }
  | { kind: "discarded"; line: number; reason: string; offset: number };

export type LineVerdict =
  | { kind: "row"; row: JournalRow }
  | { kind: "blank" }
  | { kind: "discarded"; reason: string };

// Python decodes with errors="surrogateescape" and discards a line holding an
// escaped byte; a fatal decoder refuses exactly the same byte sequences
// (overlongs, encoded surrogates, > U+10FFFF, truncated sequences). The BOM
// is kept: Python's "utf-8" codec keeps it and json.loads then rejects it.
// A long line is read without a value tree (src/pyjson/row.ts).

// Discard verdicts are returned as copies: bun:test's toMatchObject with an
// asymmetric matcher writes into the object it checks (even a frozen one),
// which would corrupt a shared constant for every later caller in the process.
const BLANK: LineVerdict = { kind: "blank" };
const UNDECODABLE: LineVerdict = { kind: "discarded", reason: "undecodable bytes (not valid UTF-8)" };
const NON_OBJECT: LineVerdict = { kind: "discarded", reason: "non-object row" };
/**
 * Classify one physical line (content bytes without the terminator). A line
 * over `maxBytes` (the reader's row limit: the readers refuse such a line
 * before it gets here) is discarded unread, never parsed. `transient`: the
 * caller is done with the row before `bytes` can change, or they never
 * change (a long line's row then keeps views of them instead of a copy);
 * `rawStringMin`: its long string members stay bytes (see loadsLine).
 */
export function classifyLine(bytes: Uint8Array, maxBytes = JOURNAL_MAX_ROW_BYTES, transient = false, rawStringMin = Infinity): LineVerdict {
  if (bytes.length === 0) return BLANK;
  if (bytes.length > maxBytes) return { kind: "discarded", reason: `line longer than ${maxBytes} bytes (not read)` };
  const v = loadsLine(bytes, transient, rawStringMin);
  if (v.kind === "blank") return BLANK;
  if (v.kind === "undecodable") return { ...UNDECODABLE };
  if (v.kind === "error") return { kind: "discarded", reason: `unparsable (${v.message})` };
  const value: PyValue = v.value;
  if (!(value instanceof Map)) return { ...NON_OBJECT };
  return { kind: "row", row: value };
}

/** Synchronous core of `readJournal` (blank lines skipped). */
export function* readJournalSync(path: string, opts: LineReadOptions = {}): Generator<ReadItem> {
  opts = { maxLineBytes: JOURNAL_MAX_ROW_BYTES, ...opts };
  for (const line of physicalLines(path, opts)) {
    // a line the reader let go of is kept as it is (a huge row is not held twice)
    const v = classifyLine(line.bytes, opts.maxLineBytes, line.owned);
    if (v.kind === "blank") continue;
    if (v.kind === "row") yield { kind: "row", line: line.index, row: v.row, offset: line.start };
    else yield { kind: "discarded", line: line.index, reason: v.reason, offset: line.start };
  }
}

/**
 * Stream the rows and discarded lines of a journal. Blank lines are skipped;
 * a missing file yields nothing; an unreadable one throws `InputError`
 * (`journal_unreadable`).
 */
export async function* readJournal(path: string, opts: { endOffset?: number; maxLineBytes?: number } = {}): AsyncGenerator<ReadItem> {
  yield* readJournalSync(path, opts);
}

/** Whole-journal load for small files (tests, tooling): rows and discarded line indices. */
export async function loadEvents(path: string): Promise<{ events: JournalRow[]; discardedLineIndices: number[] }> {
  return loadEventsSync(path);
}

export function loadEventsSync(path: string): { events: JournalRow[]; discardedLineIndices: number[] } {
  const events: JournalRow[] = [];
  const discardedLineIndices: number[] = [];
  for (const item of readJournalSync(path)) {
    if (item.kind === "row") events.push(item.row);
    else discardedLineIndices.push(item.line);
  }
  return { events, discardedLineIndices };
}
