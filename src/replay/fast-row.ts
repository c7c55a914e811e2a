import { CanonicalEmitter, envelopeKind, Key, scanPlainKey, skipWs } from "../journal/fast/emitter.ts";
import { COLON, COMMA, LBRACE, QUOTE, RBRACE } from "../codec/bytes.ts";
import { parse } from "../pyjson/parse.ts";
import { PyNum, type PyObject, type PyValue } from "../pyjson/types.ts";
import { FAST_LINE_MAX } from "./fast-lines.ts";
import { numberEnd } from "./fast-json.ts";

/**
 * One journal line in Python's writer spelling (json.dumps defaults:
 * ASCII-escaped, repr floats), read at byte level with the fast
 * verifier's canonical emitter (src/journal/fast/emitter.ts): every member
 * value is validated as it is re-emitted canonically (sorted keys,
 * compact), so an accepted line is a row exactly as `json.loads` reads it,
 * and the canonical forms the display needs come from slices of its bytes:
 *
 *  - the replay fingerprint's row text (the row without ts/elapsed_s);
 *  - the payload hash pre-image (`--from-step`'s recomputed chain);
 *  - the few fields the table shows, as py-json values.
 *
 * `load` DECLINES (false) anything else — other spellings, raw UTF-8,
 * duplicate keys, a `hash_profile`, an `event` that is not a string, deep
 * nesting — and the caller takes the exact path for that row. `ts` and
 * `elapsed_s` may be any valid JSON number (they are in neither pre-image).
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

/** The row area: the fingerprint batch (FINGERPRINT_BATCH) and room for one more row's text. */
export const FINGERPRINT_BATCH = 1 << 20;
const ROW_AREA = FINGERPRINT_BATCH + 4 * FAST_LINE_MAX;
const FLOAT_CHARS = /[.eE]/;

/**
 * A row whose display fields' spans are known (FastRowReader, or the
 * verify kernel's fingerprint mode: kernel-row.ts): what the scan and the
 * table read of it.
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

/** Bytes of a loaded row's display fields' values, all but event_hash. */
export function displayBytes(r: LoadedRow): number {
  let n = 0;
  for (let i = 0; i < DISPLAY_FIELDS.length; i++) if (i !== EVENT_HASH_SLOT && r.fieldS[i]! >= 0) n += r.fieldE[i]! - r.fieldS[i]!;
  return n;
}

/** The read area: one chunk of the line reader. */
export const READ_AREA = 1 << 20;

export class FastRowReader implements LoadedRow {
  /** The emitter's memory: the read area (chunks are read into it, `readBuffer`), scratch, and the row area (ROW_AREA bytes). */
  readonly em = new CanonicalEmitter(READ_AREA + 64, ROW_AREA);
  readonly mem = this.em.mem;
  /** Where the line reader reads chunks (lines are then validated in place). */
  readonly readBuffer = this.em.mem.subarray(0, READ_AREA + 8);
  /** Top-level members: [0, members) of the emitter's member table, in line order. */
  members = 0;
  /** Value span in the line of each display field (-1: absent). */
  readonly fieldS = new Int32Array(DISPLAY_FIELDS.length);
  readonly fieldE = new Int32Array(DISPLAY_FIELDS.length);
  /** Member index of the envelope keys met (-1: absent). */
  private eventKey = -1;
  private tsMember = -1;
  private elapsedMember = -1;
  /** End of the sorted copy of the members (see load). */
  private sortedTop = 0;

  /**
   * Load and validate the line buf[s, e) of `readBuffer` (its line end is
   * a line feed, which stops every scanning loop); false when it must take
   * the exact path (also for a line the reader assembled elsewhere: the one
   * that spans two chunks).
   */
  load(buf: Uint8Array, s: number, e: number): boolean {
    const em = this.em;
    const b = em.mem;
    if (e - s < 2 || e - s > FAST_LINE_MAX || buf.buffer !== b.buffer || buf.byteOffset !== b.byteOffset || b[e] !== 10) return false;
    this.fieldS.fill(-1);
    this.eventKey = -1;
    this.tsMember = -1;
    this.elapsedMember = -1;
    if (b[s] !== LBRACE) return false;
    let p = skipWs(b, s + 1);
    em.begin();
    if (b[p] === RBRACE) {
      this.members = 0;
      this.sortedTop = 0;
      return p + 1 === e;
    }
    const dv = em.dv;
    for (;;) {
      const ks = p + 1;
      const ke = b[p] === QUOTE ? scanPlainKey(b, dv, ks) : -1;
      if (ke < 0 || b[(p = skipWs(b, ke + 1))] !== COLON) return false;
      const vs = (p = skipWs(b, p + 1));
      const kind = envelopeKind(b, ks, ke);
      const m = em.mTop;
      if (kind === Key.HashProfile) return false;
      if ((kind === Key.Ts || kind === Key.ElapsedS) && isNumberStart(b[p]!)) {
        // any JSON number spelling: it is in no pre-image
        const q = numberEnd(b, p);
        if (q < 0) return false;
        em.mTop++;
        em.mKeyS[m] = ks;
        em.mKeyE[m] = ke;
        em.mValS[m] = p;
        em.mValE[m] = q;
        p = q;
      } else {
        p = em.member(p, ks, ke, 0);
        if (p < 0) return false;
      }
      if (kind === Key.Event) {
        if (b[vs] !== QUOTE || this.eventKey >= 0) return false;
        this.eventKey = m;
        em.typeStart = vs;
        em.typeEnd = p;
      } else if (kind === Key.Ts) {
        if (this.tsMember >= 0) return false;
        this.tsMember = m;
      } else if (kind === Key.ElapsedS) {
        if (this.elapsedMember >= 0) return false;
        this.elapsedMember = m;
      }
      this.noteField(ks, ke, vs, p);
      p = skipWs(b, p);
      if (b[p] !== COMMA) {
        // the row's closing brace, which must end the line
        if (b[p++] !== RBRACE) return false;
        break;
      }
      p = skipWs(b, p + 1);
    }
    this.members = em.mTop;
    if (2 * this.members + 2 > em.mKeyS.length) return false;
    // A sorted copy of the members but ts/elapsed_s: the fingerprint's member order, and the check
    // for duplicate keys (json.loads keeps the last value; the exact path applies that).
    this.sortedTop = this.copyMembers(this.tsMember, this.elapsedMember);
    return p === e && em.sortMembers(this.members, this.sortedTop - this.members);
  }

  /** load() of a line held elsewhere, copied into the read area first. */
  loadCopy(buf: Uint8Array, s: number, e: number): boolean {
    if (e - s > FAST_LINE_MAX) return false;
    this.mem.set(buf.subarray(s, e), 0);
    this.mem[e - s] = 10;
    return this.load(this.readBuffer, 0, e - s);
  }

  /** Copy the members but `skipA`/`skipB` (-1: none) to the top of the member table; returns the new top. */
  private copyMembers(skipA: number, skipB: number): number {
    const em = this.em;
    let t = this.members;
    for (let m = 0; m < this.members; m++) {
      if (m === skipA || m === skipB) continue;
      em.mKeyS[t] = em.mKeyS[m]!;
      em.mKeyE[t] = em.mKeyE[m]!;
      em.mValS[t] = em.mValS[m]!;
      em.mValE[t] = em.mValE[m]!;
      t++;
    }
    return t;
  }

  private noteField(ks: number, ke: number, vs: number, ve: number): void {
    noteField(this.mem, ks, ke, vs, ve, this.fieldS, this.fieldE);
  }

  /**
   * The replay fingerprint's text of the loaded row (canonical, without
   * ts/elapsed_s), written at `o` of the emitter's memory; returns its end
   * (or -1 when it does not fit before `limit`).
   */
  fingerprintText(o: number, limit: number): number {
    return this.em.assemble(this.members, this.sortedTop - this.members, o, limit);
  }

  /** The loaded row's payload pre-image into the emitter's out area (false: no `event` string, or too long). */
  payloadPreimage(): boolean {
    if (this.eventKey < 0) return false;
    const em = this.em;
    const b = em.mem;
    const eventKeyS = em.mKeyS[this.eventKey]!;
    // finishPayload sorts [0, mTop): keep the payload members (the top-level spans are not needed again)
    let t = 0;
    for (let m = 0; m < this.members; m++) {
      if (m === this.eventKey || envelopeKind(b, em.mKeyS[m]!, em.mKeyE[m]!) !== Key.Payload) continue;
      em.mKeyS[t] = em.mKeyS[m]!;
      em.mKeyE[t] = em.mKeyE[m]!;
      em.mValS[t] = em.mValS[m]!;
      em.mValE[t] = em.mValE[m]!;
      t++;
    }
    em.mTop = t;
    this.members = 0;
    return em.finishPayload(eventKeyS);
  }

  /** The py-json value of display field `slot`, or undefined when the row has no such member. */
  field(slot: number): PyValue | undefined {
    const s = this.fieldS[slot]!;
    if (s < 0) return undefined;
    return valueAt(this.em.mem, s, this.fieldE[slot]!);
  }

  /**
   * The display fields as a row (absent ones left out): what `displayRow`
   * reads of the full row. One Map, refilled for every row: valid until
   * the next call.
   */
  displayFields(skip = -1): PyObject {
    return displayFieldsOf(this.mem, this.fieldS, this.fieldE, skip, this.fields);
  }

  private readonly fields: PyObject = new Map();
}

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

function isNumberStart(c: number): boolean {
  return c === 0x2d || (c >= 0x30 && c <= 0x39);
}
