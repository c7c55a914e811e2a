/**
 * `replay <RUN> --follow`: a run journal read as it grows, like `tail -f`
 * with a verdict. An event is handed on only once its hash checked out at
 * its position; the verdict is journal/verdict.ts's.
 *
 * Catching up with what is already written (FOLLOW_FAST_BYTES or more of
 * complete lines) is two passes: the fast verifier over those bytes, in
 * this thread (it yields between ranges, so a signal stops it), then, when
 * the whole of it verified, one read of the same bytes on the display's
 * kernel (replay/kernel-row.ts), handing each row's display fields and its
 * JSON made from its bytes (fast-json.ts); for the JSON alone, a row the
 * verify kernel took is its own JSON (VerbatimRow). Anything else (a broken chain,
 * an unreadable line, a row the verifier refuses) is read row by row from
 * the top instead, which stops at the first bad row as the walk does.
 * Each line appended after that is classified by the journal reader
 * (journal/reader.ts) and pushed through the chain walker
 * (journal/chain.ts) before it is handed on.
 *
 * It ends when the run ends (its `run_completed` event), when the run's
 * process is gone (`runAlive`) and the journal stayed still for `quietMs`
 * (by its modification time, so a run that ended long ago ends the follow
 * once it caught up), at the first divergent or unreadable line (the
 * verdict names it), or when `signal` aborts (the verdict so far). A
 * trailing line without its line break is not read until the break
 * arrives: a writer mid-append is not a torn journal.
 */
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { InputError } from "../errors/index.ts";
import { contentEnd, physicalLines } from "../fsutil/lines.ts";
import { JOURNAL_MAX_ROW_BYTES } from "../fsutil/input.ts";
import { RAW_STRING_MIN } from "../pyjson/row.ts";
import { GrowthCollector, nextTurn, TurnPacer } from "../fsutil/turn.ts";
import { EventChainWalker } from "../journal/chain.ts";
import { verifyJournalFast } from "../journal/fast/engine.ts";
import { VerifyAborted } from "../journal/fast/executor.ts";
import type { FastVerifyResult, JournalVerifyResult, LastLine } from "../journal/model.ts";
import { classifyLine } from "../journal/reader.ts";
import { chainVerdict } from "../journal/verdict.ts";
import type { PyObject } from "../pyjson/types.ts";
import type { OutBytes } from "../codec/row-index.ts";
import { RUN_ROW_KEYS, RunKey } from "../journal/row-keys.ts";
import { renderJson, renderRowInline } from "../render/json.ts";
import { readFastLines } from "./fast-lines.ts";
import { QUOTE, tokenIs } from "../codec/bytes.ts";
import { HASH_AFTER_TYPE, InlineRows, writerTypeToken, type TypeToken } from "../codec/writer-envelope.ts";
import { plainString } from "./fast-cells.ts";
import { RowTranscoder } from "./fast-json.ts";
import { LastText } from "./last-text.ts";
import { DISPLAY_FIELDS, EVENT_HASH_SLOT, type LoadedRow, READ_AREA } from "./fast-row.ts";
import { KernelRowReader, LONG_LINE_MAX, LongLineKernel } from "./kernel-row.ts";

/** How often the journal's size is looked at. */
export const FOLLOW_POLL_MS = 100;
/** A run whose process is gone is over once its journal stayed still this long. */
export const FOLLOW_QUIET_MS = 2000;
/** Complete lines already written from which catching up takes the fast passes (below, the kernels' set-up is not worth it). */
export const FOLLOW_FAST_BYTES = 1 << 20;
/**
 * Growth of the resident set after which the catch-up collects garbage.
 * Most rows leave no value behind (their lines are made from spans), so a
 * full collection every 16 MiB read, as the replay display does, costs
 * time on every journal; collecting on growth keeps the peak where that did.
 */
const CATCH_UP_GC_GROWTH = 4 << 20;
/** Events handed on between two `drain` calls while reading row by row. */
const DRAIN_EVENTS = 1024;

export type FollowEnd = "run_completed" | "run_gone" | "diverged" | "interrupted";

/** One verified event as it is handed on (valid during the call only). */
export interface FollowedEvent {
  /**
   * At least the fields the display reads (fast-row.ts DISPLAY_FIELDS), as
   * the whole row has them; but outside the envelope (always decoded:
   * pyjson/row.ts DECODED_KEYS) a string of a megabyte or more may still be
   * bytes (`PyRaw`): the display lays it out in pieces, any other reader
   * reads it through display.ts shownField.
   */
  readonly fields: PyObject;
  /** The spans of those fields in the row's bytes, when the display's kernel read it (null: read otherwise). */
  readonly loaded: LoadedRow | null;
  /**
   * How the row was read: by the display's kernel, on the codec's index (its
   * JSON alone), as its own bytes (its JSON alone: `verbatim`), or parsed whole.
   */
  readonly via: "kernel" | "codec" | "verbatim" | "whole";
  /** The whole row as `renderJson(row, null)` prints it, in UTF-8, appended to `out` (rendered there: no copy through a buffer of the event's own). */
  writeJson(out: OutBytes): void;
}

export interface FollowOptions {
  path: string;
  /** Whether the run's process is still there (the caller reads orchestrator.json). */
  runAlive: () => boolean;
  /** Each verified event in order: its 0-based index and physical line. */
  onEvent: (index: number, line: number, event: FollowedEvent) => void;
  /**
   * The events handed on so far may be written now: called after each read
   * of a catch-up, now and then while reading row by row, before waiting
   * for more, and before returning.
   */
  drain?: () => Promise<void> | void;
  signal: AbortSignal;
  quietMs?: number;
  /** Complete lines from which catching up takes the fast passes (default FOLLOW_FAST_BYTES; Infinity: row by row, the reference). */
  fastFrom?: number;
  /** The catch-up's verify: bytes verified so far of those it verifies (about every 250 ms), before any event is handed on. */
  onVerifyProgress?: (done: number, total: number) => void;
  /**
   * What the caller reads of each event: its display fields and JSON
   * (default), or its JSON alone, which lets the catch-up read each row
   * once, on the codec's index, with no display fields made.
   */
  wants?: "display" | "json";
}

export interface FollowResult {
  end: FollowEnd;
  verdict: JournalVerifyResult;
}

/** Offset just past the last line feed in [from, size), or `from` when there is none. */
function completeLinesEnd(path: string, from: number, size: number): number {
  const fd = openSync(path, "r");
  try {
    const buf = new Uint8Array(64 * 1024);
    for (let end = size; end > from; ) {
      const start = Math.max(from, end - buf.length);
      const n = readSync(fd, buf, 0, end - start, start);
      for (let i = n - 1; i >= 0; i--) if (buf[i] === 0x0a) return start + i + 1;
      end = start;
    }
    return from;
  } finally {
    closeSync(fd);
  }
}

/** The journal's size and last modification (ms since the epoch); 0 and 0 while there is none. */
function statOf(path: string): { size: number; mtimeMs: number } {
  try {
    const s = statSync(path);
    return { size: s.size, mtimeMs: s.mtimeMs };
  } catch {
    return { size: 0, mtimeMs: 0 };
  }
}

const encoder = new TextEncoder();

function append(out: OutBytes, bytes: Uint8Array): void {
  out.reserve(bytes.length);
  out.buf.set(bytes, out.len);
  out.len += bytes.length;
}

/** The exact reader's row of a line a fast reader took (`what`: which one, for the error should they disagree). */
function exactRow(line: Uint8Array, what: string): PyObject {
  const w = classifyLine(line);
  if (w.kind !== "row") throw new Error(`follow: a row the ${what} took is not a row to the exact reader`);
  return w.row;
}

/** The exact reader's JSON of a line a fast reader took. */
function exactJson(line: Uint8Array, what: string): Uint8Array {
  return encoder.encode(renderJson(exactRow(line, what), null));
}

/** An event as the catch-up hands it on: what the verdict needs of it besides. */
interface HandedRow extends FollowedEvent {
  /** Its event is `run_completed`. */
  completes(): boolean;
  /** Keep its event_hash in `last` (`inPlace`: its bytes lie in the read buffer, untouched until `last.settle`). */
  keepHash(last: LastText, inPlace: boolean): void;
}

/**
 * A row read whole (the exact reader's) as a FollowedEvent: its long
 * strings stay bytes (`rawStrings`; the display lays them out in pieces),
 * its JSON is written from them in pieces, so a huge row is never held as
 * text.
 */
class WholeRow implements HandedRow {
  fields: PyObject = new Map();
  /** The row's line's length: about its JSON's (room made for it at once, not doubled piece by piece). */
  lineBytes = 0;
  readonly loaded = null;
  readonly via = "whole";
  writeJson(out: OutBytes): void {
    out.reserve(this.lineBytes);
    renderRowInline(this.fields, (text) => {
      out.reserve(Buffer.byteLength(text));
      out.len += encoder.encodeInto(text, out.buf.subarray(out.len)).written;
    });
  }
  completes(): boolean {
    return this.fields.get("event") === "run_completed";
  }
  keepHash(last: LastText): void {
    last.keepValue(this.fields.get("event_hash"));
  }
}

/** The event token b[s, e) (s -1: none) of `row` is `run_completed`: as written, or as its value when spelled otherwise. */
function completesAt(b: Uint8Array, s: number, e: number, row: FollowedEvent): boolean {
  if (s < 0) return false;
  return plainString(b, s, e) ? tokenIs(b, s, e, RUN_COMPLETED) : row.fields.get("event") === "run_completed";
}

/** Keep `row`'s event_hash, the token b[s, e) (s -1: none), in `last`: its bytes where they can be, else its value. */
function keepHashAt(last: LastText, b: Uint8Array, s: number, e: number, inPlace: boolean, row: FollowedEvent): void {
  if (!last.keepSpan(b, s, e, inPlace)) last.keepValue(row.fields.get("event_hash"));
}

/**
 * A row the display's kernel read, the line b[s, e): its fields made only
 * when asked for, its JSON from its bytes (fast-json.ts), the row parsed
 * whole only where that declines.
 */
class KernelRow implements HandedRow {
  loaded: KernelRowReader | null = null;
  readonly via = "kernel";
  private b: Uint8Array = new Uint8Array(0);
  private s = 0;
  private e = 0;
  private made: PyObject | null = null;
  readonly tc = new RowTranscoder();

  at(r: KernelRowReader, b: Uint8Array, s: number, e: number): void {
    this.loaded = r;
    this.b = b;
    this.s = s;
    this.e = e;
    this.made = null;
  }

  get fields(): PyObject {
    return (this.made ??= this.loaded!.displayFields());
  }

  writeJson(out: OutBytes): void {
    // the kernel took the row: it fills the line (a CR before the line feed is the break's)
    const tc = this.tc;
    if (tc.index(this.b, this.s, contentEnd(this.b, this.s, this.e)) && tc.renderInlineTo(out)) return;
    append(out, exactJson(this.b.subarray(this.s, this.e), "kernel"));
  }

  completes(): boolean {
    const r = this.loaded!;
    return completesAt(r.mem, r.fieldS[EVENT_SLOT]!, r.fieldE[EVENT_SLOT]!, this);
  }

  keepHash(last: LastText, inPlace: boolean): void {
    const r = this.loaded!;
    keepHashAt(last, r.mem, r.fieldS[EVENT_HASH_SLOT]!, r.fieldE[EVENT_HASH_SLOT]!, inPlace, this);
  }
}

/**
 * A row read for its JSON alone (`wants: "json"`): indexed by the codec
 * (fast-json.ts), which locates its event and event_hash, and rendered from
 * that index where the caller collects its lines (the exact reader's JSON
 * where the render declines); its fields only if asked for, from the row
 * parsed whole.
 */
class JsonRow implements HandedRow {
  readonly loaded = null;
  readonly via = "codec";
  private b: Uint8Array = new Uint8Array(0);
  private s = 0;
  private e = 0;
  private readonly span = { start: -1, end: -1, flags: 0 };

  constructor(private readonly tc: RowTranscoder) {}

  /** The line b[s, e) indexed; false (nothing taken) when the codec declines it. */
  take(b: Uint8Array, s: number, line: number): boolean {
    // a CR before the line feed is the break's (a journal Python wrote on Windows)
    const e = contentEnd(b, s, line);
    if (!this.tc.index(b, s, e, RUN_ROW_KEYS)) return false;
    this.b = b;
    this.s = s;
    this.e = e;
    return true;
  }

  get fields(): PyObject {
    return exactRow(this.b.subarray(this.s, this.e), "codec");
  }

  writeJson(out: OutBytes): void {
    if (!this.tc.renderInlineTo(out)) append(out, exactJson(this.b.subarray(this.s, this.e), "codec"));
  }

  completes(): boolean {
    const sp = this.span;
    this.tc.valueSpan(RunKey.Event, sp);
    return completesAt(this.b, sp.start, sp.end, this);
  }

  keepHash(last: LastText, inPlace: boolean): void {
    const sp = this.span;
    this.tc.valueSpan(RunKey.EventHash, sp);
    keepHashAt(last, this.b, sp.start, sp.end, inPlace, this);
  }
}

const RUN_COMPLETED = encoder.encode("run_completed");

/**
 * A row the verify kernel took, the line b[s, e), as its own JSON when it
 * is (codec/writer-envelope.ts InlineRows); any other row is left to the
 * codec, whose render writes the characters Python escapes (measured:
 * turning the escapes into UTF-8 here, a piece at a time, was slower than
 * the codec on rows dense with them). Its event and event_hash are located
 * in the writer's envelope.
 */
class VerbatimRow implements HandedRow {
  readonly loaded = null;
  readonly via = "verbatim";
  private b: Uint8Array = new Uint8Array(0);
  private bytes: Buffer = Buffer.alloc(0);
  private s = 0;
  private e = 0;
  private readonly type: TypeToken = { start: 0, end: 0 };
  private hashS = 0;
  private readonly inline = new InlineRows();

  /** The next read's rows are in the buffer: what was found in it before is stale. */
  newRead(): void {
    this.inline.reset();
  }

  /** The line b[s, line) (a row the verify kernel took), as its own JSON; false when it cannot be (nothing taken). */
  take(b: Uint8Array, s: number, line: number): boolean {
    if (b !== this.b) {
      this.b = b;
      this.bytes = Buffer.from(b.buffer, b.byteOffset, b.length);
      this.newRead();
    }
    const e = contentEnd(b, s, line);
    if (!this.inline.isInline(this.bytes, s, e) || !this.envelope(s, e)) return false;
    this.s = s;
    this.e = e;
    return true;
  }

  /** The event's token and the event_hash's, in the writer's envelope of the row at s (codec/writer-envelope.ts). */
  private envelope(s: number, e: number): boolean {
    const type = this.type;
    if (!writerTypeToken(this.bytes, s, type) || type.end > e) return false;
    const h = type.end + HASH_AFTER_TYPE;
    if (h + 66 > e || this.b[h] !== QUOTE || this.b[h + 65] !== QUOTE) return false;
    this.hashS = h;
    return true;
  }

  get fields(): PyObject {
    return exactRow(this.b.subarray(this.s, this.e), "verify kernel");
  }

  writeJson(out: OutBytes): void {
    const n = this.e - this.s;
    out.reserve(n);
    this.bytes.copy(out.buf, out.len, this.s, this.e);
    out.len += n;
  }

  completes(): boolean {
    return completesAt(this.b, this.type.start, this.type.end, this);
  }

  keepHash(last: LastText, inPlace: boolean): void {
    keepHashAt(last, this.b, this.hashS, this.hashS + 66, inPlace, this);
  }
}

const EVENT_SLOT = DISPLAY_FIELDS.indexOf("event");

/** What follow knows of the chain so far: the walk, the lines it could not read, the last physical line. */
class FollowState {
  readonly walker = new EventChainWalker();
  readonly discarded: number[] = [];
  lastLine: LastLine | null = null;
  constructor(readonly path: string) {}

  verdict(): JournalVerifyResult {
    return chainVerdict({ path: this.path, exists: true, walk: this.walker, discarded: this.discarded, lastLine: this.lastLine });
  }
}

export async function followJournal(o: FollowOptions): Promise<FollowResult> {
  const state = new FollowState(o.path);
  const quietMs = o.quietMs ?? FOLLOW_QUIET_MS;
  const ended = async (end: FollowEnd): Promise<FollowResult> => {
    await o.drain?.();
    return { end, verdict: state.verdict() };
  };
  const first = statOf(o.path);
  // the journal last changed at its modification time: a run long gone is over once the follow caught up
  let stillSince = 0;
  let offset = 0;
  let lineBase = 0;
  const fastFrom = o.fastFrom ?? FOLLOW_FAST_BYTES;
  const fastEnd = first.size >= fastFrom ? completeLinesEnd(o.path, 0, first.size) : 0;
  if (fastEnd > 0 && fastEnd >= fastFrom) {
    const caught = await catchUp(o, state, fastEnd);
    if (caught !== null && caught !== "declined") return ended(caught);
    if (caught === null) {
      offset = fastEnd;
      lineBase = state.lastLine === null ? 0 : state.lastLine.index + 1;
    }
  }
  const walker = state.walker;
  const row = new WholeRow();
  // catching up row by row is one synchronous read: a turn of the event loop now and then lets a signal in
  const turns = new TurnPacer(100, 256);
  let handed = 0;
  for (;;) {
    const { size, mtimeMs } = statOf(o.path);
    // still since its last write (a future time, a clock set back: from now)
    stillSince = Math.max(stillSince, Math.min(Date.now(), mtimeMs));
    const end = size > offset ? completeLinesEnd(o.path, offset, size) : offset;
    if (end > offset) {
      let lines = 0;
      for (const pl of physicalLines(o.path, { startOffset: offset, endOffset: end, maxLineBytes: JOURNAL_MAX_ROW_BYTES })) {
        lines = pl.index + 1;
        const line = lineBase + pl.index;
        state.lastLine = { index: line, start: pl.start, terminated: pl.terminated };
        // a huge row's long strings stay bytes (WholeRow): hashed and written from them
        const v = classifyLine(pl.bytes, JOURNAL_MAX_ROW_BYTES, pl.owned, RAW_STRING_MIN);
        if (v.kind === "blank") continue;
        if (v.kind === "discarded") {
          state.discarded.push(line);
          return ended("diverged");
        }
        const index = walker.count;
        walker.push(v.row, line);
        if (walker.divergence !== null) return ended("diverged");
        row.fields = v.row;
        row.lineBytes = pl.bytes.length;
        o.onEvent(index, line, row);
        if (row.completes()) return ended("run_completed");
        if (turns.due()) {
          // the rows read exactly are garbage the engine collects late: collected at each turn, the peak stays lower
          Bun.gc(true);
          await o.drain?.();
          await nextTurn();
        } else if (++handed % DRAIN_EVENTS === 0) await o.drain?.();
        if (o.signal.aborted) return ended("interrupted");
      }
      offset = end;
      lineBase += lines;
      continue;
    }
    await o.drain?.();
    if (o.signal.aborted) return ended("interrupted");
    if (!o.runAlive() && Date.now() - stillSince >= quietMs) return ended("run_gone");
    await sleepUnlessAborted(FOLLOW_POLL_MS, o.signal);
  }
}

/**
 * The fast catch-up over the complete lines [0, end): null when every row
 * there was verified and handed on (`state` then stands at `end`), how the
 * follow ended when it ended there, or "declined" (nothing handed on,
 * `state` untouched) when the bytes are not a clean chain: the row-by-row
 * read from the top then says exactly where and why.
 */
async function catchUp(o: FollowOptions, state: FollowState, end: number): Promise<FollowEnd | "declined" | null> {
  let v: FastVerifyResult;
  try {
    // one thread: it yields between ranges, where the signal is looked at; the row limit the row-by-row read has
    v = await verifyJournalFast(o.path, { endOffset: end, threads: 1, signal: o.signal, maxRowBytes: JOURNAL_MAX_ROW_BYTES, onProgress: o.onVerifyProgress });
  } catch (err) {
    if (err instanceof VerifyAborted) return "interrupted";
    return "declined";
  }
  if (!v.ok || v.count === 0 || v.discarded_line_indices.length > 0 || v.lastLine === null || v.snapshot_bytes !== end) return "declined";
  const jsonOnly = o.wants === "json";
  // the display's kernel reads the rows in place when their fields are wanted; for their JSON alone, a plain buffer
  const k = jsonOnly ? null : new KernelRowReader();
  const readBuffer = k?.readBuffer ?? new Uint8Array(READ_AREA + 8);
  const holds = (b: Uint8Array): boolean => b.buffer === readBuffer.buffer && b.byteOffset === readBuffer.byteOffset;
  const copies = new LongLineKernel();
  const kernelRow = new KernelRow();
  const jsonRow = new JsonRow(kernelRow.tc);
  // the rows the verify kernel took as written are their own JSON (VerbatimRow): all but those it declined
  const declinedAt = jsonOnly && v.rows_by_path.declined_at !== null ? new Set(v.rows_by_path.declined_at) : null;
  const verbatim = new VerbatimRow();
  const whole = new WholeRow();
  const head = new LastText();
  const gc = new GrowthCollector(CATCH_UP_GC_GROWTH);
  let n = 0;
  let completed = false;
  let stopped = false;
  /** The last row's physical line (0-based) and its offset. */
  let lastLine = -1;
  let lastAt = 0;
  /**
   * Hand on the next row (verified above), on physical line `lineNo`
   * (1-based) at file offset `at`; `inPlace`: its bytes lie in the read buffer.
   */
  const hand = (ev: HandedRow, lineNo: number, at: number, inPlace: boolean): true => {
    if (n >= v.count) throw changed(o.path, v);
    const index = n++;
    lastLine = lineNo - 1;
    lastAt = at;
    ev.keepHash(head, inPlace);
    o.onEvent(index, lineNo - 1, ev);
    completed = ev.completes();
    return true;
  };
  /** The line b[s, e) for its JSON alone: its own bytes where the verify kernel took it as written (VerbatimRow), else the codec's. */
  const asJson = (b: Uint8Array, s: number, e: number, lineNo: number, at: number, inPlace: boolean): boolean => {
    if (declinedAt !== null && !declinedAt.has(at) && verbatim.take(b, s, e)) return hand(verbatim, lineNo, at, inPlace);
    return jsonRow.take(b, s, e) && hand(jsonRow, lineNo, at, inPlace);
  };
  const taken = (r: KernelRowReader, b: Uint8Array, s: number, e: number, lineNo: number, at: number): true => {
    kernelRow.at(r, b, s, e);
    return hand(kernelRow, lineNo, at, r === k);
  };
  for (const _ of readFastLines(o.path, {
    buffer: readBuffer,
    endOffset: end,
    // collected after lines the exact reader took; the rest as the resident set grows (below)
    gcEvery: Infinity,
    // a huge row's long strings stay bytes (WholeRow)
    rawStrings: true,
    fast: (b, s, e, lineNo, at) => {
      if (jsonOnly) return asJson(b, s, e, lineNo, at, holds(b));
      if (k === null || !k.holds(b)) {
        const r = copies.take(b.subarray(s, e));
        return r !== null && taken(r, b, s, e, lineNo, at);
      }
      // the fingerprint text the kernel appends is not wanted here
      k.clear();
      return k.take(s, e) && taken(k, b, s, e, lineNo, at);
    },
    long: (bytes, lineNo, at) => {
      // a longer line takes the exact path, which keeps a huge row's large values as bytes (WholeRow)
      if (bytes.length > LONG_LINE_MAX) return false;
      if (jsonOnly) return asJson(bytes, 0, bytes.length, lineNo, at, false);
      const r = copies.take(bytes);
      return r !== null && taken(r, bytes, 0, bytes.length, lineNo, at);
    },
    exact: (w, bytes, lineNo, at) => {
      if (w.kind !== "row") throw changed(o.path, v);
      whole.fields = w.row;
      whole.lineBytes = bytes.length;
      hand(whole, lineNo, at, false);
    },
    done: () => completed || stopped,
  })) {
    // the chunk's rows are done: the last one's hash leaves the read buffer before the next read
    head.settle();
    verbatim.newRead();
    // the values of rows the display makes whole (cells it cannot take from spans) are garbage the engine collects late
    gc.poll();
    await o.drain?.();
    await nextTurn();
    if (o.signal.aborted) stopped = true;
  }
  if (completed || stopped) {
    // the rows handed on were verified: the verdict stands at the last of them
    state.walker.count = n;
    state.walker.prefixHead = head.value();
    if (n > 0) state.lastLine = { index: lastLine, start: lastAt, terminated: true };
    return completed ? "run_completed" : "interrupted";
  }
  // the same rows as verified, ending at the same head: the bytes read are the bytes verified
  if (n !== v.count || head.value() !== v.head) throw changed(o.path, v);
  state.walker.count = v.count;
  state.walker.prefixHead = v.head;
  state.lastLine = v.lastLine;
  return null;
}

function changed(path: string, v: FastVerifyResult): InputError {
  return new InputError("journal_changed", `the journal changed between the verify and the read of its ${v.count} rows; retry with no writer active`, { path });
}

/** Sleep `ms`, or less when `signal` aborts meanwhile. */
export function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}
