import { InputError } from "../errors.ts";
import { checkInput } from "../fsutil/input.ts";
import { eventHash, hashProfileOf, payloadHash } from "../journal/hash.ts";
import type { JournalRow } from "../journal/reader.ts";
import { encodeString } from "../pyjson/encode.ts";
import { pyStr } from "../pyjson/python.ts";
import { sanitizeCell } from "../render/table.ts";
import { readFastLines } from "./fast-lines.ts";
import { FastRowReader } from "./fast-row.ts";

/**
 * `replay <RUN_ID> --from-step N` on the rows' bytes: the state after the
 * first N usable rows (src/journal/rebuild.ts, the exact path, is the
 * reference: the same events, recomputed head and count, the same
 * unknown_hash_profile error), with rows in the writer's spelling hashed
 * from slices of their bytes (fast-row.ts) and any other row on the exact
 * path, at its position in the recomputed chain.
 *
 * The events are kept as their JSON text (json.dumps spelling, joined by
 * ", ") while that stays under EVENTS_CAP; a longer list is not kept, and
 * `eachEventText` reads the journal a second time to stream it, so memory
 * stays bounded at any N (nothing is written before the whole prefix was
 * read: an error at row N-1 leaves stdout empty).
 */

/** The event list kept in memory up to this many bytes of JSON text. */
const EVENTS_CAP = 16 << 20;

export interface Projection {
  head_hash: string;
  step_count: number;
  /** The events' JSON strings joined by ", ", or null when they were too many to keep (use eachEventText). */
  eventsText: Uint8Array | null;
}

/** A growable ASCII byte buffer. */
class AsciiBuffer {
  buf = new Uint8Array(1 << 16);
  len = 0;
  push(src: Uint8Array, s: number, e: number): void {
    const n = e - s;
    if (this.len + n > this.buf.length) {
      const next = new Uint8Array(Math.max(this.buf.length * 2, this.len + n));
      next.set(this.buf.subarray(0, this.len));
      this.buf = next;
    }
    this.buf.set(src.subarray(s, e), this.len);
    this.len += n;
  }
  text(t: string): void {
    const bytes = Buffer.from(t, "latin1");
    this.push(bytes, 0, bytes.length);
  }
}

const SEP = Buffer.from(", ");

/** Python `str()` of the row's event, for an exact-path row. */
const eventTypeOf = (row: JournalRow): string => pyStr(row.get("event"), "");

/** The state through step `fromStep` (a non-negative integer; Infinity: all rows); `eventsCap` is for tests. */
export function projectRunFast(path: string, fromStep: number, eventsCap = EVENTS_CAP): Projection {
  const upper = Math.max(0, fromStep);
  checkInput(path, { what: "journal" });
  const result: Projection = { head_hash: "", step_count: 0, eventsText: null };
  if (upper === 0) {
    result.eventsText = new Uint8Array(0);
    return result;
  }
  const r = new FastRowReader();
  const em = r.em;
  let events: AsciiBuffer | null = new AsciiBuffer();
  let count = 0;
  let hasHead = false;
  let head = ""; // valid only while `stale` is false
  let stale = false;
  const headText = (): string => {
    if (stale) {
      head = Buffer.from(em.mem.subarray(em.prevHex, em.prevHex + 64)).toString("latin1");
      stale = false;
    }
    return head;
  };
  const addEvent = (src: Uint8Array, s: number, e: number): void => {
    if (events === null) return;
    if (count > 0) events.push(SEP, 0, SEP.length);
    events.push(src, s, e);
    if (events.len > eventsCap) events = null;
  };
  for (const _ of readFastLines(path, {
    fast: (buf, s, e) => {
      if (!r.load(buf, s, e) || !r.payloadPreimage()) return false;
      em.prevStart = em.prevHex;
      em.prevEnd = hasHead ? em.prevHex + 64 : em.prevHex;
      em.hashPayload();
      if (!em.hashEvent(count)) return false;
      em.advance();
      hasHead = true;
      stale = true;
      addEvent(em.mem, em.typeStart, em.typeEnd);
      count++;
      return true;
    },
    exact: (v, _bytes, lineNo) => {
      if (v.kind !== "row") return;
      const type = eventTypeOf(v.row);
      let profile: string;
      try {
        profile = hashProfileOf(v.row);
      } catch (err) {
        throw new InputError("unknown_hash_profile", `step ${count} (physical line ${lineNo - 1}): ${(err as Error).message}`, { path, step_index: count });
      }
      head = eventHash(headText(), type, payloadHash(type, v.row, profile), count, profile);
      for (let i = 0; i < 64; i++) em.mem[em.prevHex + i] = head.charCodeAt(i);
      hasHead = true;
      stale = false;
      const token = Buffer.from(encodeString(type, true), "latin1");
      addEvent(token, 0, token.length);
      count++;
    },
    done: () => count >= upper,
  }));
  result.head_hash = hasHead ? headText() : "";
  result.step_count = count;
  result.eventsText = events === null ? null : (events as AsciiBuffer).buf.subarray(0, (events as AsciiBuffer).len);
  return result;
}

/**
 * The JSON text of the first `steps` events, in pieces of about 1 MiB
 * (joined by ", "), read from the journal again: for a projection whose
 * list was too long to keep.
 */
export function* eachEventText(path: string, steps: number): Generator<Uint8Array> {
  const r = new FastRowReader();
  const out = new AsciiBuffer();
  let count = 0;
  const add = (src: Uint8Array, s: number, e: number): void => {
    if (count++ > 0) out.push(SEP, 0, SEP.length);
    out.push(src, s, e);
  };
  for (const _ of readFastLines(path, {
    fast: (buf, s, e) => {
      if (!r.load(buf, s, e) || !r.payloadPreimage()) return false;
      add(r.em.mem, r.em.typeStart, r.em.typeEnd);
      return true;
    },
    exact: (v) => {
      if (v.kind !== "row") return;
      const token = Buffer.from(encodeString(eventTypeOf(v.row), true), "latin1");
      add(token, 0, token.length);
    },
    done: () => count >= steps,
  })) {
    if (out.len >= 1 << 20) {
      yield out.buf.subarray(0, out.len);
      out.len = 0;
    }
  }
  if (out.len > 0) yield out.buf.subarray(0, out.len);
}

const ascii = (t: string): Uint8Array => Buffer.from(t, "latin1");

/** The events' JSON text of a projection, kept or read again. */
function eventTexts(path: string, p: Projection): Iterable<Uint8Array> {
  return p.eventsText !== null ? [p.eventsText] : eachEventText(path, p.step_count);
}

/**
 * `{"events", "head_hash", "ok", "step_count"}` as Python's
 * `json.dumps({**state, "ok": True}, sort_keys=True)` prints it (one line,
 * ASCII-escaped), then "\n", in pieces.
 */
export function* projectionJson(path: string, p: Projection): Generator<Uint8Array> {
  yield ascii('{"events": [');
  yield* eventTexts(path, p);
  yield ascii(`], "head_hash": ${encodeString(p.head_hash)}, "ok": true, "step_count": ${p.step_count}}\n`);
}

/** The event types of a joined JSON text (`"a", "b"`, or a piece of one starting with ", "). */
export function* eventStrings(text: Uint8Array): Generator<string> {
  let p = 0;
  const n = text.length;
  while (p < n) {
    while (p < n && text[p] !== 0x22) p++;
    if (p >= n) return;
    const s = p++;
    let plain = true;
    while (text[p] !== 0x22) {
      if (text[p] === 0x5c) {
        plain = false;
        p++;
      }
      p++;
    }
    p++;
    const token = Buffer.from(text.subarray(s, p)).toString("latin1");
    yield plain ? token.slice(1, -1) : (JSON.parse(token) as string);
  }
}

/** The prose of a projection (three lines; the event list sanitized for the terminal), in pieces. */
export function* projectionProse(runId: string, path: string, p: Projection): Generator<string> {
  yield `Rebuilt state for ${runId} through step ${p.step_count}\nhead: ${p.head_hash || "(empty)"}\nevents: `;
  let first = true;
  for (const piece of eventTexts(path, p)) {
    const names = [...eventStrings(piece)];
    if (names.length === 0) continue;
    // sanitizeCell maps character by character, so sanitizing each name equals sanitizing the joined line
    yield (first ? "" : ", ") + names.map(sanitizeCell).join(", ");
    first = false;
  }
  yield "\n";
}
