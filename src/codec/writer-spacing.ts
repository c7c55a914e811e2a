import { COLON, COMMA, LBRACE, LBRACKET, QUOTE, RBRACE, RBRACKET, SPACE } from "./bytes.ts";
import { jsonStringEnd, scannedString, skipAnyWs, Spell } from "./row-index.ts";

/**
 * A row spaced otherwise than Python's writer spaces it, re-spaced as the
 * writer would: `json.dumps`' default separators `", "` and `": "`, no
 * other whitespace between tokens. Every other byte stays as it is, so the
 * re-spaced row holds the same values, keys in the same order, in the same
 * spelling, and the fast paths (which take the writer's spelling only)
 * take it as they take a row Python wrote. Such rows come from tools that
 * rewrite a journal: `jq -c`, `json.dumps(separators=(",", ":"))`, an
 * indenting pretty-printer joined back to one line.
 *
 * Only JSON's whitespace between tokens is dropped (space, tab, line feed,
 * carriage return: what json.loads skips), and only next to a structural
 * byte or a quote: whitespace between two bytes of scalars (`1 2`, `tr ue`)
 * would join two tokens into one, so such a line is left to the exact
 * reader. A line whose strings json.loads refuses, or that are not spelled
 * as Python's ensure_ascii writer spells them (raw UTF-8, foreign escapes:
 * the kernels decline those rows whatever their spacing), is left too.
 */

/**
 * Bytes that end or begin no scalar: whitespace beside one of them joins no
 * two tokens. (A space in the output is only ever a separator's.)
 */
const STRUCTURAL = new Uint8Array(256);
for (const c of [LBRACE, RBRACE, LBRACKET, RBRACKET, COMMA, COLON, QUOTE, SPACE]) STRUCTURAL[c] = 1;

/** String spellings no fast path takes: re-spacing such a row gains nothing. */
const FOREIGN = Spell.Utf8 | Spell.NotPython;

/**
 * Re-space src[s, e) into `out` from 0 (room for 2 * (e - s) bytes: each
 * byte becomes at most two). Returns the re-spaced length, or -1 when the
 * line is already in the writer's spacing, or is left as it is (above).
 */
export function respaceLine(src: Uint8Array, s: number, e: number, out: Uint8Array): number {
  let o = 0;
  let changed = false;
  /** Whitespace was dropped before the next token (or a separator's space is still to be matched). */
  let gap = false;
  let p = skipAnyWs(src, s, e);
  if (p > s) changed = true;
  while (p < e) {
    const c = src[p]!;
    if (c === QUOTE) {
      const end = jsonStringEnd(src, null, p, e);
      if (end < 0 || (scannedString.flags & FOREIGN) !== 0) return -1;
      // a short string byte by byte: a view a string would be most of the garbage of a journal of such rows
      if (end - p > 256) {
        out.set(src.subarray(p, end), o);
        o += end - p;
        p = end;
      } else while (p < end) out[o++] = src[p++]!;
    } else if (c === SPACE || c === 0x09 || c === 0x0a || c === 0x0d) {
      const q = skipAnyWs(src, p, e);
      // one space after a separator is the writer's own (the space written after it)
      if (!(q === p + 1 && c === SPACE && o > 0 && out[o - 1] === SPACE)) changed = true;
      gap = true;
      p = q;
      continue;
    } else {
      if (gap && o > 0 && STRUCTURAL[out[o - 1]!] === 0 && STRUCTURAL[c] === 0) return -1;
      out[o++] = c;
      p++;
      if (c === COMMA || c === COLON) {
        out[o++] = SPACE;
        if (src[p] !== SPACE) changed = true;
      }
    }
    gap = false;
  }
  return changed && o > 0 ? o : -1;
}

/** respaceLine with a buffer of its own, grown to the longest line it re-spaced. */
export class Respacer {
  private out = new Uint8Array(0);

  /** The re-spaced line (valid until the next call), or null (respaceLine's -1). */
  respace(src: Uint8Array, s: number, e: number): Uint8Array | null {
    if (this.out.length < 2 * (e - s)) this.out = new Uint8Array(Math.max(2 * (e - s), 4096));
    const n = respaceLine(src, s, e, this.out);
    return n < 0 ? null : this.out.subarray(0, n);
  }
}
