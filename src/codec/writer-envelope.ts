import { lowerHex4 } from "../hex.ts";
import { BACKSLASH, CR } from "./bytes.ts";

/**
 * The envelope of a run-journal row spelled as Python's writer spells it,
 * as every row the verify kernel takes is:
 *   {"ts": N, "elapsed_s": N, "index": N, "event": "T", "prev_hash": "H", "payload_hash": "H", "event_hash": "H"
 * In such a row the first `, "event": "` opens the type token, the first
 * `", "prev_hash": "` after it closes it (a quote inside the type is
 * escaped, so it cannot start that text), and the stored hashes stand at
 * fixed distances after it. For a row the kernel took only: any other row
 * may hold those texts elsewhere.
 */
const EVENT_KEY = Buffer.from(', "event": "');
const PREV_KEY = Buffer.from('", "prev_hash": "');
/** From the end of the type token to the stored event_hash's token (its opening quote). */
export const HASH_AFTER_TYPE = '", "prev_hash": "'.length - 1 + 64 + '", "payload_hash": "'.length + 64 + '", "event_hash": "'.length - 1;

/** Where a kernel-taken row's type token is: `start` (its opening quote) and `end` (after its closing one). */
export interface TypeToken {
  start: number;
  end: number;
}

/**
 * The type token of the kernel-taken row that starts at or after `p` in
 * `text` (found by two searches), into `at`; false when `text` holds none
 * from `p` on.
 */
export function writerTypeToken(text: Buffer, p: number, at: TypeToken): boolean {
  const k = text.indexOf(EVENT_KEY, p);
  if (k < 0) return false;
  const start = k + EVENT_KEY.length - 1;
  const close = text.indexOf(PREV_KEY, start + 1);
  if (close < 0) return false;
  at.start = start;
  at.end = close + 1;
  return true;
}

const BACKSLASH_U = Buffer.from("\\u");

/**
 * The next place of a pattern at or after a row's start in one buffer of
 * rows: one native search per stretch of rows without it, not one per row.
 */
class NextPlace {
  private at = -1;
  private from = Infinity;
  constructor(private readonly pattern: Buffer | number) {}

  /** The buffer holds other bytes now (a new read): the place found is stale. */
  reset(): void {
    this.from = Infinity;
  }

  /** The first place at or after s (-1: none) in `bytes`. */
  after(bytes: Buffer, s: number): number {
    if (s < this.from || (this.at >= 0 && this.at < s)) {
      this.from = s;
      this.at = bytes.indexOf(this.pattern, s);
    }
    return this.at;
  }

  /** The place after the one `after` gave. */
  next(bytes: Buffer): number {
    this.at = bytes.indexOf(this.pattern, this.at + (typeof this.pattern === "number" ? 1 : this.pattern.length));
    return this.at;
  }
}

/**
 * Whether a row the verify kernel took is `renderJson(row, null)` byte for
 * byte: the kernel takes only rows spelled as Python's writer spells them
 * (its separators, its escapes, its numbers, each key once), which is
 * renderJson's inline form but for the characters Python escapes and
 * renderJson writes as themselves (DEL, U+0080 on). Rows are asked in
 * order within a buffer; `reset` when the buffer is read into again.
 */
export class InlineRows {
  private readonly cr = new NextPlace(CR);
  private readonly escape = new NextPlace(BACKSLASH_U);

  reset(): void {
    this.cr.reset();
    this.escape.reset();
  }

  /**
   * The kernel-taken row `bytes[s, e)` (its line break not included) is its
   * own inline JSON: it holds no CR (a lone CR ends a line for the verify,
   * as for Python's universal newlines, so a line holding one is two rows),
   * and its only `\u` escapes are a control character's (`\u0000` to
   * `\u001f`, which renderJson writes alike).
   */
  isInline(bytes: Buffer, s: number, e: number): boolean {
    const cr = this.cr.after(bytes, s);
    if (cr >= 0 && cr < e) return false;
    for (let at = this.escape.after(bytes, s); at >= 0 && at < e; at = this.escape.next(bytes)) {
      // (-1: not an escape, the string's backslash before a u)
      if (escapedAt(bytes, s, at) >= 0x20) return false;
    }
    return true;
  }
}

/**
 * The code unit the `\u` at b[at] escapes (four lowercase hex digits, as
 * Python writes them); -1 when that backslash is itself escaped (the string
 * holds a backslash and a `u`), 0x10000 for any other spelling.
 */
function escapedAt(b: Uint8Array, s: number, at: number): number {
  let n = 0;
  for (let j = at - 1; j >= s && b[j] === BACKSLASH; j--) n++;
  if (n % 2 === 1) return -1;
  const v = lowerHex4(b, at + 2);
  return v < 0 ? 0x10000 : v;
}
