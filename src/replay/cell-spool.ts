import { closeSync, readSync, writeSync } from "node:fs";
import { openAnonymousFile } from "../fsutil/anonymous-file.ts";
import type { PyObject } from "../pyjson/types.ts";
import type { CellSpans, RowCells } from "./fast-cells.ts";
import { copyTo } from "../codec/bytes.ts";
import { DISPLAY_FIELDS, EVENT_HASH_SLOT, type LoadedRow, valueAt } from "./fast-row.ts";

/**
 * What the scan pass of `replay <RUN_ID>` leaves for the table pass, so the
 * table is laid out without reading the journal again: per row read, in
 * order, one record in an anonymous temporary file (fsutil/anonymous-file.ts:
 * unlinked as soon as it is made, so nothing is left behind, and
 * memory stays one buffer whatever the journal's size). A record is
 *
 *  - Time / Ts: the row's plain cells (RowCells), TIME as text, or (Ts) as
 *    the row's `ts` lexeme, made text once the time base is known;
 *  - Fields: a loaded row whose cells are not plain: its display fields'
 *    bytes (canonical JSON values), shown through displayRow;
 *  - Exact: any other row: where its line is in the journal, re-read and
 *    parsed by the exact reader.
 *
 * Every record keeps its line's offset and length, so a row whose TIME
 * turns out not to be plain is re-read too. Layout (little-endian):
 * u32 record length, u8 kind, f64 line offset, u32 line length, then the
 * cells (Time, Ts: TIME EVENT AGENT TASK DETAIL) or the display fields
 * but event_hash (Fields), each a u32 length (ABSENT: no such member) and
 * its bytes. A failed write (a full disk) marks the spool broken: the table
 * pass then reads the journal as it would without one.
 */
export const enum SpoolKind {
  Time = 0,
  Ts = 1,
  Fields = 2,
  Exact = 3,
}

const HEAD = 4 + 1 + 8 + 4;
const ABSENT = 0xffffffff;
const BUFFER = 1 << 20;

export class CellSpool {
  private buf = new Uint8Array(BUFFER);
  private dv = new DataView(this.buf.buffer);
  private pos = 0;
  private fileSize = 0;
  private closed = false;
  /** A write failed: the spool does not hold every row. */
  broken = false;

  private constructor(private readonly fd: number) {}

  /** A new spool, or null when no temporary file can be made (the table pass then reads the journal). */
  static open(): CellSpool | null {
    try {
      return new CellSpool(openAnonymousFile("cells"));
    } catch {
      return null;
    }
  }

  /** The plain cells of the row on the line at `offset` (`length` bytes). */
  cells(c: RowCells, offset: number, length: number): void {
    const n = HEAD + 20 + (c.timeE - c.timeS) + (c.eventE - c.eventS) + (c.agentE - c.agentS) + (c.taskE - c.taskS) + (c.detailE - c.detailS);
    let p = this.begin(n, c.tsPending ? SpoolKind.Ts : SpoolKind.Time, offset, length);
    if (p < 0) return;
    p = this.span(p, c.timeB, c.timeS, c.timeE);
    p = this.span(p, c.eventB, c.eventS, c.eventE);
    p = this.span(p, c.agentB, c.agentS, c.agentE);
    p = this.span(p, c.taskB, c.taskS, c.taskE);
    this.pos = this.span(p, c.detailB, c.detailS, c.detailE);
  }

  /** The display fields of the loaded row on the line at `offset`. */
  fields(r: LoadedRow, offset: number, length: number): void {
    let n = HEAD;
    for (let i = 0; i < DISPLAY_FIELDS.length; i++) if (i !== EVENT_HASH_SLOT && r.fieldS[i]! >= 0) n += r.fieldE[i]! - r.fieldS[i]!;
    n += 4 * (DISPLAY_FIELDS.length - 1);
    let p = this.begin(n, SpoolKind.Fields, offset, length);
    if (p < 0) return;
    const b = r.mem;
    for (let i = 0; i < DISPLAY_FIELDS.length; i++) {
      if (i === EVENT_HASH_SLOT) continue;
      const s = r.fieldS[i]!;
      if (s < 0) {
        this.dv.setUint32(p, ABSENT, true);
        p += 4;
      } else p = this.span(p, b, s, r.fieldE[i]!);
    }
    this.pos = p;
  }

  /** A row the exact reader read, on the line at `offset`. */
  exact(offset: number, length: number): void {
    const p = this.begin(HEAD, SpoolKind.Exact, offset, length);
    if (p >= 0) this.pos = p;
  }

  /** The head of an n-byte record at the buffer's end (flushed first when full); where its body goes, -1 when broken. */
  private begin(n: number, kind: SpoolKind, offset: number, length: number): number {
    if (this.broken) return -1;
    if (this.pos + n > this.buf.length) {
      this.flush();
      if (this.broken) return -1;
      if (n > this.buf.length) this.grow(n);
    }
    const p = this.pos;
    const dv = this.dv;
    dv.setUint32(p, n, true);
    this.buf[p + 4] = kind;
    dv.setFloat64(p + 5, offset, true);
    dv.setUint32(p + 13, length, true);
    return p + HEAD;
  }

  private span(p: number, b: Uint8Array, s: number, e: number): number {
    this.dv.setUint32(p, e - s, true);
    return copyTo(b, s, e, this.buf, p + 4);
  }

  private grow(n: number): void {
    this.buf = new Uint8Array(n);
    this.dv = new DataView(this.buf.buffer);
  }

  private flush(): void {
    try {
      let w = 0;
      while (w < this.pos) w += writeSync(this.fd, this.buf, w, this.pos - w, this.fileSize + w);
      this.fileSize += this.pos;
    } catch {
      this.broken = true;
    }
    this.pos = 0;
  }

  /** Ready for the table pass: false when a write failed. */
  finish(): boolean {
    if (this.pos > 0) this.flush();
    return !this.broken;
  }

  /** The records, in order (after finish): the spool's buffer is the read buffer. */
  reader(): SpoolReader {
    return new SpoolReader(this.fd, this.fileSize, this.buf);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }
}

/** One record at a time; its cells and fields are views of the read buffer, valid until the next. */
export class SpoolReader {
  kind: SpoolKind = SpoolKind.Exact;
  /** The row's line in the journal. */
  offset = 0;
  length = 0;
  private dv: DataView;
  private at = 0;
  private end = 0;
  private recLen = 0;
  private filePos = 0;
  private readonly fields: PyObject = new Map();

  constructor(
    private readonly fd: number,
    private readonly size: number,
    private buf: Uint8Array,
  ) {
    this.dv = new DataView(buf.buffer);
  }

  /** Move to the next record; false after the last. */
  next(): boolean {
    this.at += this.recLen;
    this.recLen = 0;
    if (this.end - this.at < 4 || this.dv.getUint32(this.at, true) > this.end - this.at) {
      this.refill();
      if (this.end - this.at < 4 || this.dv.getUint32(this.at, true) > this.end - this.at) return false;
    }
    const p = this.at;
    this.recLen = this.dv.getUint32(p, true);
    this.kind = this.buf[p + 4]! as SpoolKind;
    this.offset = this.dv.getFloat64(p + 5, true);
    this.length = this.dv.getUint32(p + 13, true);
    return true;
  }

  /** The record's cells (Time, Ts) into c, TIME as stored. */
  cells(c: CellSpans): void {
    const b = this.buf;
    const dv = this.dv;
    let p = this.at + HEAD;
    c.timeB = c.eventB = c.agentB = c.taskB = c.detailB = b;
    c.timeS = p + 4;
    c.timeE = p = c.timeS + dv.getUint32(p, true);
    c.eventS = p + 4;
    c.eventE = p = c.eventS + dv.getUint32(p, true);
    c.agentS = p + 4;
    c.agentE = p = c.agentS + dv.getUint32(p, true);
    c.taskS = p + 4;
    c.taskE = p = c.taskS + dv.getUint32(p, true);
    c.detailS = p + 4;
    c.detailE = c.detailS + dv.getUint32(p, true);
  }

  /** The record's display fields (Fields) as a row, as the kernel's row gave them (displayFields): valid until the next call. */
  fieldsRow(): PyObject {
    const row = this.fields;
    row.clear();
    let p = this.at + HEAD;
    for (let i = 0; i < DISPLAY_FIELDS.length; i++) {
      if (i === EVENT_HASH_SLOT) continue;
      const n = this.dv.getUint32(p, true);
      p += 4;
      if (n === ABSENT) continue;
      row.set(DISPLAY_FIELDS[i]!, valueAt(this.buf, p, p + n));
      p += n;
    }
    return row;
  }

  /** Keep the unread bytes, read more behind them (growing the buffer for a record longer than it). */
  private refill(): void {
    const rest = this.end - this.at;
    const need = rest >= 4 ? this.dv.getUint32(this.at, true) : 0;
    if (need > this.buf.length) {
      const bigger = new Uint8Array(need);
      bigger.set(this.buf.subarray(this.at, this.end));
      this.buf = bigger;
      this.dv = new DataView(bigger.buffer);
    } else this.buf.copyWithin(0, this.at, this.end);
    this.at = 0;
    this.end = rest;
    while (this.end < this.buf.length && this.filePos < this.size) {
      const n = readSync(this.fd, this.buf, this.end, Math.min(this.buf.length - this.end, this.size - this.filePos), this.filePos);
      if (n === 0) break;
      this.end += n;
      this.filePos += n;
    }
  }
}
