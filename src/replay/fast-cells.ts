import { paint } from "../render/ansi.ts";
import { EVENT_STYLES, REASON_EVENTS } from "./display.ts";
import { DISPLAY_FIELDS, type LoadedRow } from "./fast-row.ts";
import { FAST_LINE_MAX } from "./fast-lines.ts";
import { PlainLines } from "./plain-lines.ts";
import { formatFixed } from "./format.ts";
import { asciiText, BACKSLASH, copyTo, QUOTE, tokenIs } from "../codec/bytes.ts";
import { scannedString, Spell, stringTokenEnd } from "../codec/row-index.ts";

/**
 * The cells of a row of `replay <RUN_ID>`'s table straight from the bytes
 * of a row FastRowReader loaded: no py-json values, no strings, nothing
 * for the collector, for the common row whose display fields are plain
 * strings (no escape: a loaded string without a backslash is printable
 * ASCII) and plain numbers. Any other row is DECLINED (false), and the
 * caller shows it through displayRow (display.ts), which is the
 * reference: each function here states the branch of it it mirrors.
 */

const slot = (name: (typeof DISPLAY_FIELDS)[number]): number => DISPLAY_FIELDS.indexOf(name);
const EVENT = slot("event");
const TS = slot("ts");
const ELAPSED = slot("elapsed_s");
const AGENT = slot("agent_id");
const TASK_ID = slot("task_id");
const TASK_IDS = slot("task_ids");
const MODEL = slot("model");
const ROLE = slot("role");
const COST = slot("cost_usd");
const TICK = slot("tick");
const FAILED = slot("failed_signals");
/** Detail parts shown as their text when truthy, in order. */
const TEXT_PARTS = [MODEL, ROLE];
/** Fields detailText shows for any event: a row holding one takes displayRow. */
const SHOWN_ALWAYS = ["max_agents", "ticks"].map((f) => DISPLAY_FIELDS.indexOf(f as never));
/**
 * Fields detailText shows only for some events (EVENT_SHOWN): a row of
 * such an event holding one takes displayRow (a failure's reason: rare,
 * and clipped by cell width); on any other event they are not shown.
 */
const SHOWN_BY_EVENT = ["run_id", "fingerprint", "reason", "failure_class", "cost_known", "adapter", "steps_done"].map((f) => DISPLAY_FIELDS.indexOf(f as never));
/** Every event detailText reads a SHOWN_BY_EVENT field of (REASON_EVENTS and the events it names). */
const EVENT_SHOWN = [...REASON_EVENTS, "task_resume_fallback", "agent_spawned", "task_resumed", "run_started", "run_completed"].map((e) => new TextEncoder().encode(e));

/**
 * The row's event, a string b[s, e) (quotes included), is one of
 * EVENT_SHOWN as written (read() declines an event spelled with an escape).
 */
function eventShowsMore(b: Uint8Array, s: number, e: number): boolean {
  for (const name of EVENT_SHOWN) if (tokenIs(b, s, e, name)) return true;
  return false;
}

/** True when b[s, e) is a string of printable ASCII without escapes (its text: b[s+1, e-1)). */
export function plainString(b: Uint8Array, s: number, e: number): boolean {
  if (b[s] !== QUOTE) return false;
  for (let i = s + 1; i < e - 1; i++) {
    const c = b[i]!;
    if (c < 0x20 || c > 0x7e || c === BACKSLASH) return false;
  }
  return true;
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/** True when b[s, e) is a JSON number (not NaN/Infinity: those start otherwise). */
export function plainNumber(b: Uint8Array, s: number): boolean {
  return isDigit(b[s]!) || (b[s] === 0x2d && isDigit(b[s + 1]!));
}

const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);

/**
 * `Number(text)` of the validated JSON number b[s, e): exact without a
 * string when it has at most 15 digits and no exponent (both the digits
 * and the power of ten are exact doubles, so one division rounds
 * correctly) or its whole part dominates (wholeDominated: a timestamp),
 * else through the text.
 */
export function numberAt(b: Uint8Array, s: number, e: number): number {
  let i = s;
  const neg = b[i] === 0x2d;
  if (neg) i++;
  let m = 0;
  let digits = 0;
  let frac = -1;
  /** The digits before the point, and the fraction's digits as an integer (wholeDominated's inputs). */
  let whole = 0;
  let f = 0;
  for (; i < e; i++) {
    const c = b[i]!;
    if (c === 0x2e) {
      frac = 0;
      whole = m;
      continue;
    }
    if (!isDigit(c)) return Number(asciiText(b, s, e));
    m = m * 10 + (c - 0x30);
    if (m !== 0) digits++;
    if (frac >= 0) {
      frac++;
      f = f * 10 + (c - 0x30);
    }
  }
  if (digits > 15 || frac > 22) {
    const v = frac > 0 ? wholeDominated(whole, f, frac) : NaN;
    if (!Number.isNaN(v)) return neg ? -v : v;
    return Number(asciiText(b, s, e));
  }
  const v = frac > 0 ? m / POW10[frac]! : m;
  return neg ? -v : v;
}

const TWO53 = 2 ** 53;

/** The binade [2^p, 2^(p+1)) of the last whole part wholeDominated met, and its unit 2^(52 - p). */
let binadeLow = 1;
let binadeHigh = 0;
let binadeUnit = 1;

function setBinade(whole: number): void {
  let p = Math.floor(Math.log2(whole));
  if (2 ** p > whole) p--;
  else if (2 ** (p + 1) <= whole) p++;
  binadeLow = 2 ** p;
  binadeHigh = 2 ** (p + 1);
  binadeUnit = 2 ** (52 - p);
}

/**
 * The double nearest the decimal I.F (`whole` = I, `f` = F as an integer
 * of `k` digits; no sign), exactly as Number() rounds it, when its whole
 * part dominates (a timestamp's 17 digits: 10 whole, 7 fraction); NaN
 * when this way cannot be exact. For 1 <= I < 2^53 with 2^p <= I <
 * 2^(p+1), every double in [2^p, 2^(p+1)) is a multiple of 2^-sh, sh =
 * 52 - p: the value in those units is I * 2^sh plus F * 2^sh / 10^k,
 * whose whole part and remainder integer arithmetic in doubles gives
 * exactly while F * 2^sh < 2^53; rounding the remainder half to even (in
 * those units) is then Number()'s rounding, and scaling back by 2^-sh is exact.
 * (I and F are exact: each is below 2^53 when this is taken, and their
 * digits accumulate exactly below that.)
 */
function wholeDominated(whole: number, f: number, k: number): number {
  if (k > 15 || whole < 1 || whole >= TWO53) return NaN;
  // consecutive timestamps share their binade: its unit is worked out once
  if (whole < binadeLow || whole >= binadeHigh) setBinade(whole);
  const unit = binadeUnit;
  const n = f * unit;
  if (n >= TWO53) return NaN;
  const ten = POW10[k]!;
  let q = Math.floor(n / ten);
  let r = n - q * ten;
  if (r < 0) {
    q--;
    r += ten;
  } else if (r >= ten) {
    q++;
    r -= ten;
  }
  // half to even: even in the result's last unit, not in q's
  const units = whole * unit + q;
  return (2 * r > ten || (2 * r === ten && units % 2 === 1) ? units + 1 : units) / unit;
}

/**
 * `Math.trunc(Number(text) - base)` of the JSON number b[s, e) (a `ts`),
 * without the text when an estimate (integer part exact, fraction to
 * ~1e-15) lies far from a whole number: the estimate is within ~1e-6 of
 * the exact difference. null when the difference is not finite.
 */
function secondsSince(b: Uint8Array, s: number, e: number, base: number): number | null {
  let i = s;
  const neg = b[i] === 0x2d;
  if (neg) i++;
  let whole = 0;
  for (; i < e && isDigit(b[i]!); i++) whole = whole * 10 + (b[i]! - 0x30);
  let frac = 0;
  let scale = 1;
  if (b[i] === 0x2e) {
    for (i++; i < e && isDigit(b[i]!); i++) {
      if (scale < 1e15) {
        frac = frac * 10 + (b[i]! - 0x30);
        scale *= 10;
      }
    }
  }
  // below 1e10 an ulp is under 2e-6, so the estimate's error stays far below the 1e-4 margin
  if (i === e && whole < 1e10) {
    const v = whole + frac / scale;
    const d = (neg ? -v : v) - base;
    const f = d - Math.floor(d);
    if (Math.abs(d) < 1e10 && f > 1e-4 && f < 1 - 1e-4) return Math.trunc(d);
  }
  const d = Number(asciiText(b, s, e)) - base;
  return Number.isFinite(d) ? Math.trunc(d) : null;
}

/** Spans of a row's AGENT and TASK cells (task: up to two ids joined by ", "). */
export class IdCells {
  agentS = 0;
  agentE = 0;
  /** Task ids shown: 0, 1 or 2. */
  tasks = 0;
  readonly taskS = new Int32Array(2);
  readonly taskE = new Int32Array(2);

  /** Read them from the loaded row; false: displayRow must (agentText, taskText). */
  read(r: LoadedRow): boolean {
    const b = r.mem;
    const as = r.fieldS[AGENT]!;
    this.agentS = this.agentE = 0;
    if (as >= 0) {
      if (!plainString(b, as, r.fieldE[AGENT]!)) return false;
      this.agentS = as + 1;
      this.agentE = r.fieldE[AGENT]! - 1;
    }
    this.tasks = 0;
    const ts = r.fieldS[TASK_ID]!;
    if (ts >= 0) {
      // a falsy task_id ("") falls through to task_ids; any other non-string value is declined
      if (!plainString(b, ts, r.fieldE[TASK_ID]!)) return false;
      if (r.fieldE[TASK_ID]! - ts > 2) return this.task(ts + 1, r.fieldE[TASK_ID]! - 1);
    }
    const ls = r.fieldS[TASK_IDS]!;
    return ls < 0 || this.taskList(b, ls, r.fieldE[TASK_IDS]!);
  }

  private task(s: number, e: number): boolean {
    this.taskS[this.tasks] = s;
    this.taskE[this.tasks] = e;
    this.tasks++;
    return true;
  }

  /** The first two items of a list of plain strings (writer spelling: `["a", "b"]`). */
  private taskList(b: Uint8Array, s: number, e: number): boolean {
    if (b[s] !== 0x5b) return false;
    let p = s + 1;
    while (this.tasks < 2) {
      while (b[p] === 0x20) p++;
      if (b[p] === 0x5d) return true;
      if (b[p] !== QUOTE) return false;
      // the item's closing quote; an escaped id is displayRow's to unescape
      const i = stringTokenEnd(b, p, e) - 1;
      if (i < 0 || (scannedString.flags & Spell.Escaped) !== 0) return false;
      this.task(p + 1, i);
      p = i + 1;
      while (b[p] === 0x20) p++;
      if (b[p] === 0x2c) p++;
      else if (b[p] !== 0x5d) return false;
    }
    return p <= e;
  }

  get agentLength(): number {
    return this.agentE - this.agentS;
  }

  get taskLength(): number {
    if (this.tasks === 0) return 0;
    const one = this.taskE[0]! - this.taskS[0]!;
    return this.tasks === 1 ? one : one + 2 + this.taskE[1]! - this.taskS[1]!;
  }
}

/** A style's escapes around a text as bytes ([] when colour is off). */
function styleBytes(style: string): [Uint8Array, Uint8Array] {
  const [open, close] = paint(style, "\u0000").split("\u0000") as [string, string];
  return [new TextEncoder().encode(open), new TextEncoder().encode(close)];
}

const CELL_GAP = 2;
/** The run table's TASK and DETAIL columns (run-table.ts runTable), the ones a narrow terminal folds. */
const TASK_COLUMN = 3;
const DETAIL_COLUMN = 4;
/** A folded TASK cell's label (runTable's `fold`). */
const TASK_LABEL = new TextEncoder().encode("task: ");
const NO_LABEL = new Uint8Array(0);

/** What FastTableWriter needs of the run table's layout (render/table.ts Table). */
export interface TableLayout {
  readonly widths: readonly number[];
  readonly folded: ReadonlySet<number>;
  readonly foldIndent: number;
  readonly total: number;
}
const SPACES = 0x20;
/** Room for a row's detail and its parts' prefixes: a longer one (a long row's) declines the row to the table code (read). */
const DETAIL_MAX = 1 << 17;
const FLUSH_AT = 1 << 16;
const NONE: Uint8Array = new Uint8Array(0);

/**
 * The cells of a plain row (printable ASCII, so a character is a terminal
 * cell and sanitizing changes nothing), each a span of some buffer: TIME,
 * EVENT, AGENT, TASK (its ids joined by ", ") and DETAIL, exactly the
 * texts displayRow gives the row. What FastTableWriter lays out.
 */
export class CellSpans {
  // A cell to a line, read across: the buffer its text is in (B), and its span there, start (S) to end (E).
  timeB = NONE; timeS = 0; timeE = 0;
  eventB = NONE; eventS = 0; eventE = 0;
  agentB = NONE; agentS = 0; agentE = 0;
  taskB = NONE; taskS = 0; taskE = 0;
  detailB = NONE; detailS = 0; detailE = 0;
}

/** minutesSeconds(offset) written at out[0]; its length, or -1 where displayRow must decide. */
function writeTime(offset: number, out: Uint8Array): number {
  // String(m) would switch to exponents far beyond any run's length
  if (!Number.isFinite(offset) || Math.abs(offset) > 1e15) return -1;
  const m = Math.floor(offset / 60);
  const sec = offset - m * 60;
  let n = writeInt(out, 0, m);
  out[n++] = 0x3a;
  out[n++] = 0x30 + Math.floor(sec / 10);
  out[n++] = 0x30 + (sec % 10);
  return n;
}

/** timeText of a row whose ts is the plain JSON number b[s, e), measured from baseTs, at out[0]; its length or -1. */
export function timeFromTs(b: Uint8Array, s: number, e: number, baseTs: number, out: Uint8Array): number {
  const offset = secondsSince(b, s, e, baseTs);
  return offset === null ? -1 : writeTime(offset, out);
}

/**
 * The cells of a row FastRowReader loaded, straight from its bytes, when
 * they are plain (read() DECLINES any other row: displayRow must show it).
 */
export class RowCells extends CellSpans {
  readonly ids = new IdCells();
  /** The last read() found the AGENT and TASK cells plain (their widths: ids.agentLength, ids.taskLength). */
  idsPlain = false;
  /** TIME is still the row's ts lexeme (read before the time base was known): resolve it with timeFromTs. */
  tsPending = false;
  private readonly time = new Uint8Array(32);
  private readonly detail = new Uint8Array(DETAIL_MAX);
  private detailLen = 0;
  private readonly tasks = new Uint8Array(2 * FAST_LINE_MAX + 2);

  /** `baseTs` undefined: not known yet (the scan pass); a row with a `ts` then keeps its lexeme (tsPending). */
  read(r: LoadedRow, baseTs: number | null | undefined): boolean {
    const ids = this.ids;
    this.idsPlain = ids.read(r);
    if (!this.idsPlain || r.fieldS[EVENT]! < 0 || !this.readTime(r, baseTs) || !this.readDetail(r)) return false;
    const b = r.mem;
    const es = r.fieldS[EVENT]!;
    const ee = r.fieldE[EVENT]!;
    if (!plainString(b, es, ee)) return false;
    this.eventB = b;
    this.eventS = es + 1;
    this.eventE = ee - 1;
    this.agentB = b;
    this.agentS = ids.agentS;
    this.agentE = ids.agentE;
    if (ids.tasks < 2) {
      this.taskB = b;
      this.taskS = ids.tasks === 0 ? 0 : ids.taskS[0]!;
      this.taskE = ids.tasks === 0 ? 0 : ids.taskE[0]!;
    } else {
      // "a, b" in a scratch buffer
      const t = this.tasks;
      let p = copyTo(b, ids.taskS[0]!, ids.taskE[0]!, t, 0);
      t[p++] = 0x2c;
      t[p++] = SPACES;
      this.taskB = t;
      this.taskS = 0;
      this.taskE = copyTo(b, ids.taskS[1]!, ids.taskE[1]!, t, p);
      if (this.taskE > t.length) return false;
    }
    // a typed array drops writes past its end while the count runs on: a longer detail (a long row's) is the table code's
    if (this.detailLen > this.detail.length) return false;
    this.detailB = this.detail;
    this.detailS = 0;
    this.detailE = this.detailLen;
    return true;
  }

  /** timeText: `m:ss` of ts - baseTs, else of elapsed_s (a missing one: 0). */
  private readTime(r: LoadedRow, baseTs: number | null | undefined): boolean {
    const b = r.mem;
    const ts = r.fieldS[TS]!;
    this.tsPending = false;
    if (ts >= 0) {
      if (!plainNumber(b, ts)) return false;
      if (baseTs === undefined) {
        this.tsPending = true;
        this.timeB = b;
        this.timeS = ts;
        this.timeE = r.fieldE[TS]!;
        return true;
      }
      if (baseTs !== null) return this.timeOf(timeFromTs(b, ts, r.fieldE[TS]!, baseTs, this.time));
    }
    const es = r.fieldS[ELAPSED]!;
    if (es >= 0 && !plainNumber(b, es)) return false;
    return this.timeOf(writeTime(es < 0 ? 0 : Math.trunc(numberAt(b, es, r.fieldE[ELAPSED]!)), this.time));
  }

  private timeOf(len: number): boolean {
    this.timeB = this.time;
    this.timeS = 0;
    this.timeE = len;
    return len >= 0;
  }

  /** detailText for a row (with an event: read() checked) with no field its event shows but these: model, role, cost_usd, failed_signals, tick. */
  private readDetail(r: LoadedRow): boolean {
    for (let i = 0; i < SHOWN_ALWAYS.length; i++) if (r.fieldS[SHOWN_ALWAYS[i]!]! >= 0) return false;
    for (let i = 0; i < SHOWN_BY_EVENT.length; i++) {
      if (r.fieldS[SHOWN_BY_EVENT[i]!]! >= 0 && eventShowsMore(r.mem, r.fieldS[EVENT]!, r.fieldE[EVENT]!)) return false;
    }
    const b = r.mem;
    this.detailLen = 0;
    for (let k = 0; k < TEXT_PARTS.length; k++) {
      const f = TEXT_PARTS[k]!;
      const s = r.fieldS[f]!;
      if (s < 0) continue;
      const e = r.fieldE[f]!;
      if (!plainString(b, s, e)) return false;
      if (e - s > 2) this.part(b, s + 1, e - 1);
    }
    const cs = r.fieldS[COST]!;
    if (cs >= 0) {
      if (!plainNumber(b, cs)) return false;
      const n = numberAt(b, cs, r.fieldE[COST]!);
      if (n !== 0) this.cost(n);
    }
    if (r.fieldS[FAILED]! >= 0 && !this.failed(b, r.fieldS[FAILED]!)) return false;
    const ks = r.fieldS[TICK]!;
    if (ks >= 0) {
      const ke = r.fieldE[TICK]!;
      let zero = true;
      for (let i = b[ks] === 0x2d ? ks + 1 : ks; i < ke; i++) {
        if (!isDigit(b[i]!)) return false; // a float tick shows as Python would print it
        if (b[i] !== 0x30) zero = false;
      }
      if (ks === ke || (b[ks] === 0x2d && ks + 1 === ke)) return false;
      if (!zero) {
        this.partText("tick #");
        this.copyDetail(b, ks, ke);
      }
    }
    return true;
  }

  /** `failed: a, b, c` of a failed_signals list whose first three items are plain strings (writer spelling); false for any other value. */
  private failed(b: Uint8Array, s: number): boolean {
    if (b[s] !== 0x5b) return false;
    let p = s + 1;
    while (b[p] === SPACES) p++;
    if (b[p] === 0x5d) return true; // [] is falsy: no part
    this.partText("failed: ");
    for (let k = 0; k < 3; k++) {
      if (b[p] !== QUOTE) return false;
      const i = stringTokenEnd(b, p) - 1;
      if (i < 0 || (scannedString.flags & Spell.Escaped) !== 0) return false;
      if (k > 0) this.literal(", ");
      this.copyDetail(b, p + 1, i);
      p = i + 1;
      while (b[p] === SPACES) p++;
      if (b[p] === 0x5d) return true;
      if (b[p] !== 0x2c) return false;
      p++;
      while (b[p] === SPACES) p++;
    }
    return true;
  }

  private part(b: Uint8Array, s: number, e: number): void {
    this.partText("");
    this.copyDetail(b, s, e);
  }

  /** Start a detail part (two spaces after the previous one), with a literal prefix. */
  private partText(prefix: string): void {
    if (this.detailLen > 0) {
      this.detail[this.detailLen++] = SPACES;
      this.detail[this.detailLen++] = SPACES;
    }
    this.literal(prefix);
  }

  private literal(text: string): void {
    for (let i = 0; i < text.length; i++) this.detail[this.detailLen++] = text.charCodeAt(i);
  }

  private copyDetail(b: Uint8Array, s: number, e: number): void {
    // past the buffer's end the bytes are dropped, the length still counts them (read() then declines the row)
    this.detailLen = copyTo(b, s, e, this.detail, this.detailLen);
  }

  /** costText: `$` and formatFixed(n, 4), without BigInts when n * 1e4 is far from a tie. */
  private cost(n: number): void {
    this.partText("$");
    const a = Math.abs(n);
    const x = a * 1e4;
    const f = x - Math.floor(x);
    if (a >= 1e4 || Math.abs(f - 0.5) < 1e-6) {
      const t = formatFixed(n, 4);
      for (let i = 0; i < t.length; i++) this.detail[this.detailLen++] = t.charCodeAt(i);
      return;
    }
    const q = Math.round(x);
    if (n < 0) this.detail[this.detailLen++] = 0x2d;
    this.detailLen = writeInt(this.detail, this.detailLen, Math.floor(q / 1e4));
    this.detail[this.detailLen++] = 0x2e;
    const four = q % 1e4;
    for (let d = 1000; d >= 1; d /= 10) this.detail[this.detailLen++] = 0x30 + (Math.floor(four / d) % 10);
  }
}

/**
 * Writes table lines as bytes into its buffer; `flushable()` says when the
 * buffer should go out (the caller awaits the write, then `reset()`s).
 */
export class FastTableWriter extends PlainLines {
  private readonly cells = new RowCells();
  private readonly dim = styleBytes("dim");
  private readonly eventNames = Object.keys(EVENT_STYLES).map((k) => new TextEncoder().encode(k));
  private readonly eventStyles = Object.values(EVENT_STYLES).map(styleBytes);

  /** The table's column widths (TIME, EVENT, AGENT, TASK, DETAIL; 0 for a folded one). */
  private readonly widths: readonly number[];
  /** TASK is folded below the row (DETAIL then is too). */
  private readonly taskFolded: boolean;
  /** DETAIL is folded below the row. */
  private readonly detailFolded: boolean;
  private readonly foldIndent: number;
  /** Cells on a line of a folded cell. */
  private readonly foldWidth: number;

  constructor(layout: TableLayout, private readonly baseTs: number | null) {
    super(FLUSH_AT * 2);
    this.widths = layout.widths;
    this.taskFolded = layout.folded.has(TASK_COLUMN);
    this.detailFolded = layout.folded.has(DETAIL_COLUMN);
    this.foldIndent = layout.foldIndent;
    this.foldWidth = Math.max(1, layout.total - layout.foldIndent);
  }

  flushable(): boolean {
    return this.pos >= FLUSH_AT;
  }

  reset(): void {
    this.pos = 0;
  }

  /** Append the loaded row's line; false (nothing appended) when displayRow must make it. */
  row(r: LoadedRow): boolean {
    return this.cells.read(r, this.baseTs) && this.line(this.cells);
  }

  /**
   * Append the line of a row's plain cells (TIME resolved); false (nothing
   * appended) when they need the general table code: TIME wider than its
   * column, or a column too narrow for a cut.
   */
  line(c: CellSpans): boolean {
    const w = this.widths;
    const timeLen = c.timeE - c.timeS;
    // the cells but DETAIL are cut to their column with "…" (truncateCells: one cell each, as plain ASCII is); a folded column is not in the row
    if (timeLen > w[0]! || w[1]! < 2 || w[2]! < 2 || (!this.taskFolded && w[3]! < 2) || (!this.detailFolded && w[4]! < 1)) return false;
    const detailLen = c.detailE - c.detailS;
    this.room(w[0]! + w[1]! + w[2]! + w[3]! + detailLen + 128);
    const start = this.pos;
    // cell(text, width, style): padding outside the styled span (cf. run-table.ts plainRowText); the row's last
    // cell is padded too, and the padding trimmed with the line (Table.format pads it not, then trims the line)
    this.styled(c.timeB, c.timeS, c.timeE, this.dim, w[0]!);
    this.pad(w[0]! - timeLen + CELL_GAP);
    this.pad(w[1]! - this.styled(c.eventB, c.eventS, c.eventE, this.eventStyle(c.eventB, c.eventS, c.eventE), w[1]!) + CELL_GAP);
    this.pad(w[2]! - this.styled(c.agentB, c.agentS, c.agentE, null, w[2]!) + CELL_GAP);
    if (!this.taskFolded) this.pad(w[3]! - this.styled(c.taskB, c.taskS, c.taskE, null, w[3]!) + CELL_GAP);
    if (this.detailFolded) {
      // a narrow terminal: TASK (labelled) if folded, then DETAIL, each below the row when not empty
      this.endLine(start);
      if (this.taskFolded && c.taskE > c.taskS) this.foldedCell(TASK_LABEL, c.taskB, c.taskS, c.taskE, this.foldWidth, this.foldIndent);
      if (detailLen > 0) this.foldedCell(NO_LABEL, c.detailB, c.detailS, c.detailE, this.foldWidth, this.foldIndent);
    } else if (detailLen <= w[4]!) {
      this.copy(c.detailB, c.detailS, c.detailE);
      this.endLine(start);
    } else this.wrapLines(c.detailB, c.detailS, c.detailE, w[4]!, w[0]! + w[1]! + w[2]! + w[3]! + 4 * CELL_GAP, start, true);
    return true;
  }

  /** eventStyle(event) of the event text b[s, e). */
  private eventStyle(b: Uint8Array, s: number, e: number): [Uint8Array, Uint8Array] | null {
    const n = e - s;
    outer: for (let k = 0; k < this.eventNames.length; k++) {
      const name = this.eventNames[k]!;
      if (name.length !== n) continue;
      for (let i = 0; i < n; i++) if (name[i] !== b[s + i]) continue outer;
      return this.eventStyles[k]!;
    }
    return null;
  }
}


/** String(n) of an integer below 1e21 in magnitude, written at o; returns the end. */
export function writeInt(b: Uint8Array, o: number, n: number): number {
  if (n < 0) {
    b[o++] = 0x2d;
    n = -n;
  }
  let digits = 1;
  while (n >= POW10[digits]!) digits++;
  for (let i = digits - 1; i >= 0; i--) {
    b[o + i] = 0x30 + (n % 10);
    n = Math.floor(n / 10);
  }
  return o + digits;
}
