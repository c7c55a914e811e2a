import { physicalLines } from "../fsutil/lines.ts";
import { pyStrip } from "../pyjson/python.ts";
import { parse } from "../pyjson/parse.ts";
import type { PyObject } from "../pyjson/types.ts";
import { RefusalError } from "../errors/index.ts";
import { pythonUtf8Error } from "./utf8.ts";

/**
 * The strict line scan a receipt is built from (spec §1.3): universal
 * newlines, 1-based physical line numbers, blank lines skipped; a line that
 * is not a JSON object refuses the whole build (a receipt is never signed
 * over a partial file).
 */
export function* strictObjects(path: string, refuse: (line: number, what: string) => RefusalError): Generator<{ line: number; row: PyObject }> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  for (const pl of physicalLines(path)) {
    const n = pl.index + 1;
    let text: string;
    try {
      text = decoder.decode(pl.bytes);
    } catch {
      throw refuse(n, `is not valid JSON (${pythonUtf8Error(pl.bytes) ?? "invalid UTF-8"})`);
    }
    if (pyStrip(text) === "") continue;
    let v;
    try {
      v = parse(text);
    } catch (err) {
      throw refuse(n, `is not valid JSON (${(err as Error).message})`);
    }
    if (!(v instanceof Map)) throw refuse(n, "is not a JSON object");
    yield { line: n, row: v };
  }
}
