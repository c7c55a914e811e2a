import { MAX_ROW_BYTES } from "../fsutil/input.ts";
import { physicalLines, type LineReadOptions } from "../fsutil/lines.ts";
import { pyStrip } from "../pyjson/python.ts";
import { parse } from "../pyjson/parse.ts";
import { BYTE_PATH_MIN, loadsLine, RAW_STRING_MIN } from "../pyjson/row.ts";
import type { PyObject } from "../pyjson/types.ts";
import { RefusalError } from "../errors/index.ts";
import { pythonUtf8Error } from "./utf8.ts";

/**
 * The strict line scan a receipt is built from (spec §1.3): universal
 * newlines, 1-based physical line numbers, blank lines skipped; a line that
 * is not a JSON object refuses the whole build (a receipt is never signed
 * over a partial file).
 */
export function* strictObjects(path: string, refuse: (line: number, what: string) => RefusalError, options: LineReadOptions = {}): Generator<{ line: number; row: PyObject }> {
  for (const pl of physicalLines(path, options)) {
    const row = strictObject(pl.bytes, pl.index + 1, refuse);
    if (row !== null) yield { line: pl.index + 1, row };
  }
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * One line of the strict scan: its object, or null for a blank line. With
 * `rawValues` (a journal's rows, which every reader of values takes so), a
 * long line is read with its large values kept as bytes (pyjson/row.ts
 * loadsLine: the same verdict and error text as the tree parser), so a
 * huge row is never one string or a tree; the value is the caller's until
 * it asks for the next line. One that begins with a byte order mark keeps
 * the tree parser's reading (the decoder drops the mark) up to
 * MAX_ROW_BYTES, the limit the scan had.
 */
export function strictObject(bytes: Uint8Array, line: number, refuse: (line: number, what: string) => RefusalError, rawValues = false): PyObject | null {
  if (rawValues && bytes.length >= BYTE_PATH_MIN && (bytes.length > MAX_ROW_BYTES || !startsWithBom(bytes))) {
    const v = loadsLine(bytes, true, RAW_STRING_MIN);
    if (v.kind === "blank") return null;
    if (v.kind === "undecodable") throw refuse(line, `is not valid JSON (${pythonUtf8Error(bytes) ?? "invalid UTF-8"})`);
    if (v.kind === "error") throw refuse(line, `is not valid JSON (${v.message})`);
    if (!(v.value instanceof Map)) throw refuse(line, "is not a JSON object");
    return v.value;
  }
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw refuse(line, `is not valid JSON (${pythonUtf8Error(bytes) ?? "invalid UTF-8"})`);
  }
  if (pyStrip(text) === "") return null;
  let v;
  try {
    v = parse(text);
  } catch (err) {
    throw refuse(line, `is not valid JSON (${(err as Error).message})`);
  }
  if (!(v instanceof Map)) throw refuse(line, "is not a JSON object");
  return v;
}

function startsWithBom(b: Uint8Array): boolean {
  return b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf;
}
