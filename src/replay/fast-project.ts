import { InputError } from "../errors.ts";
import { checkInput } from "../fsutil/input.ts";
import { eventHash, hashProfileOf, payloadHash } from "../journal/hash.ts";
import type { JournalRow } from "../journal/reader.ts";
import { encodeString } from "../pyjson/encode.ts";
import { pyStr } from "../pyjson/python.ts";
import { sanitizeCell } from "../render/table.ts";
import { readFastLines } from "./fast-lines.ts";
import { FastRowReader } from "./fast-row.ts";
import { KernelMode, VerifyKernel } from "../journal/fast/kernel.ts";

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

/** The kernel's read area (the chunk size of the projection's reads). */
const KERNEL_READ = 1 << 18;
/** In a row the kernel took: the type token ends right before this, and the stored event_hash starts HASH_AFTER_TYPE bytes after its end. */
const EVENT_KEY = Buffer.from(', "event": "');
const PREV_KEY = Buffer.from('", "prev_hash": "');
const HASH_AFTER_TYPE = '", "prev_hash": "'.length - 1 + 64 + '", "payload_hash": "'.length + 64 + '", "event_hash": "'.length;

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
  const k = new VerifyKernel(KERNEL_READ);
  const lines = k.lines;
  const text = Buffer.from(lines.buffer, lines.byteOffset, lines.length);
  let events: AsciiBuffer | null = new AsciiBuffer();
  let count = 0;
  /** The recomputed head: the kernel's previous-hash slot, which it links the next rows to (when `hasHead`). */
  const head = k.prev;
  let hasHead = false;
  const headText = (): string => (hasHead ? Buffer.from(head).toString("latin1") : "");
  /** One more row of the projection (its event's JSON text kept while the list is short enough). */
  const addEvent = (src: Uint8Array, s: number, e: number): void => {
    const first = count++ === 0;
    if (events === null) return;
    if (!first) events.push(SEP, 0, SEP.length);
    events.push(src, s, e);
    if (events.len > eventsCap) events = null;
  };
  let crFrom = -1;
  let crAt = -1;
  /**
   * Runs of rows the verify kernel takes in place (chunks are read into its
   * memory): rows in the writer's spelling whose stored prev_hash is our
   * recomputed head and whose stored payload and event hashes are the ones
   * recomputed at their position, so each stored event_hash is the next
   * head. Each such row is `{"ts": N, "elapsed_s": N, "index": N, "event": T,
   * "prev_hash": ...` (the kernel's envelope), which locates T.
   */
  const bulk = {
    taken: 0,
    take(buf: Uint8Array, start: number, end: number): number {
      bulk.taken = 0;
      if (!hasHead || count >= upper) return start;
      // the kernel also takes CR line ends; the line reader's count of them is its own: no bulk there
      if (crFrom < 0 || start < crFrom || (crAt >= 0 && crAt < start)) {
        crFrom = start;
        crAt = buf.indexOf(13, start);
      }
      if (crAt >= 0 && crAt < end) return start;
      k.verify(start, end, count, KernelMode.Chain);
      const rows = Math.min(k.rows, upper - count);
      let p = start;
      for (let i = 0; i < rows; i++) {
        const t0 = text.indexOf(EVENT_KEY, p) + EVENT_KEY.length - 1;
        const t1 = text.indexOf(PREV_KEY, t0) + 1;
        addEvent(lines, t0, t1);
        if (i === rows - 1 && rows < k.rows) head.set(lines.subarray(t1 + HASH_AFTER_TYPE, t1 + HASH_AFTER_TYPE + 64));
        p = text.indexOf(10, t1) + 1;
      }
      bulk.taken = rows;
      return p;
    },
  };
  for (const _ of readFastLines(path, {
    buffer: lines,
    bulk,
    fast: () => false,
    exact: (v, _bytes, lineNo) => {
      if (v.kind !== "row") return;
      const type = eventTypeOf(v.row);
      let profile: string;
      try {
        profile = hashProfileOf(v.row);
      } catch (err) {
        throw new InputError("unknown_hash_profile", `step ${count} (physical line ${lineNo - 1}): ${(err as Error).message}`, { path, step_index: count });
      }
      const next = eventHash(headText(), type, payloadHash(type, v.row, profile), count, profile);
      for (let i = 0; i < 64; i++) head[i] = next.charCodeAt(i);
      hasHead = true;
      const token = Buffer.from(encodeString(type, true), "latin1");
      addEvent(token, 0, token.length);
    },
    done: () => count >= upper,
  }));
  result.head_hash = headText();
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
