import { existsSync } from "node:fs";
import { LineSplitter, refusingOverlong } from "../fsutil/lines.ts";
import { JOURNAL_MAX_ROW_BYTES } from "../fsutil/input.ts";
import { holdsRaw } from "../pyjson/encode.ts";
import type { PyObject } from "../pyjson/types.ts";
import { dictForm, RowFormError } from "../steps/dict-form.ts";
import { renderRowJson, rowJsonText } from "../render/json.ts";
import { KERNEL_DICT_FORM, KERNEL_DISPLAY, KERNEL_LINKS, KERNEL_RENDER, KERNEL_REPLAY } from "../steps/kernel.ts";
import { fileStamp, type SpanRecords } from "../steps/records.ts";
import { classifyLine } from "../steps/reader.ts";
import { readLineChunks } from "../fsutil/line-chunks.ts";
import { ChainWalker } from "../steps/walk.ts";

/** Where the entries go: bytes in order (`writeSync` for what must go out before a huge row's pieces). */
export interface ByteOut {
  write(bytes: Uint8Array): Promise<void>;
  writeSync(bytes: Uint8Array): void;
}

const enc = new TextEncoder();
/** The render area: entries are written out in pieces of up to this many bytes. */
const BATCH = 1 << 20;
/** Span records handed to the kernel at a time (a multiple of SPAN_RECORD_BYTES). */
const RECORD_FEED = 256 * 1024;

const FIRST = enc.encode("\n");
const NEXT = enc.encode(",\n");

/** The row as the agent view shows it: its dict form, or the row itself when it has none. */
function rowView(row: PyObject): PyObject {
  try {
    return dictForm(row);
  } catch (err) {
    if (err instanceof RowFormError) return row;
    throw err;
  }
}

/**
 * An entry by the exact path: its separator, then `renderJson` of its
 * view, indented for the document, to `add`; a huge row (src/pyjson/row.ts)
 * is rendered in pieces from its bytes, never as one string, to `piece`.
 */
function exactEntry(row: PyObject, first: boolean, add: (b: Uint8Array) => void, piece: (b: Uint8Array) => void): void {
  const view = rowView(row);
  add(first ? FIRST : NEXT);
  if (holdsRaw(view)) renderRowJson(view, 2, (text) => piece(enc.encode(text)));
  else add(enc.encode(rowJsonText(view, 2)));
}

/**
 * The entries on their way out, in order: a buffer (the step kernel's
 * render area, which the kernel fills in place) written out between
 * chunks, and at once when it is full.
 */
class OutArea {
  len = 0;
  constructor(
    readonly buf: Uint8Array,
    private readonly out: ByteOut,
  ) {}

  /** `n` bytes were put at buf[len, len + n). */
  commit(n: number): void {
    this.len += n;
  }

  readonly add = (b: Uint8Array): void => {
    if (this.len + b.length > this.buf.length) {
      this.flushSync();
      if (b.length > this.buf.length) return this.out.writeSync(b);
    }
    this.buf.set(b, this.len);
    this.len += b.length;
  };

  /** Bytes that must go out now, after what is held (a huge row's pieces). */
  readonly piece = (b: Uint8Array): void => {
    this.flushSync();
    this.out.writeSync(b);
  };

  flushSync(): void {
    if (this.len > 0) this.out.writeSync(this.buf.subarray(0, this.len));
    this.len = 0;
  }

  async flush(): Promise<void> {
    if (this.len > 0) await this.out.write(this.buf.subarray(0, this.len));
    this.len = 0;
  }
}

/**
 * The `entries` items of `replay <AGENT_ID> --as-json` (each preceded by
 * its separator, `\n` or `,\n`), at most `limit` of them, streamed: the
 * tolerant reader's entries rendered as `renderJson` of their dict form,
 * indented for the document. The step kernel takes the rows already in
 * dict form that check out (the journal was verified just before, so it
 * follows the links only) and renders each in the visit that scans it
 * (kernel.wat's render mode), into the buffer that is written out; every
 * other entry, and a row the byte renderer leaves alone (a lone surrogate,
 * a row too long for the buffer), takes the exact path. Returns how many
 * were written. With `records` the verifying pass left for this file, the
 * rows they cover are not scanned again: their spans come from the records,
 * while the file's stamp is theirs (checked after each read). `areaBytes`: the buffer's size (tests vary it).
 */
export async function writeAgentEntriesJson(
  bucket: string,
  limit: number | null,
  out: ByteOut,
  areaBytes = BATCH,
  records: SpanRecords | null = null,
): Promise<number> {
  if (!existsSync(bucket) || limit === 0) return 0;
  let n = 0;
  const full = () => limit !== null && n >= limit;
  const unchanged = () => records !== null && records.stamp !== null && fileStamp(bucket) === records.stamp;
  let replay = records !== null && records.size > 0 && unchanged();
  const walker = new ChainWalker("disk", JOURNAL_MAX_ROW_BYTES);
  const mode = KERNEL_DICT_FORM | KERNEL_DISPLAY | KERNEL_LINKS | KERNEL_RENDER;
  walker.kernelMode = mode | (replay ? KERNEL_REPLAY : 0);
  walker.kernelRenderBytes = areaBytes;
  walker.kernelRecordBytes = replay ? RECORD_FEED : 0;
  walker.readBuffer();
  const k = walker.stepKernel;
  const area = new OutArea(k?.renderArea ?? new Uint8Array(areaBytes), out);
  let arm = () => {};
  if (k !== null) {
    const base = k.renderArea.byteOffset;
    const end = base + k.renderArea.length;
    arm = () => k.renderArm(base, base + area.len, end, n > 0, limit === null ? Number.MAX_SAFE_INTEGER : limit - n);
    let fed = 0;
    const feed = () => {
      const got = records!.read(fed, k.recordArea);
      fed += got;
      k.recordFeed(k.recordArea.byteOffset, k.recordArea.byteOffset + got, fed < records!.size);
    };
    if (replay) feed();
    k.onRendered = (isFull) => {
      area.commit(k.renderEnd - (base + area.len));
      n += k.renderCount;
      if (isFull) area.flushSync();
      arm();
      if (replay && k.recordsWanted) {
        feed();
        return true;
      }
      return isFull;
    };
    arm();
  }
  const sink = refusingOverlong((line, lineNo) => {
    // Every line goes through the walker, so the kernel's chain state follows the journal.
    walker.line(line, lineNo);
    if (full()) return;
    const e = classifyLine(line);
    if (e.kind !== "entry") return;
    exactEntry(e.row, n++ === 0, area.add, area.piece);
    arm();
  }, JOURNAL_MAX_ROW_BYTES);
  const splitter = new LineSplitter("universal", sink, JOURNAL_MAX_ROW_BYTES, null, k === null ? null : walker);
  let chunks = 0;
  let offset = 0;
  for (const chunk of readLineChunks(bucket, { what: "journal" }, walker.readBuffer())) {
    // The rows' views are young garbage: a minor collection now and then keeps RSS flat.
    if (++chunks % 8 === 0) Bun.gc(false);
    if (replay && !unchanged()) {
      // the file changed since the verify pass read it (this chunk may hold the change): scan from here on
      replay = false;
      k?.setMode(mode);
    }
    k?.setChunk(chunk.byteOffset, offset);
    offset += chunk.length;
    splitter.push(chunk);
    await area.flush();
    arm();
    if (full()) break;
  }
  if (!full()) splitter.end();
  await area.flush();
  walker.release();
  return n;
}
