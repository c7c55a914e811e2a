import { copyTo, CR, fnv1a, LF, QUOTE } from "../codec/bytes.ts";
import { NOT_PLAIN_TEXT, scannedString, stringTokenEnd } from "../codec/row-index.ts";
import { jsonFields, type JsonFields } from "../json-fields.ts";
import { InputError } from "../errors/index.ts";
import { checkInput } from "../fsutil/input.ts";
import { eventHash, hashProfileOf, payloadHash, type HashProfile } from "../journal/hash.ts";
import type { JournalRow } from "../journal/reader.ts";
import { encodeString } from "../pyjson/encode.ts";
import { ByteSink } from "../pyjson/encode-bytes.ts";
import { pyStr } from "../pyjson/python.ts";
import { sanitizeCell } from "../render/table.ts";
import { readFastLines } from "./fast-lines.ts";
import type { BulkProbe } from "../fsutil/lines.ts";
import { KernelMode, VerifyKernel } from "../journal/fast/kernel.ts";
import { copyCapFor, LONG_LINE_MAX } from "./kernel-row.ts";
import { HASH_AFTER_TYPE, writerTypeToken, type TypeToken } from "../codec/writer-envelope.ts";
import { nextTurn, TurnPacer } from "../fsutil/turn.ts";

/**
 * `replay <RUN_ID> --from-step N` on the rows' bytes: the state after the
 * first N usable rows (src/journal/rebuild.ts, the exact path, is the
 * reference: the same events, recomputed head and count, the same
 * unknown_hash_profile error), with rows in the writer's spelling hashed
 * from slices of their bytes (fast-row.ts) and any other row on the exact
 * path, at its position in the recomputed chain.
 *
 * The events are kept as an EventList (each distinct type's JSON text
 * once, json.dumps spelling, and a 16-bit id per event) while that stays
 * under EVENTS_CAP bytes; a longer list, or one of too many distinct types,
 * is not kept, and `eachEventText` reads the journal a second time to
 * stream it, so memory stays bounded at any N (nothing is written before
 * the whole prefix was read: an error at row N-1 leaves stdout empty).
 */

/** The kernel's read area (the chunk size of the projection's reads). */
const KERNEL_READ = 1 << 18;

/** The event list kept in memory up to this many bytes (EventList.bytes). */
const EVENTS_CAP = 8 << 20;

export interface Projection {
  head_hash: string;
  step_count: number;
  /** The events, or null when they were too many to keep (use eachEventText). */
  events: EventList | null;
}

/**
 * A list of events as the JSON text of their types: each distinct token
 * once (a run has a few dozen types; its events, hundreds of thousands),
 * and per event its token's id in blocks of 16-bit ids, so the list costs
 * two bytes an event and growing it never copies.
 */
export class EventList {
  private tokens = new Uint8Array(4096);
  private tokensLen = 0;
  private readonly tokenStart = new Int32Array(TOKENS_MAX + 1);
  /** Open addressing by the token's hash: a token's id + 1 (0: empty slot). */
  private readonly slots = new Uint16Array(SLOTS);
  private readonly blocks: Uint16Array[] = [];
  private cur = new Uint16Array(0);
  private at = 0;
  private distinct = 0;
  /** Events held. */
  length = 0;

  /** Memory held: ids, tokens and the table. */
  get bytes(): number {
    return this.length * 2 + this.tokens.length + this.slots.byteLength + this.tokenStart.byteLength;
  }

  /** Add the event whose type's JSON text is src[s, e); false when the list holds TOKENS_MAX types already and this is a new one. */
  push(src: Uint8Array, s: number, e: number): boolean {
    const id = this.idOf(src, s, e);
    if (id < 0) return false;
    if (this.at === this.cur.length) {
      this.cur = new Uint16Array(ID_BLOCK);
      this.blocks.push(this.cur);
      this.at = 0;
    }
    this.cur[this.at++] = id;
    this.length++;
    return true;
  }

  private idOf(src: Uint8Array, s: number, e: number): number {
    const h = fnv1a(src, s, e);
    const n = e - s;
    for (let slot = h & (SLOTS - 1); ; slot = (slot + 1) & (SLOTS - 1)) {
      const held = this.slots[slot]!;
      if (held === 0) break;
      const ts = this.tokenStart[held - 1]!;
      if (this.tokenStart[held]! - ts !== n) continue;
      let i = 0;
      while (i < n && this.tokens[ts + i] === src[s + i]) i++;
      if (i === n) return held - 1;
    }
    if (this.distinct === TOKENS_MAX) return -1;
    if (this.tokensLen + n > this.tokens.length) {
      const grown = new Uint8Array(Math.max(2 * this.tokens.length, this.tokensLen + n));
      grown.set(this.tokens.subarray(0, this.tokensLen));
      this.tokens = grown;
    }
    this.tokens.set(src.subarray(s, e), this.tokensLen);
    this.tokensLen += n;
    const id = this.distinct++;
    this.tokenStart[id + 1] = this.tokensLen;
    let slot = h & (SLOTS - 1);
    while (this.slots[slot] !== 0) slot = (slot + 1) & (SLOTS - 1);
    this.slots[slot] = id + 1;
    return id;
  }

  /** The events' JSON text joined by ", ", in pieces of about 1 MiB (one buffer: a piece is valid until the next). */
  *texts(): Generator<Uint8Array> {
    let out = new Uint8Array(BLOCK);
    let pos = 0;
    let k = 0;
    for (const block of this.blocks) {
      const n = Math.min(block.length, this.length - k);
      for (let i = 0; i < n; i++, k++) {
        const id = block[i]!;
        const ts = this.tokenStart[id]!;
        const te = this.tokenStart[id + 1]!;
        if (pos + 2 + te - ts > out.length) {
          if (pos > 0) yield out.subarray(0, pos);
          pos = 0;
          if (te - ts + 2 > out.length) out = new Uint8Array(te - ts + 2);
        }
        if (k > 0) {
          out[pos++] = 0x2c;
          out[pos++] = 0x20;
        }
        for (let j = ts; j < te; j++) out[pos++] = this.tokens[j]!;
      }
    }
    if (pos > 0) yield out.subarray(0, pos);
  }
}

/** Distinct types an EventList holds (its ids are 16 bits; the table stays at most half full). */
const TOKENS_MAX = 1 << 15;
const SLOTS = 1 << 16;
const ID_BLOCK = 1 << 16;

/**
 * ASCII text kept in blocks of about 1 MiB, each ending between two pushes
 * (so no event's JSON string is split): growing it never copies, so no
 * garbage of earlier sizes stays behind.
 */
class BlockBuffer {
  private readonly sealed: Uint8Array[] = [];
  private cur = new Uint8Array(BLOCK);
  private at = 0;
  /** Bytes held. */
  len = 0;
  push(src: Uint8Array, s: number, e: number): void {
    const n = e - s;
    if (this.at + n > this.cur.length) {
      this.sealed.push(this.cur.subarray(0, this.at));
      this.cur = new Uint8Array(Math.max(BLOCK, n));
      this.at = 0;
    }
    this.at = copyTo(src, s, e, this.cur, this.at);
    this.len += n;
  }
  /** Hand out what is held and start empty (the current block is reused). */
  take(): Uint8Array[] {
    const out = [...this.sealed, this.cur.subarray(0, this.at).slice()];
    this.sealed.length = 0;
    this.at = 0;
    this.len = 0;
    return out;
  }
}

const BLOCK = 1 << 20;

const SEP = Buffer.from(", ");

/** Python `str()` of the row's event, for an exact-path row. */
const eventTypeOf = (row: JournalRow): string => pyStr(row.get("event"), "");

/**
 * A bulk line probe (src/fsutil/lines.ts) that lets the verify kernel take
 * runs of rows in place (the chunks are read into its memory), in `mode`,
 * at most `room()` of them, the first at position `index()`. Each row it
 * takes is `{"ts": N, "elapsed_s": N, "index": N, "event": T, "prev_hash": ...`
 * (the kernel's envelope), which locates T for `onRow`; when fewer rows are
 * taken than the kernel verified, `onCut` gets where the last one's stored
 * event_hash starts. A row ends at its LF (a CR LF's included: Python's text
 * mode on Windows writes them); lines from a lone CR on are left to the line
 * reader (the kernel takes a row ending at one, but the next row would not
 * start after a LF).
 */
function kernelBulk(
  k: VerifyKernel,
  mode: KernelMode,
  room: () => number,
  index: () => number,
  onRow: (typeStart: number, typeEnd: number) => void,
  onCut: (hashStart: number) => void = () => {},
): BulkProbe & { taken: number } {
  const text = Buffer.from(k.lines.buffer, k.lines.byteOffset, k.lines.length);
  const type: TypeToken = { start: 0, end: 0 };
  /** The chunk whose CRs were looked at (each read is a new view), from where, and the first lone CR there (-1: none). */
  let crChunk: Uint8Array | null = null;
  let crFrom = -1;
  let loneAt = -1;
  const probe = {
    taken: 0,
    take(buf: Uint8Array, start: number, end: number): number {
      probe.taken = 0;
      const most = room();
      if (most <= 0) return start;
      if (buf !== crChunk || start < crFrom || (loneAt >= 0 && loneAt < start)) {
        crChunk = buf;
        crFrom = start;
        loneAt = loneCr(buf, start, end);
      }
      if (loneAt >= 0) return start;
      k.verify(start, end, index(), mode);
      const rows = Math.min(k.rows, most);
      let p = start;
      for (let i = 0; i < rows; i++) {
        writerTypeToken(text, p, type);
        onRow(type.start, type.end);
        // (the stored event_hash's 64 hex digits, after its opening quote)
        if (i === rows - 1 && rows < k.rows) onCut(type.end + HASH_AFTER_TYPE + 1);
        p = text.indexOf(10, type.end) + 1;
      }
      probe.taken = rows;
      return p;
    },
  };
  return probe;
}

/**
 * The first CR in b[from, end) that a LF does not follow, or -1 (a CR as
 * the last byte is not counted: its line is not whole, and no row is taken
 * from it).
 */
function loneCr(b: Uint8Array, from: number, end: number): number {
  for (let i = b.indexOf(CR, from); i >= 0 && i + 1 < end; i = b.indexOf(CR, i + 1)) if (b[i + 1] !== LF) return i;
  return -1;
}

/** The state through step `fromStep` (a non-negative integer; Infinity: all rows); `eventsCap` is for tests. */
export async function projectRunFast(path: string, fromStep: number, eventsCap = EVENTS_CAP): Promise<Projection> {
  const upper = Math.max(0, fromStep);
  checkInput(path, { what: "journal" });
  let events: EventList | null = new EventList();
  if (upper === 0) return { head_hash: "", step_count: 0, events };
  const walked = await finish(walkChain(path, upper, (src, s, e) => {
    if (events !== null && (!events.push(src, s, e) || events.bytes > eventsCap)) events = null;
  }));
  return { ...walked, events };
}

/**
 * The recomputed chain over the first `upper` usable rows; `onEvent` gets
 * each row's event as its JSON text (bytes [s, e) of `src`, valid during
 * the call), in order.
 */
function* walkChain(path: string, upper: number, onEvent: (src: Uint8Array, s: number, e: number) => void): Generator<void, Walked> {
  const k = new VerifyKernel(KERNEL_READ);
  const lines = k.lines;
  let count = 0;
  /** The recomputed head: the kernel's previous-hash slot, which it links the next rows to (when `hasHead`). */
  const head = k.prev;
  let hasHead = false;
  const headText = (): string => (hasHead ? Buffer.from(head).toString("latin1") : "");
  const addEvent = (src: Uint8Array, s: number, e: number): void => {
    count++;
    onEvent(src, s, e);
  };
  // Rows whose stored prev_hash is our recomputed head and whose stored payload and event
  // hashes are the ones recomputed at their position: each stored event_hash is the next head.
  // (Only this mode proves every byte of a row: the kernel's classify and links modes leave
  // the stored hashes unchecked, which may hold bytes the exact reader refuses.)
  const bulk = kernelBulk(k, KernelMode.Chain, () => (hasHead ? upper - count : 0), () => count, (t0, t1) => addEvent(lines, t0, t1), (at) =>
    head.set(lines.subarray(at, at + 64)),
  );
  let big: VerifyKernel | null = null;
  /** A line the reader assembled whole (it spanned two reads, is long, or was re-spaced): on a kernel sized to it (as verify's long rows), linked from the head. */
  const assembled = (bytes: Uint8Array): boolean => {
    const n = bytes.length;
    if (!hasHead || count >= upper || n > LONG_LINE_MAX) return false;
    if (big === null || big.readCap < n + 1) {
      big = null; // the old kernel's memory is garbage before the new one is made
      big = new VerifyKernel(copyCapFor(n), 1);
    }
    const b = big.lines;
    b.set(bytes, 0);
    b[n] = 0x0a;
    b[n + 1] = 0x0a; // the sentinel
    big.prev.set(head);
    if (big.verify(0, n + 1, count, KernelMode.Chain) !== n + 1 || big.rows !== 1) return false;
    const text = Buffer.from(b.buffer, b.byteOffset, n);
    const type: TypeToken = { start: 0, end: 0 };
    writerTypeToken(text, 0, type);
    head.set(big.prev);
    addEvent(b, type.start, type.end);
    return true;
  };
  yield* readFastLines(path, {
    buffer: lines,
    bulk,
    // a line in the read buffer the bulk probe left is the exact path's; one that spanned two reads is not in it
    fast: (buf, s, e) => buf !== lines && assembled(buf.subarray(s, e)),
    long: assembled,
    // an exact row is only hashed; its values are collected after EXACT_GC_BYTES of such rows (fast-lines.ts)
    rawStrings: true,
    gcEvery: Number.POSITIVE_INFINITY,
    exact: (v, _bytes, lineNo) => {
      if (v.kind !== "row") return;
      const type = eventTypeOf(v.row);
      let profile: HashProfile;
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
  });
  return { head_hash: headText(), step_count: count };
}

interface Walked {
  head_hash: string;
  step_count: number;
}

/** Run a walk to its end, a turn of the event loop now and then (fsutil/turn.ts). */
async function finish(walk: Generator<void, Walked>): Promise<Walked> {
  const turns = new TurnPacer();
  for (;;) {
    const r = walk.next();
    if (r.done) return r.value;
    if (turns.due()) await nextTurn();
  }
}

/**
 * The JSON text of the first `steps` events, in pieces of about 1 MiB
 * (joined by ", "), read from the journal again: for a projection whose
 * list was too long to keep.
 */
export function* eachEventText(path: string, steps: number): Generator<Uint8Array> {
  const out = new BlockBuffer();
  let first = true;
  const walk = walkChain(path, steps, (src, s, e) => {
    if (!first) out.push(SEP, 0, SEP.length);
    first = false;
    out.push(src, s, e);
  });
  // the walk yields after each chunk: what it produced is handed out then
  while (!walk.next().done) if (out.len >= BLOCK) yield* out.take();
  if (out.len > 0) yield* out.take();
}

const ascii = (t: string): Uint8Array => Buffer.from(t, "latin1");

/** The events' JSON text of a projection, kept or read again. */
function eventTexts(path: string, p: Projection): Iterable<Uint8Array> {
  return p.events !== null ? p.events.texts() : eachEventText(path, p.step_count);
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

const utf8 = new TextEncoder();
const NAME_SEP = ascii(", ");

/**
 * Append the event types of a joined JSON text (`"a", "b"`, or a piece of
 * one starting with ", ") to `out` as the prose shows them: each decoded and
 * sanitized for the terminal (sanitizeCell), joined by ", ", a separator
 * before the first too unless `first`. Returns how many were appended. A
 * type of printable ASCII alone (no escape, no raw UTF-8, no raw DEL) is
 * its own prose, copied as bytes; only the others are made strings.
 */
export function appendEventProse(text: Uint8Array, out: ByteSink, first: boolean): number {
  let p = 0;
  let names = 0;
  const n = text.length;
  while (p < n) {
    while (p < n && text[p] !== QUOTE) p++;
    if (p >= n) return names;
    const s = p;
    p = stringTokenEnd(text, s);
    // the text is the projection's own writing: a token it cannot read is a bug, not input
    if (p < 0) throw new Error(`projection event text: no string at byte ${s}`);
    if (!first || names > 0) out.bytes(NAME_SEP);
    names++;
    if ((scannedString.flags & NOT_PLAIN_TEXT) === 0) {
      out.bytes(text, s + 1, p - 1);
      continue;
    }
    const name = JSON.parse(Buffer.from(text.subarray(s, p)).toString("utf8")) as string;
    out.bytes(utf8.encode(sanitizeCell(name)));
  }
  return names;
}

/** The prose of a projection (three lines; the event list sanitized for the terminal), in pieces (each valid until the next). */
export function* projectionProse(runId: string, path: string, p: Projection): Generator<Uint8Array> {
  yield utf8.encode(`Rebuilt state for ${runId} through step ${p.step_count}\nhead: ${p.head_hash || "(empty)"}\nevents: `);
  const out = new ByteSink(BLOCK + 4096);
  let first = true;
  for (const piece of eventTexts(path, p)) {
    if (appendEventProse(piece, out, first) > 0) first = false;
    if (out.len >= BLOCK) {
      yield out.view();
      out.len = 0;
    }
  }
  out.byte(0x0a);
  yield out.view();
}

/** The document `projectionJson` writes (`replay <RUN_ID> --from-step N --as-json`; docs/cli/replay.md). */
export const PROJECTION_FIELDS: JsonFields = jsonFields([
  ["ok", "true", "The projection was built"],
  ["events", "object[]", "The events through step N"],
  ["head_hash", "string", "The chain's head after them"],
  ["step_count", "number", "How many there are"],
]);
