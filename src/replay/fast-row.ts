import { asciiText, fnv1a, QUOTE } from "../codec/bytes.ts";
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

/**
 * Names looked up among a row's member keys by the kernel readers
 * (kernel-row.ts notes each one's value span in its slot, the names'
 * order): a key is found by its length and second byte, then compared.
 * The display's table and the timeline page's (a superset) are values of
 * it; no two names of one table may share a length and second byte.
 */
export class FieldTable {
  readonly names: readonly string[];
  private readonly bytes: Uint8Array[];
  /** (length << 7 | second byte) -> slot + 1 */
  private readonly byShape = new Int8Array(32 << 7);
  /** name -> slot, a dictionary object (cheaper to probe with a literal key than a Map). */
  private readonly slots: Record<string, number>;

  constructor(names: readonly string[]) {
    if (names.length > 127) throw new Error("field table: too many names");
    this.names = names;
    this.bytes = names.map((f) => new TextEncoder().encode(f));
    this.slots = Object.create(null) as Record<string, number>;
    names.forEach((n, i) => (this.slots[n] = i));
    this.bytes.forEach((b, i) => {
      if (b.length < 2 || b.length >= 32) throw new Error(`field table: ${names[i]} is not 2-31 bytes`);
      const k = (b.length << 7) | b[1]!;
      if (this.byShape[k] !== 0) throw new Error(`field table collision: ${names[i]}`);
      this.byShape[k] = i + 1;
    });
  }

  /** The slot of `name` (-1: not in the table). */
  slot(name: string): number {
    return this.slots[name] ?? -1;
  }

  /** The member key b[ks, ke) with value b[vs, ve): when it is one of the table's names, its span is noted in that slot. */
  note(b: Uint8Array, ks: number, ke: number, vs: number, ve: number, fieldS: Int32Array, fieldE: Int32Array): void {
    const len = ke - ks;
    if (len < 2 || len >= 32) return;
    const slot = this.byShape[(len << 7) | (b[ks + 1]! & 0x7f)]! - 1;
    if (slot < 0) return;
    const f = this.bytes[slot]!;
    for (let i = 0; i < len; i++) if (b[ks + i] !== f[i]) return;
    fieldS[slot] = vs;
    fieldE[slot] = ve;
  }
}

/** The replay display's fields (run-view.ts, run-table.ts). */
export const DISPLAY_TABLE = new FieldTable(DISPLAY_FIELDS);

/**
 * The display's common rows make no values (fast-cells.ts), but the rows
 * it declines do, and the engine collects them late: a full collection
 * every DISPLAY_GC_CHUNKS chunks of journal holds the display's peak down,
 * and collecting more often costs more time than it saves memory (a full
 * collection marks the whole live heap). It paces the table pass without
 * a spool (run-table.ts).
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

/** The fields of `names` (slot order) at spans of b as a row (absent ones and `skip` left out), refilled into `row`. */
export function displayFieldsOf(names: readonly string[], b: Uint8Array, fieldS: Int32Array, fieldE: Int32Array, skip: number, row: PyObject): PyObject {
  row.clear();
  for (let i = 0; i < names.length; i++) {
    const s = fieldS[i]!;
    if (s >= 0 && i !== skip) row.set(names[i]!, valueAt(b, s, fieldE[i]!));
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
/** Each slot's bytes at slot * CACHE_MAX_LEN, and their length (-1: empty): one arena, not an array per string made (ids seen once miss, and each would be a buffer of its own until collected). */
const cacheBytes = new Uint8Array(CACHE_SLOTS * CACHE_MAX_LEN);
const cacheLength = new Int32Array(CACHE_SLOTS).fill(-1);

function internedText(b: Uint8Array, s: number, e: number): string {
  const n = e - s;
  if (n > CACHE_MAX_LEN) return asciiText(b, s, e);
  const slot = fnv1a(b, s, e) & (CACHE_SLOTS - 1);
  const at = slot * CACHE_MAX_LEN;
  if (cacheLength[slot] === n) {
    let i = 0;
    while (i < n && cacheBytes[at + i] === b[s + i]) i++;
    if (i === n) return cacheText[slot]!;
  }
  const t = asciiText(b, s, e);
  for (let i = 0; i < n; i++) cacheBytes[at + i] = b[s + i]!;
  cacheLength[slot] = n;
  cacheText[slot] = t;
  return t;
}

/** A validated canonical value b[s, e) (ASCII) as the exact parser would give it. */
export function valueAt(b: Uint8Array, s: number, e: number): PyValue {
  const c = b[s]!;
  if (c === QUOTE) {
    for (let i = s + 1; i < e - 1; i++) if (b[i] === 0x5c) return JSON.parse(asciiText(b, s, e)) as string;
    return internedText(b, s + 1, e - 1);
  }
  if (c === 0x74) return true;
  if (c === 0x66) return false;
  if (c === 0x6e) return null;
  if (c === 0x4e) return new PyNum("NaN", true);
  if (c === 0x49) return new PyNum("Infinity", true);
  if (c === 0x2d && b[s + 1] === 0x49) return new PyNum("-Infinity", true);
  // numbers rarely recur (timestamps): decoded, not cached
  const text = asciiText(b, s, e);
  if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return new PyNum(text, FLOAT_CHARS.test(text));
  return parse(text);
}
