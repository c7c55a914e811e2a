import { InputError } from "../errors/index.ts";
import type { FastVerifyResult } from "../journal/fast/engine.ts";
import { refuseContent, verdictContent } from "../journal/content.ts";
import type { RunMetadata } from "../journal/metadata.ts";
import { readJournal } from "../journal/reader.ts";
import { journalVerdictFailure, type JournalFailure } from "../journal/verdict-failure.ts";
import { verifyJournal, type JournalSeal } from "../journal/verify.ts";
import { pyStr } from "../pyjson/python.ts";
import type { PyObject } from "../pyjson/types.ts";
import { renderJson } from "../render/json.ts";
import { displayRow, numberField } from "../replay/display.ts";
import { ReplayFingerprint } from "../replay/fingerprint.ts";
import { AttemptTracker, type Attempt } from "./attempts.ts";
import { dataBlock, pageHead, pageTail, type Banner } from "./page.ts";
import { Series } from "./series.ts";

/**
 * `replay <RUN> --html`: verify the run journal, then write one
 * self-contained HTML page of it in a single streaming pass over the
 * verified bytes (rows appended meanwhile are not read). Memory does not
 * grow with the journal: rows go out in blocks as they are read, attempts
 * as they close, the curves live in fixed buckets. For a huge run the page
 * embeds the first `maxEvents` events in its table (with their payloads)
 * and draws every attempt (with its signals and reason) and every bucket
 * of the whole run; payloads of later events are not in the page.
 */
export const DEFAULT_MAX_EVENTS = 100_000;
const BLOCK_ROWS = 2000;
const MAX_EVENT_TYPES = 1000;

export interface TimelineInput {
  runId: string;
  journal: string;
  metadata: RunMetadata | null;
  seal: JournalSeal | null;
  sealPath: string | null;
  threads?: number;
  maxEvents?: number;
  onProgress?: (done: number, total: number) => void;
  /** `--allow-empty`: draw an empty journal (0 events) instead of refusing it (`input_empty`). */
  allowEmpty?: boolean;
}

/**
 * Where the page goes, in order; the caller makes it atomic (or streams it
 * to stdout). `false` says the reader went away: the pass stops there.
 */
export type TimelineSink = (chunk: string) => void | boolean | Promise<void | boolean>;

export interface TimelineResult {
  verdict: FastVerifyResult;
  failure: { error: JournalFailure; detail: string } | null;
  events: number;
  embedded: number;
  attempts: number;
  /** Claims beyond the tracker's bound (counted, not drawn). */
  untracked: number;
  fingerprint: string;
  head: string;
  durationMs: number;
  /** The sink said its reader went away before the page was complete. */
  stopped: boolean;
}

export async function renderTimeline(input: TimelineInput, sink: TimelineSink): Promise<TimelineResult> {
  const verdict = await verifyJournal(input.journal, { seal: input.seal, threads: input.threads, onProgress: input.onProgress });
  // Before the page's first byte: no page of an empty input (unless allowed) or of one with no journal row.
  refuseContent(verdictContent(verdict, input.journal), input.journal, { allowEmpty: input.allowEmpty });
  const failure = journalVerdictFailure(verdict);
  let open = (await sink(pageHead(input.runId, banner(verdict, failure, input.sealPath)))) !== false;
  const put = async (chunk: string): Promise<boolean> => (open &&= (await sink(chunk)) !== false);
  const body = await writeBody(input, verdict, put);
  if (!open) return { verdict, failure, ...body, stopped: true };
  if (body.events !== verdict.count) {
    throw new InputError(
      "journal_changed",
      `the journal changed between the verify and the page (${verdict.count} rows verified, ${body.events} read); retry with no writer active`,
      { path: input.journal },
    );
  }
  await put(pageTail());
  return { verdict, failure, ...body, stopped: !open };
}

/** The verdict as the page's banner says it (written before any row, so it is known first). */
function banner(v: FastVerifyResult, failure: TimelineResult["failure"], sealPath: string | null): Banner {
  if (failure) {
    const title =
      failure.error === "chain_broken"
        ? `DIVERGENCE at step ${v.divergent_index}: the chain does not verify (${v.count} rows). The timeline is not drawn; the events below are as recorded, unverified from step ${v.divergent_index} on.`
        : failure.error === "seal_mismatch"
          ? `SEAL MISMATCH: the chain is consistent over ${v.count} rows, but it is not the journal that was sealed (${sealPath ?? "seal"}). The timeline is not drawn.`
          : `INCOMPLETE: ${v.discarded_line_indices.length} line(s) could not be read (${failure.error}). The timeline is not drawn.`;
    const lines = [failure.detail, ...v.errors.slice(0, 20).filter((e) => e !== failure.detail), ...(v.errors.length > 20 ? [`… ${v.errors.length - 20} more`] : [])];
    if (!v.chain_consistent) lines.push(`expected: ${v.expected_hash ?? "(not computable)"}`, `actual:   ${v.actual_hash || "(empty)"}`);
    return { level: "bad", title, lines };
  }
  if (v.identity === "verified") {
    return { level: "ok", title: `Verified: chain intact over ${v.count} events, and it is the sealed journal (${sealPath}).`, lines: [] };
  }
  return {
    level: "warn",
    title: `Chain intact over ${v.count} events; no seal, so completeness is not proven (a journal cut at a row boundary would look the same).`,
    lines: [],
  };
}

function verdictText(v: FastVerifyResult, failure: TimelineResult["failure"]): string {
  if (failure) return `${failure.error}: ${failure.detail}`;
  return v.identity === "verified" ? "verified (chain intact, seal matches)" : "chain intact, no seal (identity unverifiable)";
}

const hasTs = (row: PyObject): number | null => {
  if (!row.has("ts")) return null;
  const n = numberField(row.get("ts"));
  return n === null || !Number.isFinite(n) ? null : n;
};

function textField(row: PyObject, key: string): string {
  const v = row.get(key);
  return typeof v === "string" ? v : "";
}

/** Token figures of a row: `tokens` or `total_tokens`, else `input_tokens + output_tokens`. */
function tokensOf(row: PyObject): number {
  const num = (k: string): number => {
    const v = row.has(k) ? numberField(row.get(k)) : null;
    return v !== null && Number.isFinite(v) && v > 0 ? v : 0;
  };
  return num("tokens") || num("total_tokens") || num("input_tokens") + num("output_tokens");
}

/** The run-cumulative cost a row records: `task_completed.cost_usd` (run-cumulative by the spec), `budget_exhausted.spent_usd`. */
function costOf(row: PyObject, event: string): number | null {
  const key = event === "task_completed" ? "cost_usd" : event === "budget_exhausted" ? "spent_usd" : null;
  if (key === null || !row.has(key)) return null;
  const v = numberField(row.get(key));
  return v !== null && Number.isFinite(v) ? v : null;
}

/** An attempt in the page (the script's tuple order). */
function attemptTuple(a: Attempt): unknown[] {
  return [a.agent, a.task, a.model, a.role, a.start, a.end, a.outcome, a.signals, a.reason, a.events];
}

async function writeBody(input: TimelineInput, verdict: FastVerifyResult, sink: (chunk: string) => Promise<boolean>) {
  const maxEvents = input.maxEvents ?? DEFAULT_MAX_EVENTS;
  const fp = new ReplayFingerprint();
  const series = new Series();
  let rows: unknown[][] = [];
  let closed: unknown[][] = [];
  const tracker = new AttemptTracker((a) => closed.push(attemptTuple(a)));
  const types = new Map<string, number>();
  let n = 0;
  let discarded = 0;
  let t0: number | null = null;
  let lastT = 0;
  let head = "";
  let ticks = 0;
  let cost: number | null = null;
  /** False once a row says an attempt's cost is unknown (this project's task_completed.cost_source, run_completed.cost_known). */
  let costKnown = true;
  let tokens = 0;
  let git = { branch: "", sha: "" };
  const flush = async (force: boolean): Promise<boolean> => {
    if (rows.length > 0 && (force || rows.length >= BLOCK_ROWS)) {
      if (!(await sink(dataBlock("events", rows)))) return false;
      rows = [];
    }
    if (closed.length > 0 && (force || closed.length >= BLOCK_ROWS)) {
      if (!(await sink(dataBlock("attempts", closed)))) return false;
      closed = [];
    }
    return true;
  };
  for await (const item of readJournal(input.journal, { endOffset: verdict.snapshot_bytes })) {
    if (item.kind !== "row") {
      discarded++;
      continue;
    }
    const row = item.row;
    const i = n++;
    fp.update(row);
    head = pyStr(row.get("event_hash"), "");
    const ts = hasTs(row);
    if (ts !== null && t0 === null) t0 = ts;
    const t = ts === null || t0 === null ? null : Math.round((ts - t0) * 1000);
    if (t !== null) lastT = Math.max(lastT, t);
    const at = t ?? lastT;
    const event = pyStr(row.get("event"), "");
    const c = costOf(row, event);
    if (c !== null) cost = cost === null ? c : Math.max(cost, c);
    if ((event === "task_completed" && row.get("cost_source") === "unknown") || (event === "run_completed" && row.get("cost_known") === false)) costKnown = false;
    const tk = tokensOf(row);
    tokens += tk;
    if (event === "tick_start") ticks++;
    if (event === "run_started" && !git.branch && !git.sha) git = { branch: textField(row, "git_branch"), sha: textField(row, "git_sha") };
    series.add(at, { tick: event === "tick_start", cost: c, tokens: tk });
    const typeKey = types.has(event) || types.size < MAX_EVENT_TYPES ? event : "(other)";
    types.set(typeKey, (types.get(typeKey) ?? 0) + 1);
    const embedded = i < maxEvents;
    tracker.push(row, i, at);
    if (embedded) {
      const d = displayRow(row, null);
      rows.push([i, t, d.event, d.agent, d.task, d.detail, renderJson(row, null)]);
    }
    if (!(await flush(false))) break;
    // The row reader never waits on the event loop: give a SIGINT/SIGTERM handler its turn now and then.
    if (n % BLOCK_ROWS === 0) await new Promise<void>((r) => setImmediate(r));
  }
  tracker.finish(lastT);
  await flush(true);
  const m = input.metadata;
  const started = m?.started_at ?? t0;
  const fingerprint = n === 0 ? "" : fp.digest();
  const summary = {
    run_id: input.runId,
    started: started === null ? null : new Date(started * 1000).toISOString(),
    git_branch: m?.git_branch || git.branch,
    git_sha: m?.git_sha || git.sha,
    events: n,
    embedded: Math.min(n, maxEvents),
    attempts: tracker.count,
    untracked: tracker.untracked,
    discarded,
    fingerprint,
    // The Merkle head only where the chain verified; a broken chain has none.
    head: verdict.chain_consistent ? head : "",
    duration_ms: lastT,
    ticks,
    cost_usd: cost,
    cost_known: costKnown,
    tokens,
    types: Object.fromEntries(types),
    series: series.toJson(),
    verdict: { ok: verdict.ok, text: verdictText(verdict, journalVerdictFailure(verdict)), divergent_index: verdict.divergent_index },
  };
  await sink(dataBlock("summary", summary));
  return { events: n, embedded: summary.embedded, attempts: tracker.count, untracked: tracker.untracked, fingerprint, head, durationMs: lastT };
}
