import { existsSync } from "node:fs";
import { readChunks } from "../fsutil/input.ts";
import { DEFAULT_MAX_LINE_BYTES, LineSplitter, refusingOverlong } from "../fsutil/lines.ts";
import { holdsRaw } from "../pyjson/encode.ts";
import type { PyObject } from "../pyjson/types.ts";
import { dictForm, RowFormError } from "../receipts/rows.ts";
import { renderJson, renderRowJson } from "../render/json.ts";
import { KERNEL_DICT_FORM, KERNEL_DISPLAY, KERNEL_LINKS, KERNEL_REPORT } from "./kernel.ts";
import { classifyLine } from "./reader.ts";
import { TakenRuns } from "./runs.ts";
import { ChainWalker } from "./walk.ts";

/** Where the entries go: bytes in order (`writeSync` for what must go out before a huge row's pieces). */
export interface ByteOut {
  write(bytes: Uint8Array): Promise<void>;
  writeSync(bytes: Uint8Array): void;
}

const enc = new TextEncoder();
const BATCH = 256 * 1024;

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

function indent(text: string, by: string): string {
  return text.split("\n").map((l) => by + l).join("\n");
}

/** Output collected between writes (the kernel's views are only valid while it reports a row). */
class Batch {
  private buf = new Uint8Array(BATCH * 2);
  len = 0;
  add(b: Uint8Array): void {
    if (this.len + b.length > this.buf.length) {
      const grown = new Uint8Array(Math.max(this.buf.length * 2, this.len + b.length));
      grown.set(this.buf.subarray(0, this.len));
      this.buf = grown;
    }
    this.buf.set(b, this.len);
    this.len += b.length;
  }
  take(): Uint8Array {
    const v = this.buf.subarray(0, this.len);
    this.len = 0;
    return v;
  }
}

/**
 * The `entries` items of `replay <AGENT_ID> --as-json` (each preceded by
 * its separator, `\n` or `,\n`), at most `limit` of them, streamed: the
 * tolerant reader's entries rendered as `renderJson` of their dict form,
 * indented for the document. The step kernel takes the rows already in
 * dict form that check out (the journal was verified just before) and
 * they are rendered from their bytes; every other entry, and a row the
 * byte renderer leaves alone (a lone surrogate, a row too long for the
 * kernel's scratch), takes the exact path. Returns how many were written.
 */
export async function writeAgentEntriesJson(bucket: string, limit: number | null, out: ByteOut): Promise<number> {
  if (!existsSync(bucket) || limit === 0) return 0;
  let n = 0;
  const batch = new Batch();
  const full = () => limit !== null && n >= limit;
  const exact = (row: PyObject): void => {
    const view = rowView(row);
    batch.add(n === 0 ? FIRST : NEXT);
    n++;
    if (holdsRaw(view)) {
      // a huge row (src/pyjson/row.ts) is written in pieces from its bytes, never as one string
      out.writeSync(batch.take());
      renderRowJson(view, 2, (text) => out.writeSync(enc.encode(text)));
    } else batch.add(enc.encode(indent(renderJson(view), "    ")));
  };

  const walker = new ChainWalker("disk", DEFAULT_MAX_LINE_BYTES);
  // The journal was verified just before: this pass follows the links only.
  walker.kernelMode = KERNEL_DICT_FORM | KERNEL_REPORT | KERNEL_DISPLAY | KERNEL_LINKS;
  walker.readBuffer();
  const k = walker.stepKernel;
  let splitter: LineSplitter | null = null;
  const runs = new TakenRuns(walker, () => splitter!.lines, () => {});
  if (k !== null) {
    const area = walker.kernelScratch;
    const scratchEnd = area.at + area.size;
    k.onRow = (p, q) => {
      if (full()) return;
      // rendered by the kernel from the row's bytes, into the scratch
      const end = k.prettyRow(n > 0, area.at, scratchEnd);
      if (end < 0) {
        const e = classifyLine(k.u8.subarray(p, q));
        if (e.kind === "entry") exact(e.row);
        return;
      }
      batch.add(k.u8.subarray(area.at, end));
      n++;
    };
  }
  const sink = refusingOverlong((line, lineNo) => {
    // Every line goes through the walker, so the kernel's chain state follows the journal.
    walker.line(line, lineNo);
    if (full()) return;
    const e = classifyLine(line);
    if (e.kind === "entry") exact(e.row);
  }, DEFAULT_MAX_LINE_BYTES);
  splitter = new LineSplitter("universal", sink, DEFAULT_MAX_LINE_BYTES, null, k === null ? null : runs);
  let chunks = 0;
  for (const chunk of readChunks(bucket, { what: "journal" }, walker.readBuffer())) {
    // The rows' views are young garbage: a minor collection now and then keeps RSS flat.
    if (++chunks % 8 === 0) Bun.gc(false);
    splitter.push(chunk);
    if (batch.len >= BATCH) await out.write(batch.take());
    if (full()) break;
  }
  if (!full()) splitter.end();
  await out.write(batch.take());
  return n;
}
