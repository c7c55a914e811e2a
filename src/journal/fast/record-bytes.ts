import { BACKSLASH, COLON, COMMA, LBRACE, LBRACKET, QUOTE, RBRACE, skipBlanks, SPACE, TAB } from "../../codec/bytes.ts";
import { CanonicalEmitter, copyBytes, envelopeKind, Key, scanCanonicalString, scanPlainKey, writeHex } from "./emitter.ts";

/**
 * `journal record` from stdin at byte level: an input line
 * `{"event": T, "k": v, ...}` already in json.dumps spelling (what a
 * Python producer writes) becomes its journal row without decoding a
 * string or building a Map:
 *
 *   payload pre-image = the input's members plus "event", sorted, compact
 *                       (the canonical emitter, emitter.ts);
 *   row               = envelope, then the members in input order with
 *                       json.dumps' default ", " / ": " separators.
 *
 * Anything else — non-ASCII bytes, foreign spellings, duplicate keys,
 * payload keys that overwrite or collide with envelope fields, a
 * `hash_profile` — is refused (false) and the caller takes the exact path
 * (parse, validate, encode), which also produces the proper errors.
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

export class RecordRowBuilder {
  /** The memory (read area, pre-images, and the row area at its rowBase) and the canonical re-emission. */
  private readonly em: CanonicalEmitter;
  // input-order members (the row keeps the producer's order)
  private rKeyS = new Int32Array(1024);
  private rKeyE = new Int32Array(1024);
  private rValS = new Int32Array(1024);
  private rValE = new Int32Array(1024);
  private rCount = 0;
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
    this.em = new CanonicalEmitter(readCap, batchBytes + 2 * readCap + 4096);
    this.rowEnd = this.em.rowBase;
  }

  /** Bytes of rows waiting to be written. */
  batchLength(): number {
    return this.rowEnd - this.em.rowBase;
  }

  /** The rows built since the last reset (a view: write it before building more). */
  batchView(): Uint8Array {
    return this.em.mem.subarray(this.em.rowBase, this.rowEnd);
  }

  resetBatch(): void {
    this.rowEnd = this.em.rowBase;
  }

  /** Append a line built elsewhere (the generic path), keeping the batch in chain order. */
  appendLine(line: string): void {
    const room = this.em.rowBase + this.em.rowCap - this.rowEnd;
    const r = LINE_ENCODER.encodeInto(line, this.em.mem.subarray(this.rowEnd, this.rowEnd + room));
    if (r.read !== line.length) throw new Error("record batch overflow");
    this.rowEnd += r.written;
  }

  /** Room for one more row of any size this builder takes, plus `extra` bytes of text? */
  hasRoomFor(extraBytes: number): boolean {
    return this.em.rowBase + this.em.rowCap - this.rowEnd >= Math.max(extraBytes, 2 * this.em.readCap + 2048);
  }

  /** Largest input line this builder takes (longer lines take the exact path). */
  get maxLine(): number {
    return this.em.readCap - 8;
  }

  /** Continue the chain from `head` ("" = genesis): 64 hex characters or nothing. */
  setHead(head: string): void {
    this.hasHead = head.length > 0;
    if (this.hasHead) for (let i = 0; i < 64; i++) this.em.mem[this.em.prevHex + i] = head.charCodeAt(i);
  }

  /** The head after the last built row. */
  head(): string {
    if (!this.hasHead) return "";
    let t = "";
    for (let i = 0; i < 64; i++) t += String.fromCharCode(this.em.mem[this.em.prevHex + i]!);
    return t;
  }

  /**
   * Build the row for input line `line` at chain position `index`; false
   * when the line is not in fast form (nothing changed). On success the row
   * (with its "\n") is appended to the batch, and the head has advanced.
   */
  build(line: Uint8Array, index: number, tsText: string, elapsedText: string): boolean {
    const n = line.length;
    if (n > this.maxLine || n < 2) return false;
    const em = this.em;
    em.mem.set(line, 0);
    em.mem[n] = 10; // sentinel
    if (!this.scanInput(0, n)) return false;
    // chain: prev = our head (prevHex slot), payload hash, event hash
    em.prevStart = em.prevHex;
    em.prevEnd = this.hasHead ? em.prevHex + 64 : em.prevHex;
    em.hashPayload();
    if (!em.hashEvent(index)) return false;
    this.writeRow(index, tsText, elapsedText);
    em.advance();
    this.hasHead = true;
    return true;
  }

  /** Validate an input event line and assemble its payload pre-image. */
  private scanInput(s: number, e: number): boolean {
    const em = this.em;
    const b = em.mem;
    const dv = em.dv;
    let p = s;
    if (b[p] !== LBRACE) return false;
    p = skipBlanks(b, p + 1);
    if (b[p] === RBRACE) return false;
    em.begin();
    this.rCount = 0;
    let eventKeyS = -1;
    for (;;) {
      if (b[p] !== QUOTE) return false;
      const ks = p + 1;
      const ke = scanPlainKey(b, dv, ks);
      if (ke < 0) return false;
      p = skipBlanks(b, ke + 1);
      if (b[p] !== COLON) return false;
      p = skipBlanks(b, p + 1);
      const kind = envelopeKind(b, ks, ke);
      if (kind === Key.Event) {
        if (eventKeyS >= 0 || b[p] !== QUOTE) return false;
        const q = scanCanonicalString(b, dv, p + 1);
        if (q < 0 || q === p + 1) return false; // an empty event type is refused by the exact path
        em.typeStart = p;
        em.typeEnd = q + 1;
        eventKeyS = ks;
        p = q + 1;
      } else if (kind !== Key.Payload) {
        return false; // envelope overwrite, chain field or hash_profile: exact path decides
      } else {
        const r = this.rCount++;
        if (r >= this.rKeyS.length) return false;
        this.rKeyS[r] = ks;
        this.rKeyE[r] = ke;
        this.rValS[r] = p;
        p = em.member(p, ks, ke, 0);
        if (p < 0) return false;
        this.rValE[r] = p;
      }
      p = skipBlanks(b, p);
      const d = b[p];
      if (d === COMMA) {
        p = skipBlanks(b, p + 1);
        continue;
      }
      if (d !== RBRACE) return false;
      p++;
      break;
    }
    if (p !== e || eventKeyS < 0) return false;
    // duplicate keys (the exact path applies last-wins) and oversize pre-images are refused here
    return em.finishPayload(eventKeyS);
  }

  private put(o: number, bytes: Uint8Array): number {
    const b = this.em.mem;
    for (let i = 0; i < bytes.length; i++) b[o++] = bytes[i]!;
    return o;
  }

  private putText(o: number, text: string): number {
    const b = this.em.mem;
    for (let i = 0; i < text.length; i++) b[o++] = text.charCodeAt(i);
    return o;
  }

  /** The row line: envelope, then the input members in order, default separators. */
  private writeRow(index: number, tsText: string, elapsedText: string): void {
    const em = this.em;
    const b = em.mem;
    const dv = em.dv;
    let o = this.rowEnd;
    o = this.put(o, P_TS);
    o = this.putText(o, tsText);
    o = this.put(o, P_ELAPSED);
    o = this.putText(o, elapsedText);
    o = this.put(o, P_INDEX);
    o = this.putText(o, String(index));
    o = this.put(o, P_EVENT);
    copyBytes(b, dv, o, em.typeStart, em.typeEnd - em.typeStart);
    o += em.typeEnd - em.typeStart;
    o = this.put(o, P_PREV);
    if (em.prevEnd > em.prevStart) {
      copyBytes(b, dv, o, em.prevStart, 64);
      o += 64;
    }
    o = this.put(o, P_PH);
    o = writeHex(dv, o, em.payloadDigest);
    o = this.put(o, P_EH);
    copyBytes(b, dv, o, em.curHex, 64);
    o += 64;
    b[o++] = QUOTE;
    for (let r = 0; r < this.rCount; r++) {
      b[o++] = COMMA;
      b[o++] = SPACE;
      const k0 = this.rKeyS[r]! - 1;
      const k1 = this.rKeyE[r]! + 1;
      copyBytes(b, dv, o, k0, k1 - k0);
      o += k1 - k0;
      b[o++] = COLON;
      b[o++] = SPACE;
      const v0 = this.rValS[r]!;
      const v1 = this.rValE[r]!;
      const c = b[v0];
      if (c === LBRACE || c === LBRACKET) o = this.respace(o, v0, v1);
      else {
        copyBytes(b, dv, o, v0, v1 - v0);
        o += v1 - v0;
      }
    }
    b[o++] = RBRACE;
    b[o++] = 10;
    this.rowEnd = o;
  }

  /**
   * Copy a validated compound value in json.dumps' default layout: tokens
   * as written (they are canonical), whitespace dropped, ", " and ": "
   * between them, member order kept.
   */
  private respace(o: number, s: number, e: number): number {
    const b = this.em.mem;
    for (let p = s; p < e; p++) {
      const c = b[p]!;
      if (c === QUOTE) {
        b[o++] = c;
        for (p++; ; p++) {
          const d = b[p]!;
          b[o++] = d;
          if (d === BACKSLASH) {
            b[o++] = b[++p]!;
          } else if (d === QUOTE) {
            break;
          }
        }
      } else if (c === SPACE || c === TAB) {
        continue;
      } else if (c === COMMA || c === COLON) {
        b[o++] = c;
        b[o++] = SPACE;
      } else {
        b[o++] = c;
      }
    }
    return o;
  }
}
