import { dumps, dumpsRawStream, dumpsStream, holdsRaw, previewJson, type DumpsOptions } from "../pyjson/encode.ts";
import { PyRaw, type PyLike } from "../pyjson/types.ts";

/**
 * JSON for machine output on stdout: indent 2, raw UTF-8 (lone surrogates
 * escaped), insertion order, parsed numbers exactly as recorded.
 */
export function renderJson(value: unknown, indent: number | null = 2): string {
  if (indent === 2) return dumps(value as PyLike, RENDER_OPTIONS);
  if (indent === null) return dumps(value as PyLike, INLINE_OPTIONS);
  return dumps(value as PyLike, { ...RENDER_OPTIONS, indent });
}

/** renderJson's options at indent 2. */
export const RENDER_OPTIONS: DumpsOptions = { indent: 2, ensureAscii: false, rawNumbers: true, separators: [",", ": "] };

/** renderJson's options at indent null (its one-line form). */
const INLINE_OPTIONS: DumpsOptions = { indent: null, ensureAscii: false, rawNumbers: true, separators: [", ", ": "] };

/**
 * A recorded value as human output shows it: a string as itself, anything
 * else as compact JSON (`true`, `null`, `{"a": 1}`, numbers as recorded),
 * never Python's `str()` (`True`, `None`, `{'a': 1}`). A huge row's large
 * value (`PyRaw`) shows as its first 200 characters and "…".
 */
export function humanValue(value: unknown): string {
  if (value instanceof PyRaw) return previewJson(value);
  return typeof value === "string" ? value : renderJson(value, null);
}

/**
 * A row of a JSON document being streamed, as `renderJson(row)` indented by
 * `level` (2 spaces each), first line included: handed to `write` in
 * pieces when the row is huge (it holds `PyRaw` values), else as one text.
 */
export function renderRowJson(row: Map<string, PyLike>, level: number, write: (text: string) => void): void {
  if (!holdsRaw(row)) return write(rowJsonText(row, level));
  write(" ".repeat(2 * level));
  streamRow(row, { ...RENDER_OPTIONS, level }, write);
}

/**
 * `renderJson(row)` indented by `level` (2 spaces each), first line
 * included, for a row without `PyRaw` values: the encoder writes each line's
 * indent, so no text is re-indented (a deeply nested row's text is mostly
 * indent: each copy of it would be garbage many times the row's size).
 */
export function rowJsonText(row: Map<string, PyLike>, level: number): string {
  return " ".repeat(2 * level) + dumps(row as PyLike, { ...RENDER_OPTIONS, level });
}

/**
 * A row as `renderJson(row, null)` prints it (one line): handed to `write`
 * in pieces when the row is huge (it holds `PyRaw` values), else as one text.
 */
export function renderRowInline(row: Map<string, PyLike>, write: (text: string) => void): void {
  if (!holdsRaw(row)) return write(renderJson(row, null));
  streamRow(row, INLINE_OPTIONS, write);
}

/**
 * A JSON document as `renderJson(doc)` prints it: handed to `write` in
 * pieces when a member is a huge row (it holds `PyRaw` values), else as one text.
 */
export function renderDocJson(doc: Record<string, unknown>, write: (text: string) => void): void {
  const members = new Map(Object.entries(doc) as [string, PyLike][]);
  let huge = false;
  for (const v of members.values()) if (holdsRaw(v)) huge = true;
  if (!huge) return write(renderJson(doc));
  streamRow(members, RENDER_OPTIONS, write);
}

/**
 * A value as `renderJson(value, null)` prints it (one line): a huge row's
 * large value (`PyRaw`) handed to `write` in pieces encoded from its
 * bytes, anything else as one text.
 */
export function renderValueInline(value: unknown, write: (text: string) => void): void {
  if (value instanceof PyRaw) return dumpsRawStream(value, INLINE_OPTIONS, collecting(write));
  write(renderJson(value, null));
}

/**
 * The first `keep` UTF-16 units of a text handed over in pieces by
 * `render` (renderRowInline, renderValueInline), and the whole text's
 * length: the rest is only counted, never held.
 */
export function textHead(render: (write: (text: string) => void) => void, keep: number): { head: string; length: number } {
  let head = "";
  let length = 0;
  render((text) => {
    length += text.length;
    if (head.length < keep) head += text.slice(0, keep - head.length);
  });
  return { head, length };
}

function streamRow(row: Map<string, PyLike>, options: DumpsOptions, write: (text: string) => void): void {
  dumpsStream(row, options, collecting(write));
}

/**
 * `write`, collecting garbage every megabyte written: the pieces are
 * garbage once written, and would pile up (a row of many small objects
 * otherwise comes near 64 MB + 4x the row).
 */
function collecting(write: (text: string) => void): (text: string) => void {
  let since = 0;
  return (text) => {
    write(text);
    since += text.length;
    if (since >= 1 << 20) {
      since = 0;
      Bun.gc(false);
    }
  };
}
