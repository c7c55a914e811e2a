import { dumps } from "../../src/pyjson/encode.ts";
import { parse } from "../../src/pyjson/parse.ts";
import type { PyValue } from "../../src/pyjson/types.ts";
import type { Rng } from "./rng.ts";

/**
 * Rows in another spacing than Python's writer's, as a tool that rewrites a
 * journal spells them: compact (`jq -c`: raw UTF-8 too), spaced out,
 * indented and joined back to one line. The fast paths take such rows re-spaced
 * (src/codec/writer-spacing.ts); the exact path reads them as they are.
 */
export const SPACINGS: readonly Spacing[] = [
  { separators: [",", ":"], indent: null, pad: "", ensureAscii: true },
  { separators: [",", ":"], indent: null, pad: "", ensureAscii: false },
  { separators: [" , ", " :\t"], indent: null, pad: " ", ensureAscii: true },
  { separators: [",", ": "], indent: 1, pad: "\t", ensureAscii: false },
];

export interface Spacing {
  separators: readonly [string, string];
  indent: number | null;
  /** Whitespace before and after the row. */
  pad: string;
  /** False: non-ASCII characters raw (UTF-8), as `jq -c` writes them. */
  ensureAscii: boolean;
}

/** `row` spelled by the exact writer in `spacing` (null: the writer's own), one line. */
export function spelledRow(row: PyValue, spacing: Spacing | null, rawNumbers: boolean): string {
  if (spacing === null) return dumps(row, { rawNumbers });
  const { separators, indent, ensureAscii } = spacing;
  return spacing.pad + dumps(row, { rawNumbers, separators, indent, ensureAscii }).replaceAll("\n", " ") + spacing.pad;
}

const strict = new TextDecoder("utf-8", { fatal: true });
const enc = new TextEncoder();

/** `input` with some of its lines that hold a JSON object re-spelled in one spacing (SPACINGS); other lines as they are. */
export function respaceLines(rng: Rng, input: Uint8Array): Uint8Array {
  const spacing = rng.pick(SPACINGS);
  const lines = Buffer.from(input).toString("latin1").split("\n");
  const out = lines.map((line) => {
    if (!rng.chance(0.7)) return line;
    let v: PyValue;
    try {
      v = parse(strict.decode(Buffer.from(line, "latin1"))) as PyValue;
    } catch {
      return line;
    }
    if (!(v instanceof Map)) return line;
    return Buffer.from(enc.encode(spelledRow(v, spacing, true))).toString("latin1");
  });
  return Buffer.from(out.join("\n"), "latin1");
}
