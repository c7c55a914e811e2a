import { LBRACE, RBRACE } from "../codec/bytes.ts";
import { contentEnd } from "../fsutil/lines.ts";
import { indexRow, NOT_PLAIN_TEXT, RowIndex, Spell, Tok } from "../codec/row-index.ts";
import type { PyObject } from "../pyjson/types.ts";
import { STEP_ROW_KEYS, StepKey } from "./row-keys.ts";
import { classifyLine } from "./reader.ts";

/**
 * A step journal's lines read as the tolerant reader reads them (an entry
 * is a parsed object with `step_hash`), each entry turned into a value of
 * the caller's: from the codec's index of the line when `fromIndex` can
 * answer, else from the exact parse (`fromRow`), which decides every line
 * the index cannot: a line the codec declines, a row whose escaped or
 * non-ASCII keys stand beside a spelling Python does not write (its named
 * keys are matched by their bytes, and only such an escape, `\u0061`,
 * spells an ASCII name otherwise), or whatever `fromIndex` returns null for.
 */
export class IndexedEntries<T> {
  private readonly ix = new RowIndex();
  /** Lines are views of a read buffer: the codec is handed that buffer whole (it keeps per-buffer state). */
  private whole: Uint8Array = new Uint8Array(0);

  /**
   * `transient`: `fromRow` is done with the row before the line's buffer is
   * reused (a huge row's large values may then stay views of it, uncopied).
   */
  constructor(
    private readonly fromIndex: (ix: RowIndex) => T | null,
    private readonly fromRow: (row: PyObject) => T,
    private readonly transient = false,
  ) {}

  /**
   * A line splitter's fast probe (universal dialect): the value of the entry
   * at buf[start, end) passed to `take`, without a view made of the line
   * (a row without `step_hash` is taken as no entry). Declines (false)
   * whatever the index cannot answer alone, and a line
   * with whitespace outside the row or other than `, `/`: ` inside it,
   * where a `\r` would split it into several lines; the splitter then hands
   * the line to `line`. A `\r` right before the line feed is part of the
   * break (CR LF: Python's text mode on Windows writes it), not of the row.
   */
  probe(take: (v: T) => void): (buf: Uint8Array, start: number, end: number) => boolean {
    return (buf, start, end) => {
      end = contentEnd(buf, start, end);
      if (buf[start] !== LBRACE || buf[end - 1] !== RBRACE) return false;
      const v = this.indexed(buf, start, end, Spell.OddSpace);
      if (v === null) return false;
      if (v !== undefined) take(v);
      return true;
    };
  }

  /** The entry's value, or undefined when the line is not an entry (null: a line over the reader's cap). */
  line(line: Uint8Array | null): T | undefined {
    if (line !== null && line.length > 0) {
      if (this.whole.buffer !== line.buffer) this.whole = new Uint8Array(line.buffer);
      const v = this.indexed(this.whole, line.byteOffset, line.byteOffset + line.length, 0);
      if (v !== null) return v;
    }
    const k = classifyLine(line, this.transient);
    return k.kind === "entry" ? this.fromRow(k.row) : undefined;
  }

  /**
   * What the index of the row b[s, e) answers alone: the entry's value,
   * undefined for a row without `step_hash` (no entry), or null where the
   * exact path must decide (a line the codec declines, a row spelled with
   * any of `declined` or with keys that may spell a name, or one fromIndex
   * returns null for).
   */
  private indexed(b: Uint8Array, s: number, e: number, declined: number): T | null | undefined {
    const ix = this.ix;
    if (!indexRow(b, s, e, ix, STEP_ROW_KEYS)) return null;
    const f = ix.rowFlags;
    if ((f & declined) !== 0 || ((f & Spell.KeyNotPlain) !== 0 && (f & Spell.NotPython) !== 0)) return null;
    if (ix.valueOf(StepKey.StepHash) < 0) return undefined;
    return this.fromIndex(ix);
  }
}

/** Where the content of string token t starts when it is plain (its bytes are its text: ASCII, no escape), else -1. */
export function plainStart(ix: RowIndex, t: number): number {
  return ix.kind(t) === Tok.String && (ix.flags(t) & NOT_PLAIN_TEXT) === 0 ? ix.start(t) + 1 : -1;
}
