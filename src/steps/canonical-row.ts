import { LBRACE, RBRACE } from "../codec/bytes.ts";
import { indexRow, RowIndex, Spell, Tok } from "../codec/row-index.ts";
import { STEP_ROW_KEYS, StepKey } from "./row-keys.ts";

/**
 * A step row already in canonical spelling, read off the codec's index.
 * A row written by a canonical writer (Python's `json.dumps(sort_keys=True,
 * separators=(",", ":"))`, or ours) spells every value exactly as the
 * step-hash pre-image needs it, so the pre-image can be assembled from byte
 * spans of the line without building values. `scanRow` proves that claim
 * from the index's spelling flags: ASCII only, compact, keys strictly
 * ascending at every depth (hence no duplicates), every string escaped and
 * every number spelled as Python's writer spells it (a float in a hashed
 * field decided exactly). Any line it cannot prove goes to the general path
 * (parse + re-encode), so the two paths can never disagree.
 */

const KEY_COUNT = STEP_ROW_KEYS.size + 1;

/** Keys whose values the step hash covers: their numbers must be Python's repr, decided. */
const HASHED = new Uint8Array(KEY_COUNT);
for (const k of [StepKey.InputHash, StepKey.Model, StepKey.Prompt, StepKey.ToolCall, StepKey.ToolResult, StepKey.Effort, StepKey.PrevHash]) HASHED[k] = 1;

/**
 * Spellings a canonical row never has. A number not in Python's spelling
 * anywhere (`1.50`, `-0`) is refused too, although only the hashed fields'
 * numbers matter: Python's writer never writes one, so such a row is left to
 * the exact path rather than told apart.
 */
const NOT_CANONICAL = Spell.Utf8 | Spell.NotPython | Spell.Unsorted | Spell.Spaced | Spell.OddSpace;

/**
 * One reader's state: the spans of the last row it accepted. Each walker
 * (and each reader of rows) owns one, so no scan's result is shared through
 * module state.
 */
export class CanonicalRow {
  /** Value spans [start, end) per key of the last successful scan; -1 = absent. */
  readonly spanStart = new Int32Array(KEY_COUNT);
  readonly spanEnd = new Int32Array(KEY_COUNT);
  /** 1 when the key's value is a string without escapes (its text is the bytes inside the quotes). */
  readonly plainString = new Uint8Array(KEY_COUNT);
  /** The kind of the key's value token (codec Tok; valid where its span is). */
  readonly kind = new Uint8Array(KEY_COUNT);
  /** Offset of each key's opening quote (to find runs of adjacent keys). */
  readonly keyStart = new Int32Array(KEY_COUNT);
  /** Number of top-level keys of the last successful scan. */
  topKeyCount = 0;
  private readonly ix = new RowIndex();
  /**
   * The last view accepted by `scanRow`. Views handed out by the line
   * splitter are fresh objects whose bytes do not change while they are
   * being looked at, so a repeated scan of the same view can be skipped.
   */
  private lastAccepted: Uint8Array | null = null;

  /**
   * Scan one line. True when it is a canonical JSON object; the spans of the
   * keys the walkers need are then in `spanStart`/`spanEnd`.
   */
  scanRow(line: Uint8Array): boolean {
    // The same view scanned again right away (a probe, then its consumers): the spans are still valid.
    if (line === this.lastAccepted) return true;
    if (!this.scanRange(line, 0, line.length)) return false;
    this.lastAccepted = line;
    return true;
  }

  /** `scanRow` of the bytes [start, end) of `buf`, without a view per line; the spans are offsets into `buf`. */
  scanRange(buf: Uint8Array, start: number, end: number): boolean {
    this.lastAccepted = null;
    this.spanStart.fill(-1);
    this.spanEnd.fill(-1);
    this.plainString.fill(0);
    this.topKeyCount = 0;
    // no whitespace around the object: the codec would allow it, a canonical row has none
    if (end - start < 2 || buf[start] !== LBRACE || buf[end - 1] !== RBRACE) return false;
    const ix = this.ix;
    if (!indexRow(buf, start, end, ix, STEP_ROW_KEYS, true) || (ix.rowFlags & NOT_CANONICAL) !== 0) return false;
    for (let m = 0; m < ix.members; m++) {
      const key = ix.keyId[m]!;
      if (key === StepKey.Other) continue;
      const v = ix.memberValue(m);
      if (HASHED[key] === 1 && (ix.flags(v) & Spell.FloatUndecided) !== 0 && (ix.spelling(v) & Spell.NotPython) !== 0) return false;
      this.keyStart[key] = ix.start(v - 1);
      this.spanStart[key] = ix.start(v);
      this.spanEnd[key] = ix.end(v);
      this.kind[key] = ix.kind(v);
      this.plainString[key] = this.kind[key] === Tok.String && (ix.flags(v) & Spell.Escaped) === 0 ? 1 : 0;
    }
    this.topKeyCount = ix.members;
    return true;
  }
}
