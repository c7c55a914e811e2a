import { humanValue } from "../render/json.ts";
import { cellWidth, sanitizeCell, sanitizePieces, truncateCells, truncatePieces, type PiecedCell } from "../render/table.ts";
import { rawIsEmpty } from "../pyjson/parse.ts";
import { decodeStringPieces, decodeStringToken } from "../pyjson/encode-bytes.ts";
import { rawItems } from "../pyjson/row.ts";
import { PyNum, PyRaw, type PyObject, type PyValue } from "../pyjson/types.ts";
import { formatFixed, minutesSeconds, truncInt } from "./format.ts";

/**
 * The display model of one journal row: what the `replay <RUN_ID>` table
 * shows in its TIME · EVENT · AGENT · TASK · DETAIL columns. Pure functions
 * of the parsed row (Python semantics for truthiness and `str()`), so the
 * renderer only lays text out. Values that are not strings show as JSON
 * (`true`, `null`, `{"a": 1}`), not as Python's `str()` would print them.
 */
export interface DisplayRow {
  time: string;
  event: string;
  /** `paint` style for the EVENT cell ("" = unstyled). */
  eventStyle: string;
  agent: string;
  task: string;
  detail: string;
}

export const EVENT_STYLES: Record<string, string> = {
  run_started: "bold bright_green",
  run_completed: "bold bright_green",
  tick_start: "dim",
  agent_spawned: "bold bright_cyan",
  agent_reaped: "bold bright_red",
  task_claimed: "bright_yellow",
  task_completed: "bright_green",
  task_verification_failed: "bright_red",
  task_retried: "bright_yellow",
};

export function eventStyle(event: string): string {
  return EVENT_STYLES[event] ?? "";
}

/**
 * Field `k` of a row decoded whole: a long string a reader kept as bytes
 * (fast-lines.ts `rawStrings`) as the tree parser gives it. For the fields
 * read as numbers (`ts`, `elapsed_s`); the shown ones are read through
 * shownValue, which leaves a long string as bytes.
 */
export function shownField(row: PyObject, k: string): PyValue | undefined {
  const v = row.get(k);
  return v instanceof PyRaw && v.kind === "string" ? decodeStringToken(v.bytes, 0) : v;
}

/**
 * The fields of a row read with its long strings kept as bytes (`row`),
 * as the tree parser gives them (`get` / `has`, all a display reads): a
 * field is decoded when read (shownField), so the row is never decoded
 * whole. Iterating it yields nothing: read `row` for that.
 */
export class DecodedFields extends Map<string, PyValue> {
  row: PyObject = new Map();

  override has(key: string): boolean {
    return this.row.has(key);
  }

  override get(key: string): PyValue | undefined {
    return shownField(this.row, key);
  }
}

/**
 * Text of a cell one of whose parts is a long string still as bytes (a
 * field of megabytes): decoded piece by piece as it is laid out, so the
 * table shows its first cells, or wraps it, without holding it whole.
 * Joined, its pieces are the text the tree parser's string would give.
 */
export class LongText implements PiecedCell {
  constructor(
    readonly parts: readonly (string | PyRaw)[],
    /** Bytes of a string's token decoded at a time (tests make it small to put boundaries everywhere). */
    private readonly piece = 1 << 16,
  ) {}

  /** The text in pieces, none ending between the halves of a surrogate pair (a piece is read code point by code point). */
  *pieces(): Generator<string> {
    let carry = "";
    let since = 0;
    for (const part of this.parts) {
      for (const piece of typeof part === "string" ? [part] : decodeStringPieces(part.bytes, 0, this.piece)) {
        // each piece leaves garbage as it is read (its decoding, its sanitized copy, the strings a layout cuts from
        // it), which the engine collects too late for a field of megabytes: collected every GC_UNITS so it never piles up
        since += piece.length;
        if (since >= GC_UNITS) {
          since = 0;
          Bun.gc(true);
        }
        let t = carry + piece;
        carry = "";
        const last = t.charCodeAt(t.length - 1);
        if (last >= 0xd800 && last <= 0xdbff) {
          carry = t.slice(-1);
          t = t.slice(0, -1);
        }
        if (t !== "") yield t;
      }
    }
    if (carry !== "") yield carry;
  }

  /** The whole text (for a caller that keeps strings). */
  text(): string {
    let t = "";
    for (const p of this.pieces()) t += p;
    return t;
  }
}

/** Code units of a long text read between collections (LongText.pieces). */
const GC_UNITS = 1 << 18;

/** What a display cell shows: a string, or a LongText when a long string field is part of it. */
export type ShownText = string | LongText;

function flat(t: ShownText): string {
  return typeof t === "string" ? t : t.text();
}

/** The texts joined (a LongText when one of them is). */
function cat(...texts: ShownText[]): ShownText {
  if (texts.every((t) => typeof t === "string")) return texts.join("");
  const parts: (string | PyRaw)[] = [];
  for (const t of texts) {
    if (typeof t === "string") parts.push(t);
    else parts.push(...t.parts);
  }
  return new LongText(parts);
}

/** humanValue of a shown field, a long string left as bytes (a LongText). */
function shownValue(v: PyValue): ShownText {
  return v instanceof PyRaw && v.kind === "string" ? new LongText([v]) : humanValue(v);
}

/** The first `n` code points of the text (Python `list(s)[:n]`), read no further. */
function codePoints(t: ShownText, n: number): string[] {
  const out: string[] = [];
  if (n <= 0) return out;
  for (const piece of typeof t === "string" ? [t] : t.pieces()) {
    for (const ch of piece) {
      out.push(ch);
      if (out.length === n) return out;
    }
  }
  return out;
}

/** Python truthiness of a parsed JSON value (a missing key is falsy). */
export function truthy(v: PyValue | undefined): boolean {
  if (v === undefined || v === null || v === false) return false;
  if (v === true) return true;
  if (typeof v === "string") return v.length > 0;
  if (v instanceof PyNum) {
    const n = v.toNumber();
    return Number.isNaN(n) || n !== 0;
  }
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof PyRaw) return !rawIsEmpty(v);
  return v.size > 0;
}

/** The numeric value of a row field as Python `float(x or 0)` would use it; null if not a number. */
export function numberField(v: PyValue | undefined): number | null {
  if (!truthy(v)) return 0;
  if (v instanceof PyNum) return v.toNumber();
  if (v === true) return 1;
  if (typeof v === "string") {
    const t = v.trim();
    if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t) || /^[+-]?(inf|infinity|nan)$/i.test(t)) {
      return /nan/i.test(t) ? NaN : /inf/i.test(t) ? (t.startsWith("-") ? -Infinity : Infinity) : Number(t);
    }
  }
  return null;
}

/** `task_id`, or else the first two `task_ids` joined with `, `. */
export function taskText(row: PyObject): string {
  return flat(taskCell(row));
}

function taskCell(row: PyObject): ShownText {
  const taskId = row.get("task_id");
  if (truthy(taskId)) return shownValue(taskId!);
  const ids = row.get("task_ids");
  if (Array.isArray(ids)) return ids.slice(0, 2).map((x) => humanValue(x)).join(", ");
  if (ids instanceof PyRaw && ids.kind === "array") return rawItems(ids, 2).map((x) => humanValue(x)).join(", ");
  if (typeof ids === "string" || (ids instanceof PyRaw && ids.kind === "string")) return codePoints(shownValue(ids), 2).join(", ");
  return "";
}

function costText(v: PyValue): ShownText {
  const n = v instanceof PyNum ? v.toNumber() : v === true ? 1 : null;
  return n === null ? cat("$", shownValue(v)) : "$" + formatFixed(n, 4);
}

/** The DETAIL cell: the row's notable fields, each only when truthy, joined by two spaces. */
export function detailText(row: PyObject, event: string): string {
  return flat(detailCell(row, event));
}

function detailCell(row: PyObject, event: string): ShownText {
  const parts: ShownText[] = [];
  const get = (k: string): PyValue | undefined => row.get(k);
  const shown = (k: string): ShownText => shownValue(get(k)!);
  if (truthy(get("model"))) parts.push(shown("model"));
  if (truthy(get("role"))) parts.push(shown("role"));
  // The adapter that ran the agent, and what a resumed attempt continued (this project's own keys and events;
  // upstream rows have neither, so their tables are unchanged).
  if ((event === "agent_spawned" || event === "task_resumed") && truthy(get("adapter"))) parts.push(cat("adapter=", shown("adapter")));
  if (event === "task_resumed" && get("steps_done") !== undefined) parts.push(cat("steps_done=", shown("steps_done")));
  if (event === "task_resume_fallback" && truthy(get("reason"))) parts.push(cat("fresh: ", shown("reason")));
  if (truthy(get("cost_usd"))) parts.push(costText(get("cost_usd")!));
  // A run whose total is not all known says so (run_completed.cost_known, written by this project's runs).
  if (event === "run_completed" && get("cost_known") === false) parts.push(truthy(get("cost_usd")) ? "+ unknown" : "cost unknown");
  if ((event === "run_started" || event === "run_completed") && truthy(get("run_id"))) parts.push(cat("id=", shown("run_id")));
  if (truthy(get("max_agents"))) parts.push(cat("max_agents=", shown("max_agents")));
  if (truthy(get("ticks"))) parts.push(cat("ticks=", shown("ticks")));
  if (event === "run_completed" && truthy(get("fingerprint"))) parts.push(`fp=${codePoints(shown("fingerprint"), 12).join("")}`);
  const failed = get("failed_signals");
  if (truthy(failed)) {
    const items = Array.isArray(failed)
      ? failed.slice(0, 3).map((x) => humanValue(x))
      : failed instanceof PyRaw && failed.kind === "array"
        ? rawItems(failed, 3).map((x) => humanValue(x))
        : codePoints(shownValue(failed!), 3);
    parts.push(`failed: ${items.join(", ")}`);
  }
  if (truthy(get("tick"))) parts.push(cat("tick #", shown("tick")));
  if (REASON_EVENTS.has(event)) {
    if (truthy(get("reason"))) {
      const reason = shown("reason");
      parts.push(typeof reason === "string" ? truncateCells(reason, REASON_CELLS) : truncatePieces(reason.pieces(), REASON_CELLS));
    }
    if (truthy(get("failure_class"))) parts.push(cat("class=", shown("failure_class")));
  }
  const joined: ShownText[] = [];
  for (const p of parts) {
    if (joined.length > 0) joined.push("  ");
    joined.push(p);
  }
  return cat(...joined);
}

/** Events whose DETAIL shows the payload's `reason` (and `failure_class`): why an attempt or task failed or went back to the queue. */
export const REASON_EVENTS: ReadonlySet<string> = new Set(["agent_failed", "task_failed", "task_requeued"]);
/** A reason is clipped to this many cells (a task_failed reason may be 2000 characters of agent output). */
const REASON_CELLS = 160;

/**
 * TIME: whole seconds since the run started (`m:ss`, Python `int()` then
 * `divmod`), from the row's `ts` minus the `ts` of the first `run_started`
 * row (the first row when there is none). A row without a usable `ts`
 * falls back to its `elapsed_s`.
 */
export function timeText(row: PyObject, baseTs: number | null): string {
  const ts = row.has("ts") ? numberField(shownField(row, "ts")) : null;
  let offset: number | null = null;
  if (baseTs !== null && ts !== null && row.has("ts")) offset = truncInt(ts - baseTs);
  if (offset === null) offset = truncInt(numberField(shownField(row, "elapsed_s")) ?? 0);
  return offset === null ? "?" : minutesSeconds(offset);
}

function agentCell(row: PyObject): ShownText {
  const agentId = row.get("agent_id");
  return truthy(agentId) ? shownValue(agentId!) : "";
}

/**
 * displayRow with the cells a long string field is part of left as
 * LongText (laid out piece by piece: run-table.ts). The EVENT cell of a
 * long event name is no name the table styles or DETAIL looks for.
 */
export interface ShownRow {
  time: string;
  event: ShownText;
  eventStyle: string;
  agent: ShownText;
  task: ShownText;
  detail: ShownText;
}

export function shownRow(row: PyObject, baseTs: number | null): ShownRow {
  const ev = row.get("event");
  const event = ev === undefined ? "?" : shownValue(ev);
  const name = typeof event === "string" ? event : "";
  return {
    time: timeText(row, baseTs),
    event,
    eventStyle: eventStyle(name),
    // The full id (Python shows `<role>-<6 chars>`): an id a user copies from the table must work.
    agent: agentCell(row),
    task: taskCell(row),
    detail: detailCell(row, name),
  };
}

export function displayRow(row: PyObject, baseTs: number | null): DisplayRow {
  const d = shownRow(row, baseTs);
  return { ...d, event: flat(d.event), agent: flat(d.agent), task: flat(d.task), detail: flat(d.detail) };
}

const PLAIN_CELL = /^[\x20-\x7e]*$/;

/** Terminal cells of a cell's text once sanitized (plain printable ASCII: its length), a long one read piece by piece. */
function cellsOf(text: ShownText): number {
  if (typeof text === "string") return PLAIN_CELL.test(text) ? text.length : cellWidth(sanitizeCell(text));
  let w = 0;
  for (const piece of sanitizePieces(text.pieces())) w += cellWidth(piece);
  return w;
}

/** Widen `ids` to the AGENT and TASK cells of `row` (what displayRow shows in them). */
export function measureIds(row: PyObject, ids: { agent: number; task: number }): void {
  ids.agent = Math.max(ids.agent, cellsOf(agentCell(row)));
  ids.task = Math.max(ids.task, cellsOf(taskCell(row)));
}
