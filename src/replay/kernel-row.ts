import { LBRACE, LBRACKET } from "../codec/bytes.ts";
import { FingerprintKernel } from "../journal/fast/kernel.ts";
import { kernelCapFor } from "../journal/fast/range.ts";
import type { PyObject } from "../pyjson/types.ts";
import { FAST_LINE_MAX } from "./fast-lines.ts";
import { DISPLAY_TABLE, displayFieldsOf, type FieldTable, FINGERPRINT_BATCH, type LoadedRow, READ_AREA } from "./fast-row.ts";

/**
 * The replay display's scan on the verify kernel (src/journal/fast/
 * kernel.wat, FPRINT mode): a line in Python's writer spelling with the
 * writer's envelope (`{"ts": …, "elapsed_s": …, "index": …, "event": …,
 * "prev_hash": …, "payload_hash": …, "event_hash": …, …}`, each hash 64
 * characters) is validated as the verifier validates it, its replay
 * fingerprint text (the row without ts/elapsed_s, sorted keys, compact,
 * and "\n") appended to a batch in the kernel's memory, and its display
 * fields located in the kernel's member table. Any other line is declined
 * and goes to the exact path (the caller hashes the batch first, so the
 * rows' order holds). Which fields are located is a FieldTable passed in
 * (the display's by default; the timeline page reads more).
 */

/** Room in the kernel's scratch for a row's nested values, re-emitted (a line is under FAST_LINE_MAX bytes). */
const SCRATCH = 4 * FAST_LINE_MAX;
/** The text area: a batch, then room for one more row's text. */
const TEXT_AREA = FINGERPRINT_BATCH + 2 * FAST_LINE_MAX;

/**
 * The spans of a field table's fields in the row a kernel just took
 * (FPRINT, or the verify's TEXT with a row handed as it is taken: range.ts
 * RowTextSink.kernelRow), read from its tables: its members (sorted) from
 * the member table's start to its end, ts and elapsed_s from its facts at
 * i32[info…], which the kernel keeps apart from the members. -1: absent.
 * Nested values are located, not declined (their readers check with
 * holdsObject, or a reader declines them).
 */
export class LocatedFields implements LoadedRow {
  mem: Uint8Array = new Uint8Array(0);
  readonly fieldS: Int32Array;
  readonly fieldE: Int32Array;
  private readonly fields: PyObject = new Map();
  /** The slots of ts and elapsed_s (-1: the table has none). */
  private readonly tsSlot: number;
  private readonly elapsedSlot: number;

  constructor(readonly table: FieldTable) {
    this.fieldS = new Int32Array(table.names.length);
    this.fieldE = new Int32Array(table.names.length);
    this.tsSlot = table.slot("ts");
    this.elapsedSlot = table.slot("elapsed_s");
  }

  /** The fields of the row the kernel whose memory is `mem` took (its member table at `membersAt`, its facts at i32[info…]). */
  locate(mem: Uint8Array, i32: Int32Array, membersAt: number, info: number): void {
    this.mem = mem;
    const fs = this.fieldS;
    const fe = this.fieldE;
    // (fill() is a native call: for 16 slots a loop is cheaper)
    for (let i = 0; i < fs.length; i++) fs[i] = -1;
    const table = this.table;
    const end = i32[info + 4]! >> 2;
    for (let m = membersAt >> 2; m < end; m += 4) table.note(mem, i32[m]!, i32[m + 1]!, i32[m + 2]!, i32[m + 3]!, fs, fe);
    if (this.tsSlot >= 0) {
      fs[this.tsSlot] = i32[info]!;
      fe[this.tsSlot] = i32[info + 1]!;
    }
    if (this.elapsedSlot >= 0) {
      fs[this.elapsedSlot] = i32[info + 2]!;
      fe[this.elapsedSlot] = i32[info + 3]!;
    }
  }

  displayFields(skip = -1): PyObject {
    return displayFieldsOf(this.table.names, this.mem, this.fieldS, this.fieldE, skip, this.fields);
  }
}

export class KernelRowReader extends LocatedFields {
  private readonly k: FingerprintKernel;
  /** Where the line reader reads chunks (lines are taken in place). */
  readonly readBuffer: Uint8Array;
  /** The end of the batch's text (it starts at the text area's start). */
  textEnd: number;

  /**
   * The display's fields and sizes by default; LongLineKernel sizes one to
   * a long line. `declineObjects`: a row whose located fields hold an
   * object is declined (the display makes every located field a value);
   * a reader that makes them lazily checks each with holdsObject instead.
   */
  constructor(
    table: FieldTable = DISPLAY_TABLE,
    readonly declineObjects = true,
    readonly readCap = READ_AREA,
    textCap = TEXT_AREA,
    scratchCap = SCRATCH,
  ) {
    super(table);
    this.k = new FingerprintKernel(readCap, textCap, scratchCap);
    this.mem = this.k.u8;
    this.readBuffer = this.k.lines;
    this.textEnd = this.k.textAt;
  }

  /** Whether `buf` is a view of readBuffer from its start (a line of it is taken in place). */
  holds(buf: Uint8Array): boolean {
    return buf.buffer === this.readBuffer.buffer && buf.byteOffset === this.readBuffer.byteOffset;
  }

  /** Take the line readBuffer[s, e) (a line feed at e): false when the kernel declines it (or, with declineObjects, a field holds an object). */
  take(s: number, e: number): boolean {
    const k = this.k;
    if (!k.take(s, e)) {
      // a row it took that does not end the line (a carriage return inside) leaves no text
      k.textTo(this.textEnd);
      return false;
    }
    this.locate(k.u8, k.i32, k.membersAt, k.info);
    if (this.declineObjects && anyHoldsObject(this.mem, this.fieldS, this.fieldE)) {
      k.textTo(this.textEnd);
      return false;
    }
    this.textEnd = k.i32[k.info + 7]!;
    return true;
  }

  /** Set the batch's end (back to `p`: the rows after it are not in it). */
  rewind(p: number): void {
    this.textEnd = p;
    this.k.textTo(p);
  }

  /** Bytes of text in the batch. */
  textLength(): number {
    return this.textEnd - this.k.textAt;
  }

  /** The batch's text (a view valid until the next take). */
  batch(): Uint8Array {
    return this.mem.subarray(this.k.textAt, this.textEnd);
  }

  /** Empty the batch (after it was hashed). */
  clear(): void {
    this.rewind(this.k.textAt);
  }
}

/**
 * Whether the located value b[s, e) holds an object: the kernel keeps a
 * nested value in its sorted, compact spelling, but an object's keys are
 * shown in the row's order (the exact reader's), so such a value is not
 * made from its span. (A brace inside a string inside a list counts too:
 * rare, and only slower.)
 */
export function holdsObject(b: Uint8Array, s: number, e: number): boolean {
  const c = b[s]!;
  if (c === LBRACE) return true;
  if (c === LBRACKET) for (let p = s + 1; p < e; p++) if (b[p] === LBRACE) return true;
  return false;
}

/** Whether any located field's value holds an object (holdsObject). */
function anyHoldsObject(b: Uint8Array, fs: Int32Array, fe: Int32Array): boolean {
  for (let i = 0; i < fs.length; i++) if (fs[i]! >= 0 && holdsObject(b, fs[i]!, fe[i]!)) return true;
  return false;
}

/**
 * The longest line the display takes from a copy (LongLineKernel, the
 * --as-json transcoder, --from-step's kernel): each holds about three
 * times the line (the copy, its fingerprint text or re-indented text, the
 * kernel's scratch); a longer line goes to the exact path, whose byte
 * reader keeps a huge row within 64 MB + 3x the row, where the copies
 * would not.
 */
export const LONG_LINE_MAX = 2 << 20;

/** The read area of a copy kernel for a line of `n` bytes: at least FAST_LINE_MAX, shared by lines of similar lengths (range.ts kernelCapFor). */
export function copyCapFor(n: number): number {
  return kernelCapFor(n, LONG_LINE_MAX, FAST_LINE_MAX / 2);
}

/**
 * The display's kernel for lines that are not in the read buffer: those
 * the line reader assembled because they spanned two reads, because
 * they are FAST_LINE_MAX bytes or longer, or re-spaced. A KernelRowReader sized to the
 * line, its text and scratch areas each the line's length again (a row
 * whose fingerprint text or nested values need more is declined, to the
 * exact path), kept for the lines after it and replaced only by a longer one.
 */
export class LongLineKernel {
  private reader: KernelRowReader | null = null;

  constructor(
    private readonly table: FieldTable = DISPLAY_TABLE,
    private readonly declineObjects = true,
  ) {}

  /** The line `bytes` taken (its text the reader's whole batch), or null when the kernel declines it. */
  take(bytes: Uint8Array): KernelRowReader | null {
    const n = bytes.length;
    if (n > LONG_LINE_MAX) return null;
    let k = this.reader;
    if (k === null || k.readCap < n + 1) {
      const cap = copyCapFor(n);
      this.reader = null; // the old kernel's memory is garbage before the new one is made
      k = this.reader = new KernelRowReader(this.table, this.declineObjects, cap, cap + FAST_LINE_MAX, cap + FAST_LINE_MAX);
    }
    k.clear();
    k.readBuffer.set(bytes, 0);
    k.readBuffer[n] = 0x0a;
    return k.take(0, n) ? k : null;
  }
}
