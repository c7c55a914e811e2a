import { copyTo } from "./bytes.ts";
import { CanonicalWriter } from "./canonical.ts";
import { indexRow, NOT_DEFAULT_SPACING, RowIndex, Spell } from "./row-index.ts";

/**
 * A row spelled otherwise than Python's writer spells it, re-spaced as the
 * writer would: `json.dumps`' default separators `", "` and `": "`, no
 * other whitespace between tokens, and its strings' raw UTF-8 written as
 * ensure_ascii writes it (`\uXXXX`, lowercase; a pair of them past
 * U+FFFF). Such rows come from tools that rewrite a journal: `jq -c`
 * (compact, raw UTF-8), `json.dumps(separators=(",", ":"))`, an indenting
 * pretty-printer joined back to one line.
 *
 * The line is read by the codec's index (one scan, the grammar json.loads
 * reads) and written from it (CanonicalWriter.spaced): keys in their order,
 * every number, literal and escape as written. So the re-spaced row holds
 * the line's values, and the fast paths (which take the writer's spelling
 * only) take it as they take a row Python wrote. A line the index refuses,
 * or spelled as Python never spells (an escaped printable character, `\/`,
 * a raw DEL, a number that is not its repr: the kernels decline those rows
 * whatever their spacing), is left to the exact reader.
 */

/**
 * The longest a re-spaced line is, in times its length: a byte becomes at
 * most two (a separator and its space), a UTF-8 sequence of two or four
 * bytes at most six or twelve (one or two escapes).
 */
export const RESPACED_MAX = 3;

/** Spellings re-spacing writes otherwise: separators, other whitespace, raw UTF-8. */
const RESPACED = NOT_DEFAULT_SPACING | Spell.Utf8;

/** A minor collection after this many bytes of lines taken re-spaced (Respacer.taken). */
const TAKEN_GC_BYTES = 4 << 20;

/**
 * Re-spaces lines, one at a time: each is copied into its memory, indexed
 * there, and written after itself; the memory grows to the longest line.
 */
export class Respacer {
  private readonly ix = new RowIndex();
  private mem = new Uint8Array(0);
  private readonly cw = new CanonicalWriter(this.ix, this.mem, new DataView(this.mem.buffer));
  /** The last re-spaced line: mem[at, end). */
  private at = 0;
  private end = 0;
  /** Bytes of lines taken re-spaced since the last minor collection. */
  private takenBytes = 0;

  /**
   * Re-space src[s, e) (held until the next call): its length, or -1 when
   * the line is already in the writer's spelling, or is left as it is.
   */
  respace(src: Uint8Array, s: number, e: number): number {
    const n = e - s;
    const need = (1 + RESPACED_MAX) * n + 16;
    if (this.mem.length < need) {
      this.mem = new Uint8Array(Math.max(need, 8192));
      this.cw.mem = this.mem;
      this.cw.dv = new DataView(this.mem.buffer);
    }
    copyTo(src, s, e, this.mem, 0);
    const ix = this.ix;
    if (!indexRow(this.mem, 0, n, ix)) return -1;
    const tape = ix.tape;
    const w = tape[0]!;
    if ((w & Spell.NotPython) !== 0) return -1;
    // (the object spans the whole line: no whitespace around it)
    if ((w & RESPACED) === 0 && tape[1] === 0 && tape[2] === n) return -1;
    this.at = n;
    this.end = this.cw.spaced(0, n);
    return this.end - this.at;
  }

  /** The last re-spaced line (a view, valid until the next call). */
  text(): Uint8Array {
    return this.mem.subarray(this.at, this.end);
  }

  /** The last re-spaced line, copied to out[o]; returns the end. */
  copyTo(out: Uint8Array, o: number): number {
    return copyTo(this.mem, this.at, this.end, out, o);
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
