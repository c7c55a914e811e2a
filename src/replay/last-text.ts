import { BACKSLASH, QUOTE } from "../codec/bytes.ts";
import { pyStr } from "../pyjson/python.ts";
import type { PyValue } from "../pyjson/types.ts";

const latin1 = new TextDecoder("latin1");

/**
 * The last row's string value of one field (the chain's head: its
 * event_hash), made a string only when asked: decoding every row's would
 * cost a string a row. A row still in the read buffer leaves only where
 * its token is (`keepToken`), copied by `settle` before the buffer is read
 * into again: most rows are not the last, and copying each row's 64 bytes
 * cost a few percent of a pass.
 */
export class LastText {
  /** Room for a value's plain bytes. */
  private readonly bytes = new Uint8Array(128);
  /** Bytes kept (-1: `text` holds the value). */
  private len = -1;
  private text = "";
  /** The kept value's string token, not yet copied: pending[pendS, pendE) (null: none). */
  private pending: Uint8Array | null = null;
  private pendS = 0;
  private pendE = 0;

  /**
   * The value is the string token b[s, e) (quotes included), left
   * untouched in `b` until `settle`. False (nothing kept) when it is not a
   * string token that fits `bytes`: the caller keeps the value another way.
   */
  keepToken(b: Uint8Array, s: number, e: number): boolean {
    this.pending = null;
    if (b[s] !== QUOTE || e - s - 2 > this.bytes.length) return false;
    this.pending = b;
    this.pendS = s;
    this.pendE = e;
    return true;
  }

  /**
   * keepToken of the token b[s, e) (s -1: none), copied at once unless
   * `inPlace` (its bytes lie in the read buffer, untouched until the
   * caller's `settle`; a line the reader assembled, or a copy kernel's
   * memory, is the next long line's). False as keepToken's.
   */
  keepSpan(b: Uint8Array, s: number, e: number, inPlace: boolean): boolean {
    if (s < 0 || !this.keepToken(b, s, e)) return false;
    if (!inPlace) this.settle();
    return true;
  }

  /** The value as a row holds it: `pyStr(v, "")`. */
  keepValue(v: PyValue | undefined): void {
    this.pending = null;
    this.len = -1;
    this.text = pyStr(v, "");
  }

  /** Copy a pending value out of the read buffer (before the reader reads into it again). */
  settle(): void {
    const b = this.pending;
    if (b === null) return;
    this.pending = null;
    const s = this.pendS + 1;
    const n = this.pendE - 1 - s;
    for (let i = 0; i < n; i++) {
      const c = b[s + i]!;
      if (c === BACKSLASH) {
        // as the row's value reads: the token decoded
        this.len = -1;
        this.text = JSON.parse(latin1.decode(b.subarray(this.pendS, this.pendE))) as string;
        return;
      }
      this.bytes[i] = c;
    }
    this.len = n;
  }

  value(): string {
    this.settle();
    return this.len < 0 ? this.text : latin1.decode(this.bytes.subarray(0, this.len));
  }
}
