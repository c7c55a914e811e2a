import { CanonicalRow, Key } from "../steps/fastrow.ts";
import { classifyLine } from "../steps/reader.ts";
import type { PyObject } from "../pyjson/types.ts";
import { diffRows, lengthMismatch, type JournalDiff } from "./diff.ts";
import { sourceLines, type JournalSource, type LineBatch } from "./source.ts";

/** A source's lines, one at a time, over its batches (a batch is kept until the next is asked for). */
class LineCursor {
  private batch: LineBatch | null = null;
  private buf: Buffer = Buffer.alloc(0);
  private k = 0;
  /** The current line: `buf[start, end)`. */
  start = 0;
  end = 0;
  done = false;
  constructor(private readonly it: AsyncIterator<LineBatch>) {}

  /** Move to the next line (false at the end of the source). */
  async advance(): Promise<boolean> {
    const b = this.batch;
    if (b !== null && this.k < b.ends.length) {
      this.start = this.end;
      this.end = b.ends[this.k++]!;
      return true;
    }
    const r = await this.it.next();
    if (r.done) {
      this.done = true;
      this.batch = null;
      return false;
    }
    this.batch = r.value;
    this.buf = Buffer.from(r.value.buf.buffer, r.value.buf.byteOffset, r.value.buf.byteLength);
    this.k = 1;
    this.start = 0;
    this.end = r.value.ends[0]!;
    return true;
  }

  get line(): Uint8Array {
    return this.buf.subarray(this.start, this.end);
  }

  sameLine(o: LineCursor): boolean {
    return this.end - this.start === o.end - o.start && this.buf.compare(o.buf, o.start, o.end, this.start, this.end) === 0;
  }

  async close(): Promise<void> {
    await this.it.return?.(undefined);
  }
}

const NAN = [0x4e, 0x61, 0x4e];
/** The fields whose value `NaN` differs from itself in the reference's comparison (top level only). */
const NAN_KEYS = [Key.Model, Key.Prompt, Key.ToolCall, Key.ToolResult, Key.Effort];

/**
 * `diff-journal`'s fast path over both sources' lines in lockstep: a pair
 * of byte-identical lines is the same entry (or the same non-entry) on
 * both sides, so equal fields, and is classified once by the canonical
 * scanner (an entry: a canonical object with a top-level step_hash);
 * only a pair that differs, a line the scanner does not prove, or a
 * top-level `NaN` (which the reference's `==` finds unequal to itself)
 * is parsed and compared exactly, as `diffJournals` does. Constant
 * memory: a batch of lines per side.
 */
export async function diffJournalLines(left: AsyncIterator<LineBatch>, right: AsyncIterator<LineBatch>): Promise<JournalDiff> {
  const a = new LineCursor(left);
  const b = new LineCursor(right);
  const scan = new CanonicalRow();
  /** The line is an entry: true / false when the scanner proves it, null when only parsing can tell. */
  const isEntry = (c: LineCursor): PyObject | boolean => {
    const line = c.line;
    if (scan.scanRow(line)) return scan.spanStart[Key.StepHash]! >= 0;
    const k = classifyLine(line);
    return k.kind === "entry" ? k.row : false;
  };
  const hasTopNaN = (line: Uint8Array): boolean =>
    NAN_KEYS.some((k) => scan.spanEnd[k]! - scan.spanStart[k]! === 3 && NAN.every((x, j) => line[scan.spanStart[k]! + j] === x));
  const rowOf = (c: LineCursor, e: PyObject | boolean): PyObject => (e instanceof Map ? e : (classifyLine(c.line) as { row: PyObject }).row);
  /** Move the cursor to its next entry (the current line first); the entry, or null at the end. */
  const nextEntry = async (c: LineCursor): Promise<PyObject | true | null> => {
    for (;;) {
      if (c.done) return null;
      const e = isEntry(c);
      if (e !== false) return e;
      await c.advance();
    }
  };
  const countRest = async (c: LineCursor): Promise<number> => {
    let n = 0;
    while (await c.advance()) if (isEntry(c) !== false) n++;
    return n;
  };

  let i = 0;
  try {
    await Promise.all([a.advance(), b.advance()]);
    for (;;) {
      if (!a.done && !b.done && a.sameLine(b)) {
        const e = isEntry(a);
        if (e !== false) {
          // Equal bytes, equal fields: unless a top-level NaN (only a scanned row can show one cheaply).
          const suspect = e instanceof Map || hasTopNaN(a.line);
          if (suspect) {
            const row = rowOf(a, e);
            const d = diffRows(row, row, i);
            if (d !== null) return d;
          }
          i++;
        }
        await Promise.all([a.advance(), b.advance()]);
        continue;
      }
      const [ea, eb] = [await nextEntry(a), await nextEntry(b)];
      if (ea === null && eb === null) return { diverged: false };
      if (ea === null || eb === null) {
        const longer = ea === null ? b : a;
        const rest = 1 + (await countRest(longer));
        return lengthMismatch(ea === null, i, rest);
      }
      const d = diffRows(rowOf(a, ea), rowOf(b, eb), i);
      if (d !== null) return d;
      i++;
      await Promise.all([a.advance(), b.advance()]);
    }
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}

/** `replay diff-journal`: the first divergence between two sources (`diffJournals` over `sourceEntries` is the exact path). */
export function diffJournalSources(left: JournalSource, right: JournalSource): Promise<JournalDiff> {
  return diffJournalLines(sourceLines(left), sourceLines(right));
}
