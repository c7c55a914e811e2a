import { existsSync } from "node:fs";
import { join } from "node:path";
import { physicalLines } from "../fsutil/lines.ts";
import { refuseContent } from "../journal/content.ts";
import { classifyLine } from "../journal/reader.ts";
import { pyEquals, pyEqualsAsMember, pyStr } from "../pyjson/python.ts";
import type { PyObject } from "../pyjson/types.ts";
import { deriveReplayKey, keyScheme } from "./key.ts";

/**
 * `replay diff` over two ReplayGateway logs, `<run_dir>/events.jsonl`
 * (upstream-parity §5.2): the first index where the projections
 * `(kind, key, response, event, payload_hash)` differ by Python `==`
 * (`1 == 1.0 == true`, key order irrelevant), or where one log ends first.
 * Both logs are streamed in lockstep (one row of each in memory).
 *
 * Upstream skips undecodable lines silently and crashes on a parsed line
 * that is not an object; here both kinds of line are skipped and counted
 * (`skipped_lines`), so the verdict says what it did not compare.
 */

export const GATEWAY_LOG = "events.jsonl";
const PROJECTION = ["kind", "key", "response", "event", "payload_hash"] as const;
const MUTATION = "provider_state_mutation";

export type GatewayReasonCode = "" | "response_mismatch" | "length_mismatch" | "provider_state_mutation";

export interface GatewayDiff {
  diverged: boolean;
  index: number | null;
  reason: string;
  reason_code: GatewayReasonCode;
  mutation_kind: string | null;
  a_event: PyObject | null;
  b_event: PyObject | null;
  /** Rows compared on each side (the whole log). */
  a_rows: number;
  b_rows: number;
  /** Lines skipped: not JSON, not UTF-8, or not an object. */
  skipped_lines: { a: number; b: number };
  /** Key schemes seen in each log (`v1`, `unversioned`). */
  key_schemes: { a: string[]; b: string[] };
  notes: string[];
}

export function gatewayLogPath(runDir: string): string {
  return join(runDir, GATEWAY_LOG);
}

export function hasGatewayLog(runDir: string): boolean {
  return existsSync(gatewayLogPath(runDir));
}

interface Side {
  rows: Generator<PyObject>;
  count: number;
  skipped: number;
  schemes: Set<string>;
}

function* rowsOf(path: string, side: { skipped: number; schemes: Set<string> }): Generator<PyObject> {
  for (const line of physicalLines(path)) {
    const v = classifyLine(line.bytes);
    if (v.kind === "blank") continue;
    if (v.kind !== "row") {
      side.skipped++;
      continue;
    }
    if (v.row.has("key")) side.schemes.add(keyScheme(v.row.get("key")));
    yield v.row;
  }
}

function side(path: string): Side {
  const s: Side = { rows: undefined as never, count: 0, skipped: 0, schemes: new Set() };
  s.rows = rowsOf(path, s);
  return s;
}

function next(s: Side): PyObject | null {
  const r = s.rows.next();
  if (r.done) return null;
  s.count++;
  return r.value;
}

/** The projections are equal tuples: each member compared as a tuple compares it (a NaN equals the NaN json.loads made it). */
function sameProjection(a: PyObject, b: PyObject): boolean {
  return PROJECTION.every((k) => pyEqualsAsMember(a.get(k), b.get(k)));
}

function isMutation(row: PyObject | null): boolean {
  return row !== null && (pyStr(row.get("event"), "") === MUTATION || pyStr(row.get("kind"), "") === MUTATION);
}

/** A provider_state_mutation row on either side at the divergence names it (a-side first). */
function attribute(d: GatewayDiff, i: number): void {
  const which = isMutation(d.a_event) ? "run_a" : isMutation(d.b_event) ? "run_b" : null;
  if (which === null) return;
  const row = which === "run_a" ? d.a_event! : d.b_event!;
  const kind = pyStr(row.get("mutation_kind"), "") || "unknown";
  d.reason_code = "provider_state_mutation";
  d.mutation_kind = kind;
  d.reason = `event #${i}: provider-side context mutation (${kind}) recorded in ${which} has no counterpart at this step`;
}

/** Keys that differ only by scheme (an unversioned key and its v1 derivation) name the same call. */
function schemeNote(d: GatewayDiff): void {
  const a = [...d.key_schemes.a].join(", ");
  const b = [...d.key_schemes.b].join(", ");
  if (a !== b && a !== "" && b !== "") {
    d.notes.push(`the logs were recorded under different key schemes (run_a: ${a}; run_b: ${b}): their keys cannot be equal; re-record to compare`);
  }
  if (d.reason_code !== "response_mismatch" || !d.a_event || !d.b_event) return;
  const ka = d.a_event.get("key");
  const kb = d.b_event.get("key");
  if (ka === undefined || kb === undefined || pyEquals(ka, kb)) return;
  const same = (raw: typeof ka, v1: typeof kb) => keyScheme(raw) === "unversioned" && keyScheme(v1) === "v1" && deriveReplayKey(raw!) === v1;
  if (same(ka, kb) || same(kb, ka)) d.notes.push(`event #${d.index}: the two keys name the same call (one is the v1: derivation of the other)`);
}

export function diffGatewayLogs(pathA: string, pathB: string): GatewayDiff {
  const a = side(pathA);
  const b = side(pathB);
  const d: GatewayDiff = {
    diverged: false,
    index: null,
    reason: "",
    reason_code: "",
    mutation_kind: null,
    a_event: null,
    b_event: null,
    a_rows: 0,
    b_rows: 0,
    skipped_lines: { a: 0, b: 0 },
    key_schemes: { a: [], b: [] },
    notes: [],
  };
  for (let i = 0; ; i++) {
    const ra = next(a);
    const rb = next(b);
    if (ra === null && rb === null) {
      d.reason = i === 0 ? "both event logs are empty" : `identical: ${i} events match`;
      break;
    }
    if (ra === null || rb === null) {
      while (next(ra === null ? b : a) !== null);
      const extra = Math.abs(a.count - b.count);
      Object.assign(d, { diverged: true, index: i, a_event: ra, b_event: rb, reason_code: "length_mismatch" });
      d.reason = `run_${ra === null ? "b" : "a"} has ${extra} extra event(s) after index ${i > 0 ? i - 1 : 0}`;
      attribute(d, i);
      break;
    }
    if (!sameProjection(ra, rb)) {
      Object.assign(d, { diverged: true, index: i, a_event: ra, b_event: rb, reason_code: "response_mismatch" });
      d.reason = `event #${i} differs: kind/key/response triple does not match`;
      attribute(d, i);
      // Count the rest, so the verdict says how long each log is.
      while (next(a) !== null);
      while (next(b) !== null);
      break;
    }
  }
  d.a_rows = a.count;
  d.b_rows = b.count;
  d.skipped_lines = { a: a.skipped, b: b.skipped };
  d.key_schemes = { a: [...a.schemes].sort(), b: [...b.schemes].sort() };
  schemeNote(d);
  return d;
}

/**
 * `replay diff` of two gateway logs: `diffGatewayLogs`, then a log with no
 * row is refused (journal/content.ts) instead of compared: `input_empty`
 * when it had no line either (unless `allowEmpty`), else `not_a_journal`.
 */
export function diffGatewayInputs(pathA: string, pathB: string, opts: { allowEmpty?: boolean } = {}): GatewayDiff {
  const d = diffGatewayLogs(pathA, pathB);
  for (const [path, rows, skipped] of [[pathA, d.a_rows, d.skipped_lines.a], [pathB, d.b_rows, d.skipped_lines.b]] as const) {
    if (rows === 0) refuseContent(skipped === 0 ? "empty" : "foreign", path, { allowEmpty: opts.allowEmpty, what: "a ReplayGateway log", row: "row (a JSON object)" });
  }
  return d;
}
