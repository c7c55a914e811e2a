import { COLON, COMMA, copyTo, QUOTE, RBRACE, SPACE } from "../../codec/bytes.ts";
import { CanonicalWriter } from "../../codec/canonical.ts";
import { indexObjectAt, indexObjectAtJs, NOT_DEFAULT_SPACING, RowIndex, Spell, Tok } from "../../codec/row-index.ts";
import { RUN_ROW_KEYS, RunKey } from "../row-keys.ts";
import { RecordHasher, writeDecimal, writeHex } from "./record-hasher.ts";
import { fastFloatRepr } from "./record-row.ts";

/**
 * `journal record` from stdin at byte level: an input line
 * `{"event": T, "k": v, ...}` in json.dumps spelling (what a Python
 * producer writes, with any whitespace between tokens) becomes its journal
 * row without decoding a string or building a Map. The line is read once,
 * by the codec (src/codec/row-index.ts), into an index; both outputs are
 * written from the index:
 *
 *   payload pre-image = the input's members (with "event"), sorted, compact;
 *                       nested objects sorted too;
 *   row               = envelope, then the members in input order with
 *                       json.dumps' default ", " / ": " separators.
 *
 * Tokens are copied as written, so the index must say each is Python's
 * spelling. Anything else is refused (false) and the caller takes the exact
 * path (parse, validate, encode), which also makes the proper errors: raw
 * UTF-8, foreign spellings (the index's flags), a duplicate
 * key at any depth (the exact path keeps the last), any envelope key or
 * `hash_profile` among the members, an empty or non-string event type.
 */

const enc = new TextEncoder();
const LINE_ENCODER = new TextEncoder();
const P_TS = enc.encode('{"ts": ');
const P_ELAPSED = enc.encode(', "elapsed_s": ');
const P_INDEX = enc.encode(', "index": ');
const P_EVENT = enc.encode(', "event": ');
const P_PREV = enc.encode(', "prev_hash": "');
const P_PH = enc.encode('", "payload_hash": "');
const P_EH = enc.encode('", "event_hash": "');

/** An input line's named keys (RUN_ROW_KEYS): every one but `event` is one it may not hold on this path (the envelope the writer computes, and hash_profile). */
const EVENT_ID = RunKey.Event;
/** Spellings a token copied into the pre-image or the row may not have (floats are decided first). */
const NOT_PYTHON = Spell.Utf8 | Spell.NotPython;
/**
 * Input lines at least this long may go to the codec's WebAssembly scanner
 * (indexObjectAt); shorter ones, the common event, to its JavaScript one:
 * a run of short events then never compiles the module, which would page
 * in the engine's WebAssembly compiler (megabytes of resident code) for a
 * scan the JavaScript one does about as fast on such lines.
 */
const MODULE_FROM = 8 << 10;

/**
 * Python's repr of the float x at b[o]; returns the end. A value with at
 * most three decimals (the writer's elapsed_s, `round(…, 3)`) is written
 * from the integer k = x * 1000: the decimal k/1000 has at most 15
 * significant digits, so it is the only such decimal that reads back as x,
 * and repr's shortest round-trip digits are its own (trailing zeros
 * dropped, one kept), in fixed notation. Any other value takes
 * fastFloatRepr (the engine's shortest digits; `ts` is full precision).
 */
export function writeFloatRepr(b: Uint8Array, o: number, x: number): number {
  const k = Math.round(x * 1000);
  if (k > 0 && k < 1e15 && k / 1000 === x) {
    const whole = Math.floor(k / 1000);
    const frac = k - whole * 1000;
    o = writeDecimal(b, o, whole);
    b[o++] = 0x2e;
    const d1 = Math.floor(frac / 100);
    const d2 = Math.floor(frac / 10) - d1 * 10;
    const d3 = frac % 10;
    b[o++] = 0x30 + d1;
    if (d2 !== 0 || d3 !== 0) b[o++] = 0x30 + d2;
    if (d3 !== 0) b[o++] = 0x30 + d3;
    return o;
  }
  const text = fastFloatRepr(x);
  for (let i = 0; i < text.length; i++) b[o++] = text.charCodeAt(i);
  return o;
}

export class RecordRowBuilder {
  /** The memory (read area, pre-images, and the row area at its rowBase) and the hashes. */
  private readonly h: RecordHasher;
  private readonly ix = new RowIndex();
  /** The payload pre-image's writer, over the same memory. */
  private readonly cw: CanonicalWriter;
  private hasHead = false;
  /** End of the rows built so far in the row area (the batch to write). */
  private rowEnd = 0;

  /**
   * Rows accumulate in the row area until the writer takes the batch:
   * `batchBytes` plus room for one more row of the longest input line.
   */
  constructor(
    readCap = 1 << 16,
    readonly batchBytes = 1 << 20,
  ) {
    this.h = new RecordHasher(readCap, batchBytes + 2 * readCap + 4096);
    this.cw = new CanonicalWriter(this.ix, this.h.mem, this.h.dv);
    this.rowEnd = this.h.rowBase;
  }

  /** Bytes of rows waiting to be written. */
  batchLength(): number {
    return this.rowEnd - this.h.rowBase;
  }

  /** The rows built since the last reset (a view: write it before building more). */
  batchView(): Uint8Array {
    return this.h.mem.subarray(this.h.rowBase, this.rowEnd);
  }

  resetBatch(): void {
    this.rowEnd = this.h.rowBase;
  }

  /** Append a line built elsewhere (the generic path), keeping the batch in chain order. */
  appendLine(line: string): void {
    const room = this.h.rowBase + this.h.rowCap - this.rowEnd;
    const r = LINE_ENCODER.encodeInto(line, this.h.mem.subarray(this.rowEnd, this.rowEnd + room));
    if (r.read !== line.length) throw new Error("record batch overflow");
    this.rowEnd += r.written;
  }

  /** Room for one more row of any size this builder takes, plus `extra` bytes of text? */
  hasRoomFor(extraBytes: number): boolean {
    return this.h.rowBase + this.h.rowCap - this.rowEnd >= Math.max(extraBytes, 2 * this.h.readCap + 2048);
  }

  /** Largest input line this builder takes (longer lines take the exact path). */
  get maxLine(): number {
    return this.h.readCap - 8;
  }

  /** Continue the chain from `head` ("" = genesis): 64 hex characters or nothing. */
  setHead(head: string): void {
    this.hasHead = head.length > 0;
    if (this.hasHead) for (let i = 0; i < 64; i++) this.h.mem[this.h.prevHex + i] = head.charCodeAt(i);
  }

  /** The head after the last built row. */
  head(): string {
    if (!this.hasHead) return "";
    let t = "";
    for (let i = 0; i < 64; i++) t += String.fromCharCode(this.h.mem[this.h.prevHex + i]!);
    return t;
  }

  /**
   * Build the row for input line `line` at chain position `index`; false
   * when the line is not in fast form (nothing changed). On success the row
   * (with its "\n") is appended to the batch, and the head has advanced.
   */
  build(line: Uint8Array, index: number, ts: number, elapsed: number): boolean {
    const n = line.length;
    if (n > this.maxLine || n < 2) return false;
    const h = this.h;
    const ix = this.ix;
    h.mem.set(line, 0);
    const end = n < MODULE_FROM ? indexObjectAtJs(h.mem, 0, n, ix, RUN_ROW_KEYS) : indexObjectAt(h.mem, 0, n, ix, RUN_ROW_KEYS);
    if (end !== n || !this.takes()) return false;
    const o = this.preImage(h.outBase);
    if (o < 0) return false;
    h.outLen = o - h.outBase;
    const type = ix.valueOf(EVENT_ID);
    h.typeStart = ix.start(type);
    h.typeEnd = ix.end(type);
    // chain: prev = our head (prevHex slot), payload hash, event hash
    h.prevStart = h.prevHex;
    h.prevEnd = this.hasHead ? h.prevHex + 64 : h.prevHex;
    h.hashPayload();
    if (!h.hashEvent(index)) return false;
    this.writeRow(index, ts, elapsed);
    h.advance();
    this.hasHead = true;
    return true;
  }

  /** The indexed line is one this path writes: Python's spelling, one non-empty string "event", no other envelope key. */
  private takes(): boolean {
    const ix = this.ix;
    if ((ix.spelling(0) & NOT_PYTHON) !== 0 || ix.repeatedName) return false;
    for (let m = 0; m < ix.members; m++) if (ix.keyId[m]! > EVENT_ID) return false;
    const type = ix.valueOf(EVENT_ID);
    // an empty event type is refused by the exact path
    return type >= 0 && ix.kind(type) === Tok.String && ix.end(type) - ix.start(type) > 2;
  }

  /** The payload pre-image at o: every top-level member, sorted by key, compact. Returns its end, or -1 (a duplicate key). */
  private preImage(o: number): number {
    const ix = this.ix;
    const n = ix.members;
    const cw = this.cw;
    const order = cw.segment(0, n);
    for (let m = 0; m < n; m++) order[m] = ix.member[m]!;
    if (!cw.sortKeys(0, n)) return -1;
    return cw.members(0, n, o);
  }

  /** Copy mem[s, e) to o; returns the end. */
  private copy(s: number, e: number, o: number): number {
    return this.cw.copy(s, e, o);
  }

  private put(o: number, bytes: Uint8Array): number {
    return copyTo(bytes, 0, bytes.length, this.h.mem, o);
  }

  /** The row line: envelope, then the input members but "event" in order, default separators. */
  private writeRow(index: number, ts: number, elapsed: number): void {
    const h = this.h;
    const ix = this.ix;
    const b = h.mem;
    let o = this.rowEnd;
    o = this.put(o, P_TS);
    o = writeFloatRepr(b, o, ts);
    o = this.put(o, P_ELAPSED);
    o = writeFloatRepr(b, o, elapsed);
    o = this.put(o, P_INDEX);
    // hashEvent prepared the index's digits for the event pre-image
    o = h.putIndex(o);
    o = this.put(o, P_EVENT);
    o = this.copy(h.typeStart, h.typeEnd, o);
    o = this.put(o, P_PREV);
    if (h.prevEnd > h.prevStart) o = this.copy(h.prevStart, h.prevStart + 64, o);
    o = this.put(o, P_PH);
    o = writeHex(h.dv, o, h.payloadDigest);
    o = this.put(o, P_EH);
    o = this.copy(h.curHex, h.curHex + 64, o);
    b[o++] = QUOTE;
    const tape = ix.tape;
    if ((tape[0]! & NOT_DEFAULT_SPACING) === 0) {
      // The line is in json.dumps' default spacing throughout: each run of members
      // between "event"s is the line's own bytes, ", " before each.
      for (let m = 0; m < ix.members; m++) {
        if (ix.keyId[m] === EVENT_ID) continue;
        let last = m;
        while (last + 1 < ix.members && ix.keyId[last + 1] !== EVENT_ID) last++;
        b[o++] = COMMA;
        b[o++] = SPACE;
        o = this.copy(tape[4 * ix.member[m]! + 1]!, tape[4 * (ix.member[last]! + 1) + 2]!, o);
        m = last;
      }
    } else {
      for (let m = 0; m < ix.members; m++) {
        if (ix.keyId[m] === EVENT_ID) continue;
        const k = ix.member[m]!;
        b[o++] = COMMA;
        b[o++] = SPACE;
        o = this.copy(tape[4 * k + 1]!, tape[4 * k + 2]!, o);
        b[o++] = COLON;
        b[o++] = SPACE;
        o = this.cw.spaced(k + 1, o);
      }
    }
    b[o++] = RBRACE;
    b[o++] = 10;
    this.rowEnd = o;
  }
}
