import { QUOTE } from "../codec/bytes.ts";
import { parse } from "../pyjson/parse.ts";
import { PyNum, type PyObject, type PyValue } from "../pyjson/types.ts";

/**
 * What the replay display reads of a row its kernel took
 * (kernel-row.ts): the display fields' value spans (LoadedRow), named by
 * slot, and made py-json values only where a consumer needs them
 * (valueAt, displayFieldsOf; short strings found again by their bytes).
 */

/** The fields the replay table reads, in slot order (EVENT_HASH_SLOT: the scan's last one). */
export const DISPLAY_FIELDS = [
  "event",
  "ts",
  "elapsed_s",
  "agent_id",
  "task_id",
  "task_ids",
  "model",
  "role",
  "cost_usd",
  "run_id",
  "max_agents",
  "ticks",
  "fingerprint",
  "failed_signals",
  "tick",
  "reason",
  "failure_class",
  "cost_known",
  "adapter",
  "steps_done",
  "event_hash",
] as const;

export const EVENT_HASH_SLOT = DISPLAY_FIELDS.indexOf("event_hash");

const FIELD_BYTES = DISPLAY_FIELDS.map((f) => new TextEncoder().encode(f));
/** (length << 7 | second byte) -> slot + 1 (no two display fields share a length and second byte: run_id and reason share the first). */
const FIELD_BY_SHAPE = new Int8Array(32 << 7);
FIELD_BYTES.forEach((bytes, i) => {
  const k = (bytes.length << 7) | bytes[1]!;
  if (FIELD_BY_SHAPE[k] !== 0) throw new Error(`display field table collision: ${DISPLAY_FIELDS[i]}`);
  FIELD_BY_SHAPE[k] = i + 1;
});

const latin1 = new TextDecoder("latin1");

/**
 * The display's common rows make no values (fast-cells.ts), but the rows
 * it declines do, and the engine collects them late: collecting every
 * 16 MiB of journal keeps the prose display of the 221 MB bench journal at
 * ~57 MB peak (never: ~62 MB; every 4 MiB: ~55 MB at 1.5x the time, a full
 * collection costing tens of milliseconds). Measured before the scan
 * moved to the kernel and the table to the cell spool; it now paces the
 * table pass without a spool (run-table.ts).
 */
export const DISPLAY_GC_CHUNKS = 16;

/** Bytes of fingerprint text the display's kernel gathers before hashing them in one call. */
export const FINGERPRINT_BATCH = 1 << 20;
const FLOAT_CHARS = /[.eE]/;

/**
 * A row whose display fields' spans are known (the verify kernel's
 * fingerprint mode: kernel-row.ts): what the scan and the table read of it.
 */
export interface LoadedRow {
  /** The memory the spans are of. */
  readonly mem: Uint8Array;
  /** Value span of each display field (-1: absent; a nested value may be its canonical text elsewhere in `mem`). */
  readonly fieldS: Int32Array;
  readonly fieldE: Int32Array;
  /** The display fields as a row (absent ones and `skip` left out), valid until the next call. */
  displayFields(skip?: number): PyObject;
}

/** The read area: one chunk of the line reader. */
export const READ_AREA = 1 << 20;

/** The member key b[ks, ke) with value b[vs, ve): when it is a display field's, its span is noted. */
export function noteField(b: Uint8Array, ks: number, ke: number, vs: number, ve: number, fieldS: Int32Array, fieldE: Int32Array): void {
  const len = ke - ks;
  if (len < 2 || len >= 32) return;
  const slot = FIELD_BY_SHAPE[(len << 7) | (b[ks + 1]! & 0x7f)]! - 1;
  if (slot < 0) return;
  const f = FIELD_BYTES[slot]!;
  for (let i = 0; i < len; i++) if (b[ks + i] !== f[i]) return;
  fieldS[slot] = vs;
  fieldE[slot] = ve;
}

/** The display fields of spans of b as a row (absent ones and `skip` left out), refilled into `row`. */
export function displayFieldsOf(b: Uint8Array, fieldS: Int32Array, fieldE: Int32Array, skip: number, row: PyObject): PyObject {
  row.clear();
  for (let i = 0; i < DISPLAY_FIELDS.length; i++) {
    const s = fieldS[i]!;
    if (s >= 0 && i !== skip) row.set(DISPLAY_FIELDS[i]!, valueAt(b, s, fieldE[i]!));
  }
  return row;
}

/**
 * Short plain strings recur (event types, agent and task ids, models):
 * each is made once and found again by its bytes, instead of a view and a
 * decode per row.
 */
const CACHE_SLOTS = 4096;
const CACHE_MAX_LEN = 48;
const cacheText: (string | undefined)[] = new Array(CACHE_SLOTS);
const cacheBytes: (Uint8Array | undefined)[] = new Array(CACHE_SLOTS);

function asciiText(b: Uint8Array, s: number, e: number): string {
  const n = e - s;
  if (n > CACHE_MAX_LEN) return latin1.decode(b.subarray(s, e));
  let h = 0x811c9dc5;
  for (let i = s; i < e; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  const slot = (h >>> 0) & (CACHE_SLOTS - 1);
  const known = cacheBytes[slot];
  if (known !== undefined && known.length === n) {
    let i = 0;
    while (i < n && known[i] === b[s + i]) i++;
    if (i === n) return cacheText[slot]!;
  }
  const t = latin1.decode(b.subarray(s, e));
  cacheBytes[slot] = b.slice(s, e);
  cacheText[slot] = t;
  return t;
}

/** A validated canonical value b[s, e) (ASCII) as the exact parser would give it. */
export function valueAt(b: Uint8Array, s: number, e: number): PyValue {
  const c = b[s]!;
  if (c === QUOTE) {
    for (let i = s + 1; i < e - 1; i++) if (b[i] === 0x5c) return JSON.parse(latin1.decode(b.subarray(s, e))) as string;
    return asciiText(b, s + 1, e - 1);
  }
  if (c === 0x74) return true;
  if (c === 0x66) return false;
  if (c === 0x6e) return null;
  if (c === 0x4e) return new PyNum("NaN", true);
  if (c === 0x49) return new PyNum("Infinity", true);
  if (c === 0x2d && b[s + 1] === 0x49) return new PyNum("-Infinity", true);
  // numbers rarely recur (timestamps): decoded, not cached
  const text = latin1.decode(b.subarray(s, e));
  if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return new PyNum(text, FLOAT_CHARS.test(text));
  return parse(text);
}
