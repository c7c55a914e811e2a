import { payloadHash } from "../journal/hash.ts";
import { canonical, canonicalPart, compareCodePoints, sha256Parts } from "../pyjson/encode.ts";
import { pyStr } from "../pyjson/python.ts";
import { PyRaw, type PyObject, type PyValue } from "../pyjson/types.ts";
import type { DiffRules, RowProjector } from "./diff-rules.ts";

/**
 * `replay diff RUN_A RUN_B`: walk two run journals in lockstep (two streaming
 * readers, one row of each in memory) and report the first step whose
 * `(event, payload_hash)` differ, or where one run ends early. The payload
 * hash is recomputed from each row (a row whose stored hash lies is compared
 * by what it says, not by what it claims). Clock and chain fields (`ts`,
 * `elapsed_s`, `index`, `prev_hash`, `payload_hash`, `event_hash`) never
 * count as a divergence: two runs of the same work differ in all of them.
 * The rules of ./diff-rules.ts decide what else is left out (identity
 * fields by default, `--ignore` paths) and which ids are compared by order of
 * first appearance; rows are compared as those rules project them.
 *
 * reason_code:
 * - `identical`: same number of rows, every step equal;
 * - `both_empty`: neither journal has a usable row;
 * - `event_mismatch`: the event types differ at `index`;
 * - `payload_mismatch`: same event type, different payload;
 * - `response_mismatch`: same event type and the payload differs in a recorded
 *   provider exchange (`kind`, `key` or `response`, as gateway fixture rows carry);
 * - `provider_state_mutation`: either row at `index` is a `provider_state_mutation`
 *   (a provider-side context change with no counterpart in the other run);
 * - `length_mismatch`: one journal ends before the other (`index` = the
 *   shorter length; the missing side's row is null).
 * Rows the reader discards (unparsable, non-object) are skipped, as in `--verify`'s count.
 */
export type DiffReasonCode =
  | "identical"
  | "both_empty"
  | "event_mismatch"
  | "payload_mismatch"
  | "response_mismatch"
  | "provider_state_mutation"
  | "length_mismatch";

export interface JournalDiff {
  diverged: boolean;
  index: number | null;
  reason: string;
  reason_code: DiffReasonCode;
  a_event: PyObject | null;
  b_event: PyObject | null;
  /** Payload fields (and `event`) whose values differ, in code-point order. */
  fields_changed: string[];
  /** The rules the rows were compared under. */
  ignored_fields: string[];
  aligned_fields: string[];
  /** Ignored paths and aligned fields that occurred in the compared rows (so mattered), in code-point order. */
  rules_applied: string[];
}

/** Fields that differ between two runs of the same work by construction. */
export const IGNORED_FIELDS: ReadonlySet<string> = new Set(["ts", "elapsed_s", "index", "prev_hash", "payload_hash", "event_hash"]);
const EXCHANGE_FIELDS = new Set(["kind", "key", "response"]);
const MUTATION = "provider_state_mutation";

/** Keys whose values differ (missing on one side counts), ignoring clock and chain fields. */
export function changedFields(a: PyObject | null, b: PyObject | null): string[] {
  const keys = new Set<string>();
  for (const row of [a, b]) if (row) for (const k of row.keys()) if (!IGNORED_FIELDS.has(k)) keys.add(k);
  const changed: string[] = [];
  for (const k of keys) {
    const x = a?.get(k);
    const y = b?.get(k);
    if (x === undefined || y === undefined) {
      if (x !== y) changed.push(k);
      continue;
    }
    if (!sameCanonical(x, y)) changed.push(k);
  }
  return changed.sort(compareCodePoints);
}

/**
 * Whether two values have the same canonical text, which is what the
 * payload hash sees: 1 and 1.0 differ there, so they differ here. Two
 * strings' texts differ exactly when the strings do (the encoding is one
 * to one): a tool result of megabytes is compared without being encoded. A
 * huge row's value still bytes (`PyRaw`) is compared by the digest of its
 * canonical text, encoded in pieces, never made one text.
 */
function sameCanonical(x: PyValue, y: PyValue): boolean {
  if (typeof x === "string" && typeof y === "string") return x === y;
  if (!(x instanceof PyRaw) && !(y instanceof PyRaw)) return canonical(x) === canonical(y);
  // the same bytes are the same value (a value's bytes say its kind)
  if (x instanceof PyRaw && y instanceof PyRaw && Buffer.compare(x.bytes, y.bytes) === 0) return true;
  return sha256Parts([canonicalPart(x)]) === sha256Parts([canonicalPart(y)]);
}

function eventOf(row: PyObject): string {
  return pyStr(row.get("event"), "");
}

function isMutation(row: PyObject | null): boolean {
  return row !== null && (eventOf(row) === MUTATION || pyStr(row.get("kind"), "") === MUTATION);
}

function mutationKind(row: PyObject | null): string | null {
  if (!isMutation(row)) return null;
  const k = row!.get("mutation_kind");
  return k === undefined || k === null ? "unknown" : pyStr(k);
}

function quoteEvent(e: string): string {
  return JSON.stringify(e);
}

/** Builds the result under `rules`, with the rules the compared rows touched so far. */
export type VerdictOf = (
  diverged: boolean,
  index: number | null,
  reason: string,
  reason_code: DiffReasonCode,
  a_event: PyObject | null,
  b_event: PyObject | null,
  fields_changed: string[],
) => JournalDiff;

export function verdictMaker(rules: DiffRules, applied: () => Iterable<string>): VerdictOf {
  return (diverged, index, reason, reason_code, a_event, b_event, fields_changed) => ({
    diverged,
    index,
    reason,
    reason_code,
    a_event,
    b_event,
    fields_changed,
    ignored_fields: rules.ignored,
    aligned_fields: rules.aligned,
    rules_applied: [...new Set(applied())].sort(compareCodePoints),
  });
}

/** Both runs ended together after `rows` equal steps. */
export function endVerdict(rows: number, verdict: VerdictOf): JournalDiff {
  if (rows === 0) return verdict(false, null, "both event logs are empty", "both_empty", null, null, []);
  return verdict(false, null, `identical: ${rows} events match`, "identical", null, null, []);
}

/** One run ended at step `i`; the other has `extra` rows from there, the first of them `rowA` or `rowB`. */
export function lengthVerdict(i: number, rowA: PyObject | null, rowB: PyObject | null, extra: number, verdict: VerdictOf): JournalDiff {
  const side = rowA === null ? "run_b" : "run_a";
  const mk = mutationKind(rowA) ?? mutationKind(rowB);
  const reason =
    mk !== null
      ? `event #${i}: provider-side context mutation (${mk}) recorded in ${side} has no counterpart at this step`
      : `${side} has ${extra} extra event(s) after index ${i === 0 ? 0 : i - 1}`;
  return verdict(true, i, reason, mk !== null ? "provider_state_mutation" : "length_mismatch", rowA, rowB, []);
}

/**
 * Step `i` on the exact path: both rows projected by their run's rules,
 * compared by `(event, payload_hash)`. Null when they are equal, else the
 * divergence.
 */
export function comparePair(i: number, rowA: PyObject, rowB: PyObject, pa: RowProjector, pb: RowProjector, verdict: VerdictOf): JournalDiff | null {
  const evA = eventOf(rowA);
  const evB = eventOf(rowB);
  const projA = pa.project(rowA);
  const projB = pb.project(rowB);
  if (evA === evB && payloadHash(evA, projA) === payloadHash(evB, projB)) return null;
  const fields = changedFields(projA, projB);
  const mk = mutationKind(rowA) ?? mutationKind(rowB);
  if (mk !== null) {
    const side = isMutation(rowA) ? "run_a" : "run_b";
    const reason = `event #${i}: provider-side context mutation (${mk}) recorded in ${side} has no counterpart at this step`;
    return verdict(true, i, reason, "provider_state_mutation", rowA, rowB, fields);
  }
  if (evA !== evB) {
    return verdict(true, i, `event #${i} differs: event type ${quoteEvent(evA)} vs ${quoteEvent(evB)}`, "event_mismatch", rowA, rowB, fields);
  }
  const listed = fields.length ? fields.join(", ") : "values equal as text but hashed differently";
  const code = fields.some((f) => EXCHANGE_FIELDS.has(f)) ? "response_mismatch" : "payload_mismatch";
  return verdict(true, i, `event #${i} differs: ${quoteEvent(evA)} payload does not match (${listed})`, code, rowA, rowB, fields);
}

