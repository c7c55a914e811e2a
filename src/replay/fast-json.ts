import { ByteSink } from "../pyjson/encode-bytes.ts";
import { indexObjectAtWasm, type KeyTable, type OutBytes, renderJsonOf, RowIndex, Spell } from "../codec/row-index.ts";

/**
 * A journal row's JSON text re-indented at byte level: the bytes
 * `renderJson(row, 2)` would print for the parsed row (indent 2, `","` /
 * `": "`, raw UTF-8 with lone surrogates escaped, numbers as recorded, keys
 * in their order), every line indented by `pad` more spaces, written
 * without building a value.
 *
 * A consumer of the codec's row index: the row is scanned once into the
 * index by the WebAssembly scanner, which renders it from its own tape
 * (src/codec/row-index.wat `render`). It DECLINES (returns false, its
 * output unchanged) what it cannot reproduce with certainty: a row the
 * index declines (not JSON as json.loads reads it, too deep, an int Python
 * does not convert, invalid UTF-8), an object with a duplicate key (or
 * keys out of order with an escaped one beside raw UTF-8 or a spelling
 * Python does not write, or keys out of order and more than the repeat
 * check takes), leading or trailing bytes around the object, a
 * CR in the line (universal newlines split it),
 * a huge row too dense for the module's tape budget. The caller then takes
 * the exact path for that row, which also decides whether it is a row at
 * all.
 */

/** The output is the ByteSink: `buf[0, len)`. */
export class RowTranscoder extends ByteSink {
  private readonly ix = new RowIndex();

  constructor() {
    super(1 << 21);
  }

  /** Append bytes (output of the exact path). */
  append(bytes: Uint8Array): void {
    this.bytes(bytes);
  }

  /** Forget the output (it was written). */
  reset(): void {
    this.len = 0;
    // A huge row's output is not kept around for the next ones.
    if (this.buf.length > 1 << 24) this.buf = new Uint8Array(1 << 21);
  }

  /**
   * Append the row `b[s, e)` re-indented, its first line indented by `pad`
   * spaces too. False (output unchanged) when it must take the exact path.
   */
  row(b: Uint8Array, s: number, e: number, pad: number): boolean {
    return this.take(b, s, e, pad, false);
  }

  /**
   * Append the row `b[s, e)` on one line as `renderJson(row, null)` prints
   * it (`", "` and `": "`, nothing else between tokens). False (output
   * unchanged) when it must take the exact path.
   */
  rowInline(b: Uint8Array, s: number, e: number): boolean {
    return this.take(b, s, e, 0, true);
  }

  /**
   * Index the row `b[s, e)` for renderInlineTo, nothing rendered yet, its
   * top-level names of `keys` located for valueSpan. False when it must take
   * the exact path; true may still be followed by a render that declines (a
   * repeated key, say).
   */
  index(b: Uint8Array, s: number, e: number, keys?: KeyTable): boolean {
    const ix = this.ix;
    if (indexObjectAtWasm(b, s, e, ix, keys, true) !== e || ((ix.rowFlags & Spell.OddSpace) !== 0 && holdsCr(b, s, e))) return false;
    // a name of `keys` twice: which value counts is the exact reader's to say
    return !ix.repeatedName;
  }

  /**
   * Append the row `index` took to `out` as rowInline renders it (with no
   * copy through this transcoder's own output). False, `out` unchanged:
   * the render declines and the row takes the exact path.
   */
  renderInlineTo(out: OutBytes): boolean {
    return renderJsonOf(this.ix, 0, true, out);
  }

  /**
   * The span [start, end) in the row's bytes of the top-level value of
   * `keys`' name `id`, after an index that was given `keys` took the row
   * (start -1: no such key), with its spelling flags (Spell).
   */
  valueSpan(id: number, out: { start: number; end: number; flags: number }): void {
    const t = this.ix.valueOf(id);
    out.start = t < 0 ? -1 : this.ix.start(t);
    out.end = t < 0 ? -1 : this.ix.end(t);
    out.flags = t < 0 ? 0 : this.ix.flags(t);
  }

  private take(b: Uint8Array, s: number, e: number, pad: number, inline: boolean): boolean {
    // an object that starts at s and ends at e, nothing around it (index), then rendered from its tape
    return this.index(b, s, e) && renderJsonOf(this.ix, pad, inline, this);
  }
}

/** A CR between tokens is JSON whitespace to the index, but universal newlines read such a line as two. */
function holdsCr(b: Uint8Array, s: number, e: number): boolean {
  for (let i = s; i < e; i++) if (b[i] === 0x0d) return true;
  return false;
}
