import { existsSync } from "node:fs";
import { readChunks, JOURNAL_MAX_ROW_BYTES } from "../fsutil/input.ts";
import { loadsLine, type LineValue } from "../pyjson/row.ts";
import type { PyObject } from "../pyjson/types.ts";
import { LineSplitter, refusingOverlong, type FastProbe, type LineDialect } from "../fsutil/lines.ts";
import { pyStrip } from "../pyjson/python.ts";
import { refuseContent, type JournalContent } from "../journal/content.ts";

/** Read size for journal files: large enough that per-chunk work is noise. */
export const READ_CHUNK = 1 << 20;

/**
 * Feed a step journal's lines to `sink`, streaming (constant memory). The
 * file is opened through src/fsutil/input.ts (`-`: standard input; a
 * non-regular file is refused; a missing one has no lines); a line over
 * `maxLineBytes` refuses the input (`row_too_large`).
 */
export async function forEachFileLine(
  path: string,
  dialect: LineDialect,
  sink: (line: Uint8Array, lineNo: number) => void,
  maxLineBytes = JOURNAL_MAX_ROW_BYTES,
  fast: FastProbe | null = null,
): Promise<void> {
  forEachFileLineSync(path, dialect, sink, maxLineBytes, fast);
}

/** The same, synchronously (the writer recovers its tip inside a sync `open`). */
export function forEachFileLineSync(
  path: string,
  dialect: LineDialect,
  sink: (line: Uint8Array, lineNo: number, splitter: LineSplitter) => void,
  maxLineBytes = JOURNAL_MAX_ROW_BYTES,
  fast: FastProbe | null = null,
): void {
  const splitter: LineSplitter = new LineSplitter(dialect, refusingOverlong((l, n) => sink(l, n, splitter), maxLineBytes), maxLineBytes, fast);
  // The splitter may keep a view of a chunk only within a call: one buffer serves every read.
  for (const chunk of readChunks(path, { what: "journal" }, READ_CHUNK)) splitter.push(chunk);
  splitter.end();
}

/**
 * Classify one physical line the way the tolerant reader does: blank,
 * not an entry (unparseable, not an object, or no `step_hash`), or an entry.
 */
export type LineKind = { kind: "blank" } | { kind: "malformed" } | { kind: "entry"; row: PyObject };

/** The row a loaded line holds when it is an entry (an object with a `step_hash`), else null: the tolerant reader's rule. */
export function entryOf(v: LineValue): PyObject | null {
  return v.kind === "value" && v.value instanceof Map && v.value.has("step_hash") ? v.value : null;
}

/** `transient`: the caller is done with the row before the line's buffer is reused (no copy of a huge line). */
export function classifyLine(bytes: Uint8Array | null, transient = false): LineKind {
  if (bytes === null) return { kind: "malformed" };
  if (bytes.length === 0) return { kind: "blank" };
  // a long line is read without a value tree (src/pyjson/row.ts)
  const v = loadsLine(bytes, transient);
  if (v.kind === "blank") return { kind: "blank" };
  const row = entryOf(v);
  return row === null ? { kind: "malformed" } : { kind: "entry", row };
}

/**
 * The tolerant reader (`entries()`, §1.5): parsed rows in file order;
 * blank, unparseable, non-object and `step_hash`-less lines are skipped
 * silently. Streams: rows are handed to `onEntry` as they are read.
 */
export async function forEachEntry(
  path: string,
  onEntry: (row: PyObject, lineNo: number) => void,
  dialect: LineDialect = "universal",
): Promise<void> {
  await forEachFileLine(path, dialect, (line, lineNo) => {
    const k = classifyLine(line);
    if (k.kind === "entry") onEntry(k.row, lineNo);
  });
}

/**
 * The tolerant reader's entries of the step journal at `path`, at most
 * `limit` of them (null: all), streamed: a chunk's entries are handed out
 * before the next chunk is read, and reading stops once `limit` are out.
 */
export async function* readEntries(path: string, limit: number | null): AsyncGenerator<PyObject> {
  if (!existsSync(path) || limit === 0) return;
  let batch: PyObject[] = [];
  let seen = 0;
  // the step journal's row limit, as every reader of it has (the default cap would drop a longer row as malformed)
  const splitter = new LineSplitter(
    "universal",
    (line) => {
      if (limit !== null && seen >= limit) return;
      const k = classifyLine(line);
      if (k.kind === "entry") {
        batch.push(k.row);
        seen++;
      }
    },
    JOURNAL_MAX_ROW_BYTES,
  );
  for (const chunk of readChunks(path, { what: "journal" })) {
    splitter.push(chunk);
    yield* batch;
    batch = [];
    if (limit !== null && seen >= limit) return;
  }
  splitter.end();
  yield* batch;
}

/** Ends a read at the first entry (stepJournalContent). */
class FoundEntry extends Error {}

/**
 * What a step journal file holds (journal/content.ts): a journal once a line
 * is an entry (reading stops there), foreign when lines were read and none
 * was, empty when no line was more than blank (a missing file has no lines).
 */
export function stepJournalContent(path: string): JournalContent {
  let lines = false;
  try {
    forEachFileLineSync(path, "universal", (line) => {
      const k = classifyLine(line);
      if (k.kind === "entry") throw new FoundEntry();
      if (k.kind !== "blank") lines = true;
    });
  } catch (err) {
    if (err instanceof FoundEntry) return "journal";
    throw err;
  }
  return lines ? "foreign" : "empty";
}

/**
 * Refuse the step journal at `path` (named `input`) when it is empty (unless
 * `allowEmpty`) or holds no step: `input_empty` / `not_a_journal`, exit 3.
 */
export function refuseNonStepJournal(path: string, input: string, allowEmpty = false): void {
  refuseContent(stepJournalContent(path), input, { allowEmpty, what: "an agent step journal", row: "step (an object with a step_hash)" });
}
