import { writeUnicodeEscape } from "../pyjson/encode-bytes.ts";
import { COLON, COMMA, LBRACE, LBRACKET, QUOTE, RBRACE, RBRACKET, SPACE } from "./bytes.ts";
import { jsonStringEnd, scannedString, skipAnyWs, Spell } from "./row-index.ts";

/**
 * A row spaced otherwise than Python's writer spaces it, re-spaced as the
 * writer would: `json.dumps`' default separators `", "` and `": "`, no
 * other whitespace between tokens, and its strings' raw UTF-8 written as
 * ensure_ascii writes it (`\uXXXX`, lowercase; a pair of them past
 * U+FFFF). Every other byte stays as it is, so the re-spaced row holds the
 * same values, keys in the same order, and the fast paths (which take the
 * writer's spelling only) take it as they take a row Python wrote. Such
 * rows come from tools that rewrite a journal: `jq -c` (compact, raw
 * UTF-8), `json.dumps(separators=(",", ":"))`, an indenting pretty-printer
 * joined back to one line.
 *
 * Only JSON's whitespace between tokens is dropped (space, tab, line feed,
 * carriage return: what json.loads skips), and only next to a structural
 * byte or a quote: whitespace between two bytes of scalars (`1 2`, `tr ue`)
 * would join two tokens into one, so such a line is left to the exact
 * reader. A line whose strings json.loads refuses, or that Python never
 * spells so otherwise (an escape of a printable character, `\/`, a raw
 * DEL: the kernels decline those rows whatever their spacing), is left too.
 */

/**
 * Bytes that end or begin no scalar: whitespace beside one of them joins no
 * two tokens. (A space in the output is only ever a separator's.)
 */
const STRUCTURAL = new Uint8Array(256);
for (const c of [LBRACE, RBRACE, LBRACKET, RBRACKET, COMMA, COLON, QUOTE, SPACE]) STRUCTURAL[c] = 1;

/**
 * Re-space src[s, e) into `out` from 0 (room for RESPACED_MAX times the
 * line). Returns the re-spaced length, or -1 when the line is already in
 * the writer's spelling, or is left as it is (above).
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
      if (end < 0 || (scannedString.flags & Spell.NotPython) !== 0) return -1;
      if ((scannedString.flags & Spell.Utf8) !== 0) {
        o = escapeUtf8(src, p, end, out, o);
        p = end;
        changed = true;
      } else if (end - p > 256) {
        // a short string byte by byte: a view a string would be most of the garbage of a journal of such rows
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

/**
 * The longest a re-spaced line is, in times its length: a byte becomes at
 * most two (a separator and its space), a UTF-8 sequence of two or four
 * bytes at most six or twelve (one or two escapes).
 */
export const RESPACED_MAX = 3;

/**
 * The string token src[p, end) (valid, its UTF-8 validated) at out[o], its
 * UTF-8 sequences as ensure_ascii escapes them; returns the end.
 */
function escapeUtf8(src: Uint8Array, p: number, end: number, out: Uint8Array, o: number): number {
  while (p < end) {
    const c = src[p]!;
    if (c < 0x80) {
      out[o++] = c;
      p++;
      continue;
    }
    let cp: number;
    if (c < 0xe0) {
      cp = ((c & 0x1f) << 6) | (src[p + 1]! & 0x3f);
      p += 2;
    } else if (c < 0xf0) {
      cp = ((c & 0x0f) << 12) | ((src[p + 1]! & 0x3f) << 6) | (src[p + 2]! & 0x3f);
      p += 3;
    } else {
      cp = ((c & 0x07) << 18) | ((src[p + 1]! & 0x3f) << 12) | ((src[p + 2]! & 0x3f) << 6) | (src[p + 3]! & 0x3f);
      p += 4;
    }
    if (cp < 0x10000) o = writeUnicodeEscape(out, o, cp);
    else {
      o = writeUnicodeEscape(out, o, 0xd800 + ((cp - 0x10000) >> 10));
      o = writeUnicodeEscape(out, o, 0xdc00 + ((cp - 0x10000) & 0x3ff));
    }
  }
  return o;
}

/** A minor collection after this many bytes of lines taken re-spaced (Respacer.taken). */
const TAKEN_GC_BYTES = 4 << 20;

/** respaceLine with a buffer of its own, grown to the longest line it re-spaced. */
export class Respacer {
  private out = new Uint8Array(0);
  /** Bytes of lines taken re-spaced since the last minor collection. */
  private takenBytes = 0;

  /** The re-spaced line `line` (valid until the next call), or null (respaceLine's -1). */
  respace(line: Uint8Array): Uint8Array | null {
    const need = RESPACED_MAX * line.length;
    if (this.out.length < need) this.out = new Uint8Array(Math.max(need, 4096));
    const n = respaceLine(line, 0, line.length, this.out);
    return n < 0 ? null : this.out.subarray(0, n);
  }

  /**
   * A line of `n` bytes was taken re-spaced. A reader taking such rows one
   * at a time leaves a few views a row behind (the line's, its re-spaced
   * text's, a consumer's) that the engine collects late: a minor collection
   * now and then holds the peak, at no cost measured.
   */
  taken(n: number): void {
    this.takenBytes += n;
    if (this.takenBytes < TAKEN_GC_BYTES) return;
    this.takenBytes = 0;
    Bun.gc(false);
  }
}
