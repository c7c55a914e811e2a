import { humanValue } from "../render/json.ts";
import { cellWidth, sanitizeCell, truncateCells } from "../render/table.ts";
import { rawIsEmpty } from "../pyjson/parse.ts";
import { decodeStringToken } from "../pyjson/encode-bytes.ts";
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
 * Field `k` of a row as the display reads it: a long string a reader kept
 * as bytes (fast-lines.ts `rawStrings`) decoded, as the tree parser gives
 * it, so the table shows what it shows for any row. Every field the
 * display reads is read through this.
 */
export function shownField(row: PyObject, k: string): PyValue | undefined {
  const v = row.get(k);
  return v instanceof PyRaw && v.kind === "string" ? decodeStringToken(v.bytes, 0) : v;
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

/** First `n` code points (Python slicing `s[:n]`). */
function head(s: string, n: number): string {
  return Array.from(s).slice(0, n).join("");
}

/** `task_id`, or else the first two `task_ids` joined with `, `. */
export function taskText(row: PyObject): string {
  const taskId = shownField(row, "task_id");
  if (truthy(taskId)) return humanValue(taskId);
  const ids = shownField(row, "task_ids");
  if (Array.isArray(ids)) return ids.slice(0, 2).map((x) => humanValue(x)).join(", ");
  if (ids instanceof PyRaw && ids.kind === "array") return rawItems(ids, 2).map((x) => humanValue(x)).join(", ");
  if (typeof ids === "string") return Array.from(ids).slice(0, 2).join(", ");
  return "";
}

function costText(v: PyValue): string {
  const n = v instanceof PyNum ? v.toNumber() : v === true ? 1 : null;
  return "$" + (n === null ? humanValue(v) : formatFixed(n, 4));
}

/** The DETAIL cell: the row's notable fields, each only when truthy, joined by two spaces. */
export function detailText(row: PyObject, event: string): string {
  const parts: string[] = [];
  const get = (k: string): PyValue | undefined => shownField(row, k);
  if (truthy(get("model"))) parts.push(humanValue(get("model")));
  if (truthy(get("role"))) parts.push(humanValue(get("role")));
  // The adapter that ran the agent, and what a resumed attempt continued (this project's own keys and events;
  // upstream rows have neither, so their tables are unchanged).
  if ((event === "agent_spawned" || event === "task_resumed") && truthy(get("adapter"))) parts.push(`adapter=${humanValue(get("adapter"))}`);
  if (event === "task_resumed" && get("steps_done") !== undefined) parts.push(`steps_done=${humanValue(get("steps_done")!)}`);
  if (event === "task_resume_fallback" && truthy(get("reason"))) parts.push(`fresh: ${humanValue(get("reason"))}`);
  if (truthy(get("cost_usd"))) parts.push(costText(get("cost_usd")!));
  // A run whose total is not all known says so (run_completed.cost_known, written by this project's runs).
  if (event === "run_completed" && get("cost_known") === false) parts.push(truthy(get("cost_usd")) ? "+ unknown" : "cost unknown");
  if ((event === "run_started" || event === "run_completed") && truthy(get("run_id"))) parts.push(`id=${humanValue(get("run_id"))}`);
  if (truthy(get("max_agents"))) parts.push(`max_agents=${humanValue(get("max_agents"))}`);
  if (truthy(get("ticks"))) parts.push(`ticks=${humanValue(get("ticks"))}`);
  if (event === "run_completed" && truthy(get("fingerprint"))) parts.push(`fp=${head(humanValue(get("fingerprint")), 12)}`);
  const failed = get("failed_signals");
  if (truthy(failed)) {
    const items = Array.isArray(failed)
      ? failed.slice(0, 3).map((x) => humanValue(x))
      : failed instanceof PyRaw && failed.kind === "array"
        ? rawItems(failed, 3).map((x) => humanValue(x))
        : Array.from(humanValue(failed)).slice(0, 3);
    parts.push(`failed: ${items.join(", ")}`);
  }
  if (truthy(get("tick"))) parts.push(`tick #${humanValue(get("tick"))}`);
  if (REASON_EVENTS.has(event)) {
    if (truthy(get("reason"))) parts.push(truncateCells(humanValue(get("reason")), REASON_CELLS));
    if (truthy(get("failure_class"))) parts.push(`class=${humanValue(get("failure_class"))}`);
  }
  return parts.join("  ");
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

function agentText(row: PyObject): string {
  const agentId = shownField(row, "agent_id");
  return truthy(agentId) ? humanValue(agentId) : "";
}

export function displayRow(row: PyObject, baseTs: number | null): DisplayRow {
  const ev = shownField(row, "event");
  const event = ev === undefined ? "?" : humanValue(ev);
  return {
    time: timeText(row, baseTs),
    event,
    eventStyle: eventStyle(event),
    // The full id (Python shows `<role>-<6 chars>`): an id a user copies from the table must work.
    agent: agentText(row),
    task: taskText(row),
    detail: detailText(row, event),
  };
}

const PLAIN_CELL = /^[\x20-\x7e]*$/;

/** Terminal cells of a cell's text once sanitized (plain printable ASCII: its length). */
function cellsOf(text: string): number {
  return PLAIN_CELL.test(text) ? text.length : cellWidth(sanitizeCell(text));
}

/** Widen `ids` to the AGENT and TASK cells of `row` (what displayRow shows in them). */
export function measureIds(row: PyObject, ids: { agent: number; task: number }): void {
  ids.agent = Math.max(ids.agent, cellsOf(agentText(row)));
  ids.task = Math.max(ids.task, cellsOf(taskText(row)));
}
