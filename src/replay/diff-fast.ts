import { JOURNAL_MAX_ROW_BYTES, openInput, readBufferSize, rowTooLarge, type OpenInput } from "../fsutil/input.ts";
import { contentEnd, LineSplitter } from "../fsutil/lines.ts";
import { RAW_STRING_MIN } from "../pyjson/row.ts";
import { asciiText, CR } from "../codec/bytes.ts";
import { Spell, Tok } from "../codec/row-index.ts";
import { classifyLine } from "../journal/reader.ts";
import type { PyObject } from "../pyjson/types.ts";
import { collapsed, DiffPlan, MAX_MEMBERS, pathReaches, RowScan } from "./diff-fast-scan.ts";
import { RowProjector, type DiffRules } from "./diff-rules.ts";
import { comparePair, endVerdict, lengthVerdict, verdictMaker, type JournalDiff } from "./diff-compare.ts";
import { GrowthCollector, nextTurn, TurnPacer } from "../fsutil/turn.ts";

/**
 * `replay diff` on the fast path: both journals in lockstep, each through
 * the one line reader (src/fsutil/lines.ts, universal newlines, the row
 * limit) into a 1 MiB read buffer, one row of each compared at a time.
 *
 * A pair of rows the codec's row index takes (./diff-fast-scan.ts) is compared on
 * its bytes: same event token, then the compared members (everything but
 * the clock and chain fields, `event` and the ignored keys) in row order,
 * runs of plain members as one byte span, aligned ids by their
 * first-appearance ordinal. Equal bytes prove equal rows; anything else —
 * a difference, a refused line, a dotted path the scan cannot follow — goes
 * to the exact comparison (comparePair in ./diff-compare.ts) with the same alias
 * tables, so every reported divergence, and the result, is the exact
 * path's. The rules the rows touched are tracked on both paths.
 */

const CHUNK = 1 << 20;
/** Growth of the resident set after which the lockstep collects garbage, looked at every GC_POLL_ROWS pairs (a power of two). */
const GC_GROWTH = 4 << 20;
const GC_POLL_ROWS = 8192;

const enum Row {
  End,
  /** Scanned: spans in `b`. */
  Fast,
  /** Read by the exact reader: `row`. */
  Exact,
}

const enum Item {
  /** A physical line without CR, claimed whole: b[s, e), b[e] a line feed, the CR of a CR LF, or a sentinel. */
  Line,
  /** A physical line the splitter cut (a CR in it): its bytes, copied. */
  Cut,
  /** The line past the row limit: reading stops there (`row_too_large`). */
  TooLong,
}

/** Member modes by class: skipped (clock/chain, event, ignored), plain, aligned. */
const SKIP = 0;
const PLAIN = 1;
const ALIGNED = 2;


/** One journal's side: its reader, the current row, and its run's alias table and rule marks. */
class JournalSide {
  /** The read area (CHUNK at most; its last 16 bytes slack past the data read) and its views. */
  private readonly chunk: Uint8Array;
  private readonly chunkDv: DataView;
  private readonly chunkNb: Buffer;
  private readonly input: OpenInput | null;
  private readonly splitter: LineSplitter;
  private filePos = 0;
  private eof = false;
  private tooLong = 0;
  /** The current chunk's lines, in order. */
  private qKind: Item[] = [];
  private qS: number[] = [];
  private qE: number[] = [];
  private qOwn: (Uint8Array | null)[] = [];
  private qHead = 0;
  /** The next CR at or after the last line start probed in the current chunk (Infinity: none). */
  private crAt = -1;
  /** A line that spanned two reads, copied (see spanned), and its views. */
  private spannedBuf = new Uint8Array(0);
  private spannedDv = new DataView(this.spannedBuf.buffer);
  private spannedNb = Buffer.from(this.spannedBuf.buffer);
  /** The view of the chunk handed to the splitter (the probe sees lines in it, or in the splitter's own buffer). */
  private pushed: Uint8Array | null = null;

  /** The current row. */
  kind = Row.End;
  b: Uint8Array;
  dv: DataView;
  nb: Buffer;
  s = 0;
  e = 0;
  private row: PyObject | null = null;
  /** `row` may be kept past the next read (classify). */
  private rowKept = false;
  readonly scan: RowScan;
  /** Alignment signature of each aligned member of the current row (an ordinal, or a string for other values). */
  readonly sig: (number | string)[] = new Array(MAX_MEMBERS).fill(0);
  private readonly alignedAt: Int32Array;
  private readonly ignoredSeen: Uint8Array;
  private readonly alignedSeen: Uint8Array;

  constructor(
    private readonly path: string,
    private readonly plan: DiffPlan,
    readonly proj: RowProjector,
  ) {
    this.scan = new RowScan(plan);
    this.alignedAt = new Int32Array(plan.rules.aligned.length);
    this.ignoredSeen = new Uint8Array(plan.rules.ignored.length);
    this.alignedSeen = new Uint8Array(plan.rules.aligned.length);
    this.splitter = new LineSplitter(
      "universal",
      (line, lineNo) => {
        if (this.tooLong !== 0) return;
        if (line === null) this.tooLongAt(lineNo);
        else if (line.length > 0) this.queue(Item.Cut, 0, line.length, line.slice());
      },
      JOURNAL_MAX_ROW_BYTES,
      (buf, start, end) => this.probe(buf, start, end),
    );
    this.input = openInput(path, { what: "journal" });
    if (this.input === null) this.eof = true; // a missing journal has no rows, as for the exact reader
    this.b = this.chunk = new Uint8Array(readBufferSize(this.input, CHUNK) + 16);
    this.dv = this.chunkDv = new DataView(this.chunk.buffer);
    this.nb = this.chunkNb = Buffer.from(this.chunk.buffer);
  }

  close(): void {
    this.scan.ix.release();
    this.input?.close();
  }

  private queue(kind: Item, s: number, e: number, own: Uint8Array | null): void {
    this.qKind.push(kind);
    this.qS.push(s);
    this.qE.push(e);
    this.qOwn.push(own);
  }

  private tooLongAt(lineNo: number): void {
    this.tooLong = lineNo;
    this.queue(Item.TooLong, lineNo, 0, null);
  }

  /**
   * Claim a `\n`-delimited segment as one line when it holds no CR but one
   * right before its `\n` (CR LF is one break: Python's text mode on Windows
   * writes it); else the splitter cuts it.
   */
  private probe(buf: Uint8Array, start: number, end: number): boolean {
    if (this.tooLong !== 0) return true; // nothing after the overlong line is read
    if (buf === this.pushed) {
      if (this.crAt < start) {
        const at = buf.indexOf(CR, start);
        this.crAt = at < 0 ? Infinity : at;
      }
      if (this.crAt === end - 1) end--;
      else if (this.crAt < end) return false;
      this.queue(Item.Line, start, end, null);
      return true;
    }
    // a line that spanned two reads, in the splitter's own buffer: copied, with a sentinel
    const line = buf.subarray(start, contentEnd(buf, start, end));
    if (line.indexOf(CR) >= 0) return false;
    if (line.buffer !== this.chunk.buffer && line.byteOffset === 0 && line.buffer.byteLength > line.length && this.splitter.lets(line)) {
      // a huge line's buffer, which the splitter lets go of once handed out: kept as it is (a huge row is not held
      // twice), the sentinel written past it
      const own = new Uint8Array(line.buffer, 0, line.length + 1);
      own[line.length] = 10;
      this.queue(Item.Line, 0, line.length, own);
      return true;
    }
    const own = this.spanned(line.length + 16);
    own.set(line);
    own[line.length] = 10;
    this.queue(Item.Line, 0, line.length, own);
    return true;
  }

  /**
   * The buffer for a line that spanned two reads: one a read holds at most
   * (its first line), and it is done with before the next read, so one
   * buffer serves them all, grown to the longest: a journal of megabyte
   * rows then makes no garbage per row.
   */
  private spanned(n: number): Uint8Array {
    if (this.spannedBuf.length < n) {
      this.spannedBuf = new Uint8Array(0); // the old one is garbage before the new one is made
      this.spannedBuf = new Uint8Array(n + (n >> 2));
      this.spannedDv = new DataView(this.spannedBuf.buffer);
      this.spannedNb = Buffer.from(this.spannedBuf.buffer);
    }
    return this.spannedBuf;
  }

  private fill(): void {
    this.qKind.length = 0;
    this.qS.length = 0;
    this.qE.length = 0;
    this.qOwn.length = 0;
    this.qHead = 0;
    this.crAt = -1;
    const n = this.input!.read(this.chunk, 0, this.chunk.length - 16, this.filePos);
    if (n === 0) {
      this.eof = true;
      this.splitter.end();
    } else {
      this.filePos += n;
      this.pushed = this.chunk.subarray(0, n);
      this.splitter.push(this.pushed);
    }
    if (this.tooLong === 0 && this.splitter.overlong) this.tooLongAt(this.splitter.lines + 1);
  }

  /** Advance to the next row (lines the reader discards, and blank ones, are skipped). */
  next(): Row {
    this.row = null;
    for (;;) {
      if (this.qHead === this.qKind.length) {
        if (this.eof || this.tooLong !== 0) return (this.kind = Row.End);
        this.fill();
        continue;
      }
      const h = this.qHead++;
      const kind = this.qKind[h]!;
      if (kind === Item.TooLong) throw rowTooLarge(this.path, this.qS[h]!, JOURNAL_MAX_ROW_BYTES);
      const own = this.qOwn[h]!;
      if (own === null) {
        this.b = this.chunk;
        this.dv = this.chunkDv;
        this.nb = this.chunkNb;
      } else if (own === this.spannedBuf) {
        this.b = own;
        this.dv = this.spannedDv;
        this.nb = this.spannedNb;
      } else {
        this.b = own;
        this.dv = new DataView(own.buffer);
        this.nb = Buffer.from(own.buffer);
      }
      this.s = this.qS[h]!;
      this.e = this.qE[h]!;
      if (kind === Item.Line && this.scan.scan(this.b, this.s, this.e)) return (this.kind = Row.Fast);
      const v = this.classify(false);
      if (v.kind === "row") {
        this.rowKept = false;
        this.row = v.row;
        return (this.kind = Row.Exact);
      }
    }
  }

  /**
   * The current line as the exact reader reads it, its strings of 1 MiB or
   * more kept as bytes (a huge row is compared by digests and printed from
   * its bytes: diff-compare.ts, render/json.ts). `kept`: the row outlives
   * the next read (else its large values are views of the read buffers,
   * which the caller is done with first: a huge row is not copied again).
   */
  private classify(kept: boolean) {
    return classifyLine(this.b.subarray(this.s, this.e), JOURNAL_MAX_ROW_BYTES, !kept, RAW_STRING_MIN);
  }

  /** The current row as the exact reader reads it; `kept`: held past the next row (classify). */
  rowObject(kept = false): PyObject {
    if (this.row === null || (kept && !this.rowKept)) {
      this.rowKept = kept;
      const v = this.classify(kept);
      if (v.kind !== "row") throw new Error("replay diff: a scanned line is not a row");
      this.row = v.row;
    }
    return this.row;
  }

  /**
   * The rules on the current (scanned) row, as RowProjector.project applies
   * them: the ignored paths it holds and the aligned fields are marked, the
   * aligned values get their ordinals (in rule order, each list in order).
   * False: something here only the exact path can tell (nothing is assigned then).
   */
  project(): boolean {
    const sc = this.scan;
    const roles = this.plan.roles;
    const escapes = this.plan.escapesMaySpellName(sc.ix);
    for (let k = 0; k < this.alignedAt.length; k++) this.alignedAt[k] = -1;
    for (let m = 0; m < sc.n; m++) {
      const c = sc.ix.keyId[m]!;
      if (c === 0) continue;
      const r = roles[c - 1]!;
      if (r.ignored >= 0) this.ignoredSeen[r.ignored] = 1;
      for (let j = 0; j < r.dotted.length; j++) {
        const k = r.dotted[j]!;
        const x = pathReaches(sc.ix, sc.valueTok(m), this.plan.segments[k]!, 1, escapes);
        if (x < 0) return false;
        if (x > 0) this.ignoredSeen[k] = 1;
      }
      if (r.aligned >= 0 && r.ignored < 0) this.alignedAt[r.aligned] = m;
    }
    for (let k = 0; k < this.alignedAt.length; k++) {
      const m = this.alignedAt[k]!;
      if (m >= 0 && this.alias(sc.valueTok(m), false) === null) return false;
    }
    for (let k = 0; k < this.alignedAt.length; k++) {
      const m = this.alignedAt[k]!;
      if (m < 0) continue;
      this.alignedSeen[k] = 1;
      this.sig[m] = this.alias(sc.valueTok(m), true)!;
    }
    return true;
  }

  /**
   * The aligned value at tape position t as compared: a string is its
   * ordinal, a list the ordinals and atoms it holds ("#n", "=atom", nested
   * "[...]"), any other atom "=atom". Null (declined): an object, a list
   * whose inside is not on the tape, or a string not in canonical spelling
   * (the alias table is keyed by canonical tokens). Without `assign` it only
   * checks, and returns 0.
   */
  private alias(t: number, assign: boolean): number | string | null {
    const ix = this.scan.ix;
    const kind = ix.kind(t);
    if (kind === Tok.String) {
      if ((ix.flags(t) & (Spell.Utf8 | Spell.NotPython)) !== 0) return null;
      return assign ? this.proj.ordinals.of(this.b, ix.start(t), ix.end(t)) : 0;
    }
    if (kind === Tok.Object || collapsed(ix, t)) return null;
    if (kind === Tok.Array) {
      const parts: string[] = [];
      for (let c = t + 1, end = ix.next(t); c < end; c = ix.next(c)) {
        const x = this.alias(c, assign);
        if (x === null) return null;
        if (assign) parts.push(typeof x === "number" ? `#${x}` : x);
      }
      return assign ? `[${parts.join(",")}]` : 0;
    }
    return assign ? `=${asciiText(this.b, ix.start(t), ix.end(t))}` : 0;
  }

  /** Ignored paths and aligned fields the compared rows of this run held. */
  applied(): string[] {
    const out = [...this.proj.seen];
    this.ignoredSeen.forEach((f, k) => f && out.push(this.plan.rules.ignored[k]!));
    this.alignedSeen.forEach((f, k) => f && out.push(this.plan.rules.aligned[k]!));
    return out;
  }
}

/**
 * Equal bytes a.b[as, ae) and b.b[bs, be)? Eight bytes of a row compared as
 * a float64: two different words compare equal only as +0 and -0, which
 * need seven zero bytes (a row has none); a NaN word never compares equal,
 * which only sends the pair to the exact path.
 */
function sameBytes(a: JournalSide, as: number, ae: number, b: JournalSide, bs: number, be: number): boolean {
  const n = ae - as;
  if (n !== be - bs) return false;
  if (n >= 512) return a.nb.compare(b.nb, bs, be, as, ae) === 0;
  const x = a.dv;
  const y = b.dv;
  let i = 0;
  for (; i + 8 <= n; i += 8) if (x.getFloat64(as + i, true) !== y.getFloat64(bs + i, true)) return false;
  const p = a.b;
  const q = b.b;
  for (; i < n; i++) if (p[as + i] !== q[bs + i]) return false;
  return true;
}

/** The first member at or after m that is compared (not SKIP), or n. */
function nextCompared(sc: RowScan, m: number, mode: Uint8Array): number {
  const n = sc.n;
  const cls = sc.ix.keyId;
  while (m < n && mode[cls[m]!] === SKIP) m++;
  return m;
}

/** Whether the two scanned rows are equal under the rules (false: the exact path decides). Projects both. */
function fastEqual(a: JournalSide, b: JournalSide, mode: Uint8Array): boolean {
  const A = a.scan;
  const B = b.scan;
  if (A.eventS < 0 || B.eventS < 0 || !sameBytes(a, A.eventS, A.eventE, b, B.eventS, B.eventE)) return false;
  if (!a.project() || !b.project()) return false;
  const ca = A.ix.keyId;
  const cb = B.ix.keyId;
  let i = nextCompared(A, 0, mode);
  let j = nextCompared(B, 0, mode);
  while (i < A.n && j < B.n) {
    if (mode[ca[i]!] === ALIGNED || mode[cb[j]!] === ALIGNED) {
      if (ca[i] !== cb[j] || a.sig[i] !== b.sig[j]) return false;
    } else {
      // a run of plain members on both sides: one span of bytes, keys and values
      const i0 = i;
      const j0 = j;
      while (i + 1 < A.n && j + 1 < B.n && mode[ca[i + 1]!] === PLAIN && mode[cb[j + 1]!] === PLAIN) {
        i++;
        j++;
      }
      if (!sameBytes(a, A.keyStart(i0), A.valueEnd(i), b, B.keyStart(j0), B.valueEnd(j))) return false;
    }
    i = nextCompared(A, i + 1, mode);
    j = nextCompared(B, j + 1, mode);
  }
  return i >= A.n && j >= B.n;
}

export async function diffRunJournalsFast(pathA: string, pathB: string, rules: DiffRules): Promise<JournalDiff> {
  const plan = new DiffPlan(rules);
  const mode = new Uint8Array(plan.roles.length + 1);
  mode[0] = PLAIN;
  plan.roles.forEach((r, i) => (mode[i + 1] = r.excluded || r.event || r.ignored >= 0 ? SKIP : r.aligned >= 0 ? ALIGNED : PLAIN));
  const a = new JournalSide(pathA, plan, new RowProjector(rules));
  let b: JournalSide | null = null;
  try {
    b = new JournalSide(pathB, plan, new RowProjector(rules));
    const verdict = verdictMaker(rules, () => [...a.applied(), ...b!.applied()]);
    const turns = new TurnPacer(100, 256);
    // the aligned ids' texts and the rows compared exactly are garbage the engine collects late
    const gc = new GrowthCollector(GC_GROWTH);
    for (let i = 0; ; i++) {
      if (turns.due()) await nextTurn();
      if ((i & (GC_POLL_ROWS - 1)) === 0) gc.poll();
      const ka = a.next();
      const kb = b.next();
      if (ka === Row.End && kb === Row.End) return endVerdict(i, verdict);
      if (ka === Row.End || kb === Row.End) {
        const longer = ka === Row.End ? b : a;
        const first = longer.rowObject(true);
        let extra = 1;
        while (longer.next() !== Row.End) {
          extra++;
          if (turns.due()) await nextTurn();
        }
        return lengthVerdict(i, ka === Row.End ? null : first, kb === Row.End ? null : first, extra, verdict);
      }
      if (ka === Row.Fast && kb === Row.Fast && fastEqual(a, b, mode)) continue;
      const d = comparePair(i, a.rowObject(), b.rowObject(), a.proj, b.proj, verdict);
      if (d !== null) return d;
    }
  } finally {
    a.close();
    b?.close();
  }
}
