import { dumps } from "../pyjson/encode.ts";
import type { PyLike } from "../pyjson/types.ts";

/**
 * JSON for machine output on stdout: indent 2, raw UTF-8 (lone surrogates
 * escaped), insertion order, parsed numbers exactly as recorded.
 */
export function renderJson(value: unknown, indent: number | null = 2): string {
  return dumps(value as PyLike, { indent, ensureAscii: false, rawNumbers: true, separators: indent === null ? [", ", ": "] : [",", ": "] });
}
