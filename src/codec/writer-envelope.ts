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
