import { JOURNAL_MAX_ROW_BYTES } from "../fsutil/input.ts";
import type { PyObject } from "../pyjson/types.ts";
import { CanonicalRow } from "../steps/canonical-row.ts";
import { KERNEL_LINKS, KERNEL_REPORT } from "../steps/kernel.ts";
import { StepKey } from "../steps/row-keys.ts";
import { classifyLine, refuseNonStepJournal } from "../steps/reader.ts";
import { ChainWalker } from "../steps/walk.ts";
import { diffRows, lengthMismatch, type JournalDiff } from "./diff.ts";
import { sourceLines, type JournalSource, type LineBatch } from "./source.ts";

/** A source's lines, one at a time, over its batches (a batch is kept until the next is asked for). */
class LineCursor {
  private batch: LineBatch | null = null;
  buf: Buffer = Buffer.alloc(0);
  private k = 0;
  /** The current line: `buf[start, end)`; its line feed at `end`. */
  start = 0;
  end = 0;
  done = false;
  private batches = 0;
  constructor(private readonly it: AsyncIterator<LineBatch>) {}

  /** The next line of the batch, if it has one. */
  step(): boolean {
    const b = this.batch;
    if (b === null || this.k >= b.ends.length) return false;
    this.start = this.end + 1;
    this.end = b.ends[this.k++]!;
    return true;
  }

  get hasNext(): boolean {
    return this.batch !== null && this.k < this.batch.ends.length;
  }

  /** Move to the next line (false at the end of the source). */
  async advance(): Promise<boolean> {
    if (this.step()) return true;
    this.batch?.release();
    this.batch = null;
    // The lines' views and the splitter's garbage are young: a minor collection now and then keeps RSS flat.
    if (++this.batches % 8 === 0) Bun.gc(false);
    const r = await this.it.next();
    if (r.done) {
      this.done = true;
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

  /** The current lines are the same bytes; `next`: compare the lines after them (both must have one). */
  same(o: LineCursor, next = false): boolean {
    const s = next ? this.end + 1 : this.start;
    const e = next ? this.batch!.ends[this.k]! : this.end;
    const os = next ? o.end + 1 : o.start;
    const oe = next ? o.batch!.ends[o.k]! : o.end;
    return e - s === oe - os && this.buf.compare(o.buf, os, oe, s, e) === 0;
  }

  async close(): Promise<void> {
    this.batch?.release();
    await this.it.return?.(undefined);
  }
}

/** The fields whose value `NaN` differs from itself in the reference's comparison (top level only). */
const NAN_KEYS = [StepKey.Model, StepKey.Prompt, StepKey.ToolCall, StepKey.ToolResult, StepKey.Effort];

const isNaNAt = (b: Uint8Array, s: number, e: number): boolean => e - s === 3 && b[s] === 0x4e && b[s + 1] === 0x61 && b[s + 2] === 0x4e;

/**
 * Classifies lines that are the same on both sides: runs of them go to the
 * step kernel (links only, nothing rehashed: a row it takes is a canonical
 * object with a step_hash, so an entry), the rest to the canonical scanner
 * or the parser. A top-level `NaN` in a compared field is the one way a
 * line differs from itself (Python's `==`), so such an entry is reported.
 */
class SameLines {
  private readonly walker = new ChainWalker("receipt", JOURNAL_MAX_ROW_BYTES);
  private readonly scan = new CanonicalRow();
  private nanRow = -1;
  private reported = 0;

  constructor() {
    this.walker.kernelMode = KERNEL_LINKS | KERNEL_REPORT;
    this.walker.readBuffer();
    const k = this.walker.stepKernel;
    if (k !== null) {
      k.onRow = () => {
        if (this.nanRow < 0 && NAN_KEYS.some((key) => isNaNAt(k.u8, k.spans[4 * key]!, k.spans[4 * key + 1]!))) this.nanRow = this.reported;
        this.reported++;
      };
    }
  }

  /** Done comparing: the walker's kernel memory goes to the next walker. */
  release(): void {
    this.walker.release();
  }

  /** One line: an entry (its parsed row when parsing told), or not. */
  entry(line: Uint8Array): PyObject | boolean {
    if (this.scan.scanRow(line)) return this.scan.spanStart[StepKey.StepHash]! >= 0;
    const k = classifyLine(line);
    return k.kind === "entry" ? k.row : false;
  }

  /** The line just classified by `entry` as a scanned entry holds a top-level NaN. */
  scannedNaN(line: Uint8Array): boolean {
    return NAN_KEYS.some((k) => isNaNAt(line, this.scan.spanStart[k]!, this.scan.spanEnd[k]!));
  }

  /**
   * The lines `buf[s, e)` (each ending in a line feed), the same on both
   * sides, entries `i` onwards: how many entries, or the divergence of one
   * that differs from itself.
   */
  run(buf: Uint8Array, s: number, e: number, i: number): number | JournalDiff {
    let n = 0;
    while (s < e) {
      this.nanRow = -1;
      this.reported = 0;
      const to = this.walker.take(buf, s, e, JOURNAL_MAX_ROW_BYTES);
      if (this.nanRow >= 0) {
        let p = s;
        for (let r = 0; r < this.nanRow; r++) p = buf.indexOf(0x0a, p) + 1;
        const row = (classifyLine(buf.subarray(p, buf.indexOf(0x0a, p))) as { row: PyObject }).row;
        return diffRows(row, row, i + n + this.nanRow)!;
      }
      n += this.walker.taken;
      if (to >= e) break;
      // a line the kernel does not take
      const nl = buf.indexOf(0x0a, to);
      const line = buf.subarray(to, nl);
      this.walker.line(line, 0);
      const en = this.entry(line);
      if (en !== false) {
        if (en instanceof Map || this.scannedNaN(line)) {
          const row = en instanceof Map ? en : (classifyLine(line) as { row: PyObject }).row;
          const d = diffRows(row, row, i + n);
          if (d !== null) return d;
        }
        n++;
      }
      s = nl + 1;
    }
    return n;
  }
}

/** The compared fields (diff.ts DIFF_FIELDS) as step keys. */
const DIFF_KEYS = [StepKey.PrevHash, StepKey.InputHash, StepKey.Model, StepKey.Prompt, StepKey.ToolCall, StepKey.ToolResult, StepKey.Effort];

/**
 * Two lines that differ as bytes but may hold equal entries: two runs of
 * one agent on the same inputs write the same steps at other times (`ts`,
 * outside the hash). Each line is read through the codec's canonical scan;
 * in that spelling a value has one spelling, so the compared fields' equal
 * bytes are equal values (a top-level NaN aside, which differs from
 * itself). Anything else, a difference among them included, is the exact
 * comparison's.
 */
class EqualFields {
  private readonly left = new CanonicalRow();
  private readonly right = new CanonicalRow();

  /** Both lines are entries whose compared fields are the same bytes (none a top-level NaN). */
  equal(a: Uint8Array, b: Uint8Array): boolean {
    const x = this.left;
    const y = this.right;
    if (!x.scanRow(a) || !y.scanRow(b) || x.spanStart[StepKey.StepHash]! < 0 || y.spanStart[StepKey.StepHash]! < 0) return false;
    for (const k of DIFF_KEYS) {
      const s = x.spanStart[k]!;
      const e = x.spanEnd[k]!;
      const t = y.spanStart[k]!;
      if ((s < 0) !== (t < 0)) return false;
      if (s < 0) continue;
      if (e - s !== y.spanEnd[k]! - t || isNaNAt(a, s, e)) return false;
      for (let i = 0; i < e - s; i++) if (a[s + i] !== b[t + i]) return false;
    }
    return true;
  }
}

/**
 * `diff-journal`'s fast path over both sources' lines in lockstep: a run
 * of byte-identical lines is the same entries (and non-entries) on both
 * sides, so equal fields, and is only classified (`SameLines`); a pair of
 * entries whose compared fields are the same bytes is equal (`EqualFields`);
 * any other pair is parsed and compared exactly, as `diffJournals` does
 * (non-entries skipped on each side). Constant memory: a batch of lines
 * per side.
 */
export async function diffJournalLines(left: AsyncIterator<LineBatch>, right: AsyncIterator<LineBatch>): Promise<JournalDiff> {
  const a = new LineCursor(left);
  const b = new LineCursor(right);
  const same = new SameLines();
  const fields = new EqualFields();
  const rowOf = (c: LineCursor, e: PyObject | boolean): PyObject => (e instanceof Map ? e : (classifyLine(c.line) as { row: PyObject }).row);
  /** Move the cursor to its next entry (the current line first); the entry, or null at the end. */
  const nextEntry = async (c: LineCursor): Promise<PyObject | true | null> => {
    for (;;) {
      if (c.done) return null;
      const e = same.entry(c.line);
      if (e !== false) return e;
      await c.advance();
    }
  };
  const countRest = async (c: LineCursor): Promise<number> => {
    let n = 0;
    while (await c.advance()) if (same.entry(c.line) !== false) n++;
    return n;
  };

  let i = 0;
  try {
    await Promise.all([a.advance(), b.advance()]);
    for (;;) {
      if (!a.done && !b.done && a.same(b)) {
        // The run of equal lines both batches hold from here.
        const s = a.start;
        while (a.hasNext && b.hasNext && a.same(b, true)) {
          a.step();
          b.step();
        }
        const r = same.run(a.buf, s, a.end + 1, i);
        if (typeof r !== "number") return r;
        i += r;
        await Promise.all([a.advance(), b.advance()]);
        continue;
      }
      if (!a.done && !b.done && fields.equal(a.line, b.line)) {
        i++;
        await Promise.all([a.advance(), b.advance()]);
        continue;
      }
      const [ea, eb] = [await nextEntry(a), await nextEntry(b)];
      if (ea === null && eb === null) return { diverged: false };
      if (ea === null || eb === null) {
        const rest = 1 + (await countRest(ea === null ? b : a));
        return lengthMismatch(ea === null, i, rest);
      }
      const d = diffRows(rowOf(a, ea), rowOf(b, eb), i);
      if (d !== null) return d;
      i++;
      await Promise.all([a.advance(), b.advance()]);
    }
  } finally {
    await Promise.all([a.close(), b.close()]);
    same.release();
  }
}

/**
 * Refuse a journal file or agent journal that is empty (unless allowed) or
 * holds no step (journal/content.ts): two of them would "match". A receipt's
 * journal is the receipt reader's to judge.
 */
export function refuseNonJournalSource(src: JournalSource, allowEmpty = false): void {
  if (src.kind === "receipt") return;
  refuseNonStepJournal(src.path, src.input ?? src.path, allowEmpty);
}

/** The first divergence between two sources (`diffJournals` over `sourceEntries` is the exact path). */
export function diffJournalSources(left: JournalSource, right: JournalSource): Promise<JournalDiff> {
  return diffJournalLines(sourceLines(left), sourceLines(right));
}

/** `replay diff-journal`: `diffJournalSources` once both sides are known to be journals (`refuseNonJournalSource`). */
export function diffJournalInputs(left: JournalSource, right: JournalSource, opts: { allowEmpty?: boolean } = {}): Promise<JournalDiff> {
  refuseNonJournalSource(left, opts.allowEmpty);
  refuseNonJournalSource(right, opts.allowEmpty);
  return diffJournalSources(left, right);
}
