import { InputError } from "../errors/index.ts";
import type { FastVerifyResult } from "../journal/fast/engine.ts";
import { refuseContent, verdictContent } from "../journal/content.ts";
import type { RunMetadata } from "../journal/metadata.ts";
import { readJournalSync } from "../journal/reader.ts";
import { fieldNumber, keepText, readPageRows, verifyPageRows, type PageRow, type PageRowSink } from "./rows.ts";
import { LastText } from "../replay/last-text.ts";
import { journalVerdictFailure, type JournalFailure } from "../journal/verdict-failure.ts";
import { verifyJournal, type JournalSeal } from "../journal/verify.ts";
import { pyStr } from "../pyjson/python.ts";
import type { PyObject } from "../pyjson/types.ts";
import { renderJson, renderRowInline, textHead } from "../render/json.ts";
import { displayRow } from "../replay/display.ts";
import { ReplayFingerprint } from "../replay/fingerprint.ts";
import { AttemptTracker, type Attempt } from "./attempts.ts";
import { appendScriptString, appendText, dataBlock, eventsBlock, pageHead, pageTail, scriptJson, utf16Length, type Banner } from "./page.ts";
import { COMMA, LBRACKET, QUOTE, RBRACKET } from "../codec/bytes.ts";
import { RowCells, writeInt, type CellSpans } from "../replay/fast-cells.ts";
import { ByteSink } from "../pyjson/encode-bytes.ts";
import { LaneDensity, Series } from "./series.ts";
import { clipText, pagePaths, type PathNames } from "./bounds.ts";
import { GrowthCollector, nextTurn } from "../fsutil/turn.ts";
import { statSync } from "node:fs";
import { verifiesOnWorkers } from "../journal/fast/engine.ts";
import { isRemotePath } from "../storage/ref.ts";
import { HeldPage } from "./held-page.ts";
import { KeyedTable } from "./keyed-table.ts";
import { noFTL } from "bun:jsc";

/**
 * `replay <RUN> --html`: verify the run journal and write one
 * self-contained HTML page of it in a single streaming pass over the
 * verified bytes (rows appended meanwhile are not read). By default the
 * page is drawn from the verify's own pass, in this thread
 * (drawInOnePass); with more threads asked for, a journal split for
 * worker threads is read for the page while they verify it
 * (drawWhileVerifying); either way the page is held until the verdict is
 * known. Any other journal, and one whose one pass did not hand every
 * row, is verified first. Memory does not grow with the journal: rows go
 * out in blocks as they are read, attempts as they close, the curves live
 * in fixed buckets.
 *
 * The page's size is bounded whatever the journal's: its table holds the
 * events of one window (`window`, default the whole run) up to `maxEvents`
 * and EVENT_BYTES, each payload cut at PAYLOAD_CHARS; attempts are drawn
 * one bar each while there are at most `maxBars` of them (and
 * ATTEMPT_BYTES); beyond that the run's attempts are drawn as bucketed
 * curves per lane (role, agent or model) and only the window's attempts
 * as bars. Every string from the journal outside a payload is cut at
 * FIELD_CHARS (event type names and lane names at KEY_CHARS); event types,
 * lanes and buckets have fixed bounds.
 *
 * The bound, counted in the page's escaped bytes (`scriptJson` writes `<`
 * as six characters): table ≤ EVENT_BYTES (5 MB) + bars ≤ ATTEMPT_BYTES
 * (2 MB) + event types ≤ 1000 × 6 × KEY_CHARS (0.8 MB) + lanes ≤ 256 ×
 * (6 × KEY_CHARS + 512 buckets × ~8) (1.2 MB) + the banner's ≤ 22 lines of
 * ≤ 2048 characters, HTML-escaped (0.3 MB) + the script, style and curves
 * (< 0.1 MB): under 10 MB whatever the journal.
 */
export const DEFAULT_MAX_EVENTS = 100_000;
export const DEFAULT_MAX_BARS = 5000;
export const EVENT_BYTES = 5_000_000;
export const ATTEMPT_BYTES = 2_000_000;
export const PAYLOAD_CHARS = 65_536;
export const FIELD_CHARS = 512;
export const KEY_CHARS = 128;
export const MAX_DENSITY_LANES = 256;
const BLOCK_ROWS = 2000;
/** An events block is written once its entries reach this many bytes, whatever their count (a table of large payloads). */
const BLOCK_BYTES = 1 << 20;
/** Growth of the resident set (bytes) after which the page's pass collects garbage. */
const GC_GROWTH = 8 << 20;
/**
 * The same in the one pass (drawInOnePass), which holds the verify's
 * working set and the page's in one heap: collected sooner, its peak
 * stays within the 64 MB every verb keeps to (docs/performance.md).
 */
const ONE_PASS_GC_GROWTH = 1 << 20;
/** The one pass looks at its growth every this many of the verify's reads. */
const GC_POLL_READS = 4;
const MAX_EVENT_TYPES = 1000;

export type LaneGrouping = "role" | "agent" | "model";
export const LANE_GROUPINGS: readonly LaneGrouping[] = ["role", "agent", "model"];

/** One end of the table's window: an event index, or a time (seconds since the epoch, as the rows' `ts`). */
export type WindowBound = { index: number } | { time: number };

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
  /** How attempts are grouped into lanes (default role). */
  lanes?: LaneGrouping;
  /** The events shown in full (`--from` / `--to`, both ends included); default the whole run. */
  window?: { from?: WindowBound; to?: WindowBound };
  /** Attempts drawn one bar each up to this many; beyond it, curves per lane. */
  maxBars?: number;
  /** Bytes of the journal drawn so far, of the verified total (the page's pass, after the verify's). */
  onDrawProgress?: (done: number, total: number) => void;
  /** Absolute paths that may appear in verdict text, and what the page says instead. */
  paths?: PathNames;
  /** Read every row whole (the reference pass the fast one is tested against: same page, byte for byte). */
  exactPass?: boolean;
  /** Called with the bytes the rows will be read to, before the verify starts, when the two run at once (tests: a writer appending between the snapshots). */
  onPageSnapshot?: (bytes: number) => void;
  /** Called once the one pass's verdict is known (tests): whether its page stands (false: drawn again, after the verify). */
  onOnePass?: (kept: boolean) => void;
}

/**
 * Where the page goes, in order; the caller makes it atomic (or streams it
 * to stdout). `false` says the reader went away: the pass stops there. A
 * chunk is the sink's until the call returns (or its promise settles): the
 * page may reuse the bytes after.
 */
export type TimelineSink = (chunk: string | Uint8Array) => void | boolean | Promise<void | boolean>;

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
  /** The run's attempts are drawn as curves per lane (too many for one bar each). */
  curves: boolean;
  /** Attempts drawn as bars. */
  drawnAttempts: number;
  /** The events shown in full, when the page has a window (--from/--to, or curves). */
  window: { from: number | null; to: number | null } | null;
}

export async function renderTimeline(input: TimelineInput, sink: TimelineSink): Promise<TimelineResult> {
  const shown = pagePaths(input.paths ?? { [input.journal]: "journal.jsonl" });
  if (drawnInOnePass(input)) {
    const drawn = await drawInOnePass(input, sink, shown);
    if (!("again" in drawn)) return drawn;
    // the chain broke (rows past its break are not handed), or a writer appended at the snapshot's end: the page of the verdict's rows
    return drawVerified(input, drawn.again, sink, shown);
  }
  const end = drawnWhileVerified(input);
  if (end !== null) {
    const drawn = await drawWhileVerifying(input, end, sink, shown);
    if (!("again" in drawn)) return drawn;
    // a writer appended between the two snapshots: the page is drawn again, to the verified bytes
    return drawVerified(input, drawn.again, sink, shown);
  }
  return drawVerified(input, await verifyJournal(input.journal, { seal: input.seal, threads: input.threads, onProgress: input.onProgress }), sink, shown);
}

/**
 * Whether the page's rows are the verify's own (drawInOnePass): a local
 * journal verified in this thread, the default (`threads` unset or 1).
 */
function drawnInOnePass(input: TimelineInput): boolean {
  return !input.exactPass && !isRemotePath(input.journal) && (input.threads === undefined || input.threads <= 1);
}

/**
 * The page drawn from the rows the verify reads, in this thread, as it
 * verifies them (rows.ts verifyPageRows: one read and one scan a row, and
 * no second thread's memory). The page is held until the verdict is known
 * (HeldPage); `again`: its rows are not all the verdict's (the chain broke,
 * and the rows past the break were not handed; or the verify read rows
 * again), and nothing was written.
 */
async function drawInOnePass(input: TimelineInput, sink: TimelineSink, shown: (s: string) => string): Promise<TimelineResult | { again: FastVerifyResult }> {
  let handed = -1;
  let settled!: (v: FastVerifyResult) => void;
  let failed!: (err: unknown) => void;
  const verifying = new Promise<FastVerifyResult>((resolve, reject) => {
    settled = resolve;
    failed = reject;
  });
  const page = new HeldPage(verifying, (v) => handed === v.count, (v) => pageStart(input, v, shown), sink);
  const pass: OnePass = {
    run: async (rows, fp, between) => {
      try {
        // one pass: its progress is the drawing's
        const r = await verifyPageRows(input.journal, { seal: input.seal, onProgress: input.onDrawProgress ?? input.onProgress }, fp, rows, between);
        handed = r.handed;
        settled(r.verdict);
      } catch (err) {
        failed(err);
        throw err;
      }
    },
    hold: (chunk) => page.holdNow(chunk),
  };
  let body: Awaited<ReturnType<typeof writeBody>>;
  try {
    body = await writeBody(input, 0, verifying, page.put, shown, page.settle, pass);
  } finally {
    page.close();
  }
  const verdict = await verifying;
  input.onOnePass?.(!page.again);
  if (page.again) return { again: verdict };
  return pageEnd(input, verdict, body, page.open, page.put);
}

/** The one pass's rows (drawInOnePass): the verify that hands them, and where the blocks made meanwhile are held. */
interface OnePass {
  run(rows: PageRowSink, fp: ReplayFingerprint, between: () => void): Promise<void>;
  hold(chunk: string | Uint8Array): boolean;
}

/**
 * Whether the page's rows are read while the journal is verified (on
 * worker threads; this thread reads the rows): the bytes they are read to,
 * the journal's size now; null when the verify comes first (this thread
 * takes part in it, or the journal is not a local file, or the reference
 * pass is asked for).
 */
function drawnWhileVerified(input: TimelineInput): number | null {
  if (input.exactPass || isRemotePath(input.journal)) return null;
  let size: number;
  try {
    size = statSync(input.journal).size;
  } catch {
    return null;
  }
  return verifiesOnWorkers(input.journal, size, input.threads) ? size : null;
}

/** Before the page's first byte: no page of an empty input (unless allowed) or of one with no journal row. */
function pageStart(input: TimelineInput, verdict: FastVerifyResult, shown: (s: string) => string): string {
  refuseContent(verdictContent(verdict, input.journal), input.journal, { allowEmpty: input.allowEmpty });
  return pageHead(input.runId, banner(verdict, journalVerdictFailure(verdict), input.sealPath, shown));
}

/** The page of a journal already verified. */
async function drawVerified(input: TimelineInput, verdict: FastVerifyResult, sink: TimelineSink, shown: (s: string) => string): Promise<TimelineResult> {
  let open = (await sink(pageStart(input, verdict, shown))) !== false;
  const put = async (chunk: string | Uint8Array): Promise<boolean> => (open &&= (await sink(chunk)) !== false);
  const body = await writeBody(input, verdict.snapshot_bytes, Promise.resolve(verdict), put, shown);
  return pageEnd(input, verdict, body, open, put);
}

/**
 * The page of the journal's first `end` bytes, its rows read while worker
 * threads verify it (one pass each, at once: the page's wall time is the
 * longer pass, not the sum). The page is held until the verdict is known
 * (HeldPage); `again`: the verify's snapshot was not `end` (nothing written).
 * The drawing reports its progress, the longer of the two.
 */
async function drawWhileVerifying(input: TimelineInput, end: number, sink: TimelineSink, shown: (s: string) => string): Promise<TimelineResult | { again: FastVerifyResult }> {
  input.onPageSnapshot?.(end);
  const verifying = verifyJournal(input.journal, { seal: input.seal, threads: input.threads, leaveThread: true });
  const page = new HeldPage(verifying, (v) => v.snapshot_bytes === end, (v) => pageStart(input, v, shown), sink);
  let body: Awaited<ReturnType<typeof writeBody>>;
  try {
    body = await writeBody(input, end, verifying, page.put, shown, page.settle);
  } catch (err) {
    // the verify's own error first (the rows may have failed to read for the same cause)
    await verifying;
    throw err;
  } finally {
    page.close();
  }
  const verdict = await verifying;
  if (page.again) return { again: verdict };
  return pageEnd(input, verdict, body, page.open, page.put);
}

/** The page's last bytes, once its rows are written; the result. */
async function pageEnd(
  input: TimelineInput,
  verdict: FastVerifyResult,
  body: Awaited<ReturnType<typeof writeBody>>,
  open: boolean,
  put: (chunk: string | Uint8Array) => Promise<boolean>,
): Promise<TimelineResult> {
  const failure = journalVerdictFailure(verdict);
  if (!open) return { verdict, failure, ...body, stopped: true };
  if (body.events !== verdict.count) {
    throw new InputError(
      "journal_changed",
      `the journal changed between the verify and the page (${verdict.count} rows verified, ${body.events} read); retry with no writer active`,
      { path: input.journal },
    );
  }
  const done = await put(pageTail());
  return { verdict, failure, ...body, stopped: !done };
}

/** The verdict as the page's banner says it (written before any row, so it is known first). */
function banner(v: FastVerifyResult, failure: TimelineResult["failure"], sealPathAbs: string | null, shown: (s: string) => string): Banner {
  const sealPath = sealPathAbs === null ? null : shown(sealPathAbs);
  if (failure) {
    const title =
      failure.error === "chain_broken"
        ? `DIVERGENCE at step ${v.divergent_index}: the chain does not verify (${v.count} rows). The timeline is not drawn; the events below are as recorded, unverified from step ${v.divergent_index} on.`
        : failure.error === "seal_mismatch"
          ? `SEAL MISMATCH: the chain is consistent over ${v.count} rows, but it is not the journal that was sealed (${sealPath ?? "seal"}). The timeline is not drawn.`
          : `INCOMPLETE: ${v.discarded_line_indices.length} line(s) could not be read (${failure.error}). The timeline is not drawn.`;
    const lines = [failure.detail, ...v.errors.slice(0, 20).filter((e) => e !== failure.detail), ...(v.errors.length > 20 ? [`… ${v.errors.length - 20} more`] : [])].map((l) =>
      clipText(shown(l), FIELD_CHARS * 4),
    );
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

function verdictText(v: FastVerifyResult, failure: TimelineResult["failure"], shown: (s: string) => string): string {
  if (failure) return clipText(shown(`${failure.error}: ${failure.detail}`), FIELD_CHARS * 4);
  return v.identity === "verified" ? "verified (chain intact, seal matches)" : "chain intact, no seal (identity unverifiable)";
}

function textField(row: PyObject, key: string): string {
  const v = row.get(key);
  return typeof v === "string" ? v : "";
}

/** The keys RowFigures reads, in its order: the row's time, its cost (the key by event), its tokens (tokensOf's keys). */
const FIGURE_KEYS = ["ts", "", "tokens", "total_tokens", "input_tokens", "output_tokens"] as const;
const COST_FIGURE = 1;
/** The first of the token keys summed (the ones before it count alone). */
const SUMMED_TOKENS = 4;

/**
 * The numbers the page takes from a row, read by one loop: the engine
 * compiles the number reader into its caller once per call site, and a
 * read written out per figure made the row's step several times its size.
 */
class RowFigures {
  /** `ts`, when it is a finite number. */
  ts: number | null = null;
  /** The run-cumulative cost the row records: `task_completed.cost_usd` (run-cumulative by the spec), `budget_exhausted.spent_usd`. */
  cost: number | null = null;
  /** `tokens` or `total_tokens`, else `input_tokens + output_tokens` (each counted when a positive finite number). */
  tokens = 0;

  read(row: PyObject, event: string): void {
    const costKey = event === "task_completed" ? "cost_usd" : event === "budget_exhausted" ? "spent_usd" : null;
    this.ts = null;
    this.cost = null;
    this.tokens = 0;
    for (let i = 0; i < FIGURE_KEYS.length; i++) {
      if (i === COST_FIGURE && costKey === null) continue;
      const v = finiteNumber(row, i === COST_FIGURE ? costKey! : FIGURE_KEYS[i]!);
      if (i === 0) this.ts = v;
      else if (i === COST_FIGURE) this.cost = v;
      else if (v !== null && v > 0) {
        this.tokens += v;
        if (i < SUMMED_TOKENS) return;
      }
    }
  }
}

/** numberField of `row`'s `key` when it is finite, else null (no such key, or not a number). */
function finiteNumber(row: PyObject, key: string): number | null {
  const n = fieldNumber(row, key);
  return n === undefined || n === null || !Number.isFinite(n) ? null : n;
}

/** An attempt in the page (the script's tuple order), its journal text cut at FIELD_CHARS. */
function attemptTuple(a: Attempt): unknown[] {
  const c = (s: string) => clipText(s, FIELD_CHARS);
  return [c(a.agent), c(a.task), c(a.model), c(a.role), a.start, a.end, a.outcome, a.signals.slice(0, 32).map(c), c(a.reason), a.events.slice()];
}

/** An attempt's lane under a grouping (the script's "(none)" for an empty one). */
function laneOf(a: Attempt, by: LaneGrouping): string {
  const key = by === "agent" ? a.agent : by === "model" ? a.model : a.role;
  return clipText(key || "(none)", KEY_CHARS);
}

/** A payload as the page holds it: cut at PAYLOAD_CHARS, saying so. */
function payloadText(json: string): string {
  return json.length <= PAYLOAD_CHARS ? json : `${json.slice(0, PAYLOAD_CHARS)}${cutNote(json.length)}`;
}

/** What follows a payload cut at PAYLOAD_CHARS of its `length` UTF-16 units. */
function cutNote(length: number): string {
  return ` … [cut: ${length} characters as recorded; 'bernstein replay <RUN> --as-json' prints it whole]`;
}

const encoder = new TextEncoder();

/**
 * `scriptJson(payloadText(json))` for the UTF-8 text `json`, appended to
 * `out` as UTF-8 without making a string of it; its UTF-16 length.
 * `total`: the whole text's UTF-16 length when `json` holds only its
 * beginning (at least its first PAYLOAD_CHARS + 1 units).
 */
function appendPayload(out: ByteSink, json: Uint8Array, total = json.length > PAYLOAD_CHARS ? utf16Length(json, 0, json.length) : 0): number {
  out.byte(QUOTE);
  let units = 2;
  if (total > PAYLOAD_CHARS) {
    units += appendScriptString(out, json, 0, json.length, PAYLOAD_CHARS);
    const note = encoder.encode(cutNote(total));
    units += appendScriptString(out, note, 0, note.length);
  } else {
    units += appendScriptString(out, json, 0, json.length);
  }
  out.byte(QUOTE);
  return units;
}

/**
 * appendPayload of `renderJson(row, null)`, made in pieces where the row
 * holds values still as bytes (a huge row: rows.ts reads its long strings
 * so, and its large arrays and objects are so anyway): only the
 * beginning the page shows is kept, the rest only counted, so the page
 * never holds such a row's text whole (several times the row's size).
 */
function appendRowPayload(out: ByteSink, row: PyObject): number {
  // one unit past the cut: a pair the cut falls in is kept whole (appendScriptString writes its high surrogate);
  // what the end of the kept text may split is past the cut, never read
  const { head, length } = textHead((write) => renderRowInline(row, write), PAYLOAD_CHARS + 1);
  return appendPayload(out, encoder.encode(head), length);
}

const ELLIPSIS = encoder.encode("\u2026");

/**
 * `scriptJson([i, t, event, agent, task, detail])` of a row's cells read
 * from its bytes (RowCells: printable ASCII, so clipText cuts them by
 * bytes), its closing bracket written as a comma, appended to `out`; its
 * UTF-16 length.
 */
function appendCellsHead(out: ByteSink, i: number, t: number | null, c: CellSpans): number {
  const start = out.len;
  out.byte(LBRACKET);
  appendNumber(out, i);
  out.byte(COMMA);
  appendNumber(out, t);
  out.byte(COMMA);
  let units = out.len - start;
  units += appendCell(out, c.eventB, c.eventS, c.eventE, KEY_CHARS);
  units += appendCell(out, c.agentB, c.agentS, c.agentE, FIELD_CHARS);
  units += appendCell(out, c.taskB, c.taskS, c.taskE, FIELD_CHARS);
  units += appendCell(out, c.detailB, c.detailS, c.detailE, FIELD_CHARS);
  return units;
}

/** A cell as a JSON string cut at `max` (clipText), and a comma; its UTF-16 length. */
function appendCell(out: ByteSink, b: Uint8Array, s: number, e: number, max: number): number {
  out.byte(QUOTE);
  let units = 3 + appendScriptString(out, b, s, e, max);
  if (e - s > max) units += appendScriptString(out, ELLIPSIS, 0, ELLIPSIS.length);
  out.byte(QUOTE);
  out.byte(COMMA);
  return units;
}

/** A number as JSON.stringify writes it (null: `null`). */
function appendNumber(out: ByteSink, n: number | null): void {
  if (n !== null && Number.isSafeInteger(n)) {
    out.reserve(24);
    out.len = writeInt(out.buf, out.len, n);
  } else appendText(out, JSON.stringify(n));
}

/**
 * The page's per-row functions are kept from the engine's last optimizing
 * tier (FTL): over one pass it compiled them, with what they inline, more
 * than once, in memory that stands in the page's peak and on a core the
 * verify's worker shares, and the code it made ran no faster here
 * (measured interleaved: less peak memory and CPU without it). Each
 * method of the tracker and its tables, and each pass's `step`.
 */
function keepFromTopTier(...protos: object[]): void {
  for (const proto of protos) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const f = Object.getOwnPropertyDescriptor(proto, name)?.value;
      if (typeof f === "function" && name !== "constructor") noFTL(f);
    }
  }
}
keepFromTopTier(AttemptTracker.prototype, KeyedTable.prototype);

/** Where the table's window stands as the rows go by. */
class EventWindow {
  /** Index and time (ms) of the first and last event shown in full; null before the first. */
  first: number | null = null;
  last: number | null = null;
  t0: number | null = null;
  t1: number | null = null;
  /** Why the window ended before its `to` (or the run's end): the event count or the byte bound. */
  cut: "max-events" | "bytes" | null = null;
  private closed = false;
  count = 0;
  bytes = 0;

  constructor(
    private readonly from: WindowBound | undefined,
    private readonly to: WindowBound | undefined,
    private readonly maxEvents: number,
  ) {}

  /** Whether row `i` (time `ts` in epoch seconds, its block entry `size` bytes) goes into the table. */
  take(i: number, ts: number | null, at: number, size: () => number): boolean {
    if (this.closed) return false;
    if (this.first === null && !reached(this.from, i, ts)) return false;
    if (this.to && past(this.to, i, ts)) return this.close(null);
    if (this.count >= this.maxEvents) return this.close("max-events");
    const n = size();
    if (this.bytes + n > EVENT_BYTES) return this.close("bytes");
    this.bytes += n;
    this.count++;
    if (this.first === null) [this.first, this.t0] = [i, at];
    [this.last, this.t1] = [i, at];
    return true;
  }

  private close(cut: EventWindow["cut"]): false {
    this.closed = true;
    this.cut = cut;
    return false;
  }

  /** Whether an attempt from event `claim` to event `end` (null: the journal's end) overlaps the window (as far as it is known now). */
  overlaps(claim: number, end: number | null): boolean {
    if (this.first === null) return false;
    const last = this.closed ? (this.last ?? -1) : Infinity;
    return claim <= last && (end ?? Infinity) >= this.first;
  }
}

/** `from` is reached at row `i` (a time bound needs the row's time). */
function reached(b: WindowBound | undefined, i: number, ts: number | null): boolean {
  if (!b) return true;
  return "index" in b ? i >= b.index : ts !== null && ts >= b.time;
}

/** Row `i` lies beyond `to`. */
function past(b: WindowBound, i: number, ts: number | null): boolean {
  return "index" in b ? i > b.index : ts !== null && ts > b.time;
}

/**
 * The page's rows, from the journal's first `total` bytes, and its summary
 * (which holds the verdict: awaited only then, so the rows may be read
 * while the journal is verified).
 */
async function writeBody(
  input: TimelineInput,
  total: number,
  verifying: Promise<FastVerifyResult>,
  sink: (chunk: string | Uint8Array) => Promise<boolean>,
  shown: (s: string) => string,
  /** Called after each chunk of the journal (HeldPage.settle); false: stop. */
  settle: () => Promise<boolean> = async () => true,
  /** The rows handed by the verify itself (drawInOnePass), instead of read after it or beside it. */
  onePass: OnePass | null = null,
) {
  const maxEvents = input.maxEvents ?? DEFAULT_MAX_EVENTS;
  const threshold = input.maxBars ?? DEFAULT_MAX_BARS;
  const by = input.lanes ?? "role";
  const win = new EventWindow(input.window?.from, input.window?.to, maxEvents);
  const fp = new ReplayFingerprint();
  const series = new Series();
  const density = new LaneDensity(by, MAX_DENSITY_LANES);
  /** Table rows of the next events block, each in its page form (`scriptJson`, UTF-8), joined by commas. */
  let rows = new ByteSink(1 << 16);
  let blockRows = 0;
  let closed: unknown[][] = [];
  /** Attempts held back until it is known whether they all fit as bars (null: they do not; the page draws curves). */
  let held: { tuple: unknown[]; claim: number; end: number | null; bytes: number }[] | null = [];
  let heldBytes = 0;
  let drawnBytes = 0;
  let drawn = 0;
  /** Attempts of the window not drawn because the bars' byte bound was reached. */
  let undrawn = 0;
  const draw = (tuple: unknown[], bytes: number): void => {
    if (drawnBytes + bytes > ATTEMPT_BYTES) {
      undrawn++;
      return;
    }
    drawnBytes += bytes;
    drawn++;
    closed.push(tuple);
  };
  const tracker = new AttemptTracker((a) => {
    density.add(laneOf(a, by), a.start, a.end, a.outcome !== "done");
    const claim = a.events[0] ?? 0;
    const end = a.closeIndex;
    // curves: only the window's attempts are bars, and no bar is made of the others
    if (held === null && !win.overlaps(claim, end)) return;
    const tuple = attemptTuple(a);
    const bytes = scriptJson(tuple).length + 1;
    if (held === null) return draw(tuple, bytes);
    held.push({ tuple, claim, end, bytes });
    heldBytes += bytes;
    if (held.length > threshold || heldBytes > ATTEMPT_BYTES) {
      // Too many to draw one bar each: from here on the run is curves, and bars only for the window.
      for (const h of held) if (win.overlaps(h.claim, h.end)) draw(h.tuple, h.bytes);
      held = null;
    }
  });
  const types = new Map<string, number>();
  let n = 0;
  let discarded = 0;
  let t0: number | null = null;
  let lastT = 0;
  let lastTs: number | null = null;
  /** The last row's event_hash. */
  const lastHash = new LastText();
  let ticks = 0;
  let cost: number | null = null;
  /** False once a row says an attempt's cost is unknown (this project's task_completed.cost_source, run_completed.cost_known). */
  let costKnown = true;
  let tokens = 0;
  let git = { branch: "", sha: "" };
  let stopped = false;
  /** Blocks of the page made and not yet written (the rows are read synchronously; the sink is awaited between). */
  const ready: (string | Uint8Array)[] = [];
  const flush = (force: boolean): void => {
    if (blockRows > 0 && (force || blockRows >= BLOCK_ROWS || rows.len >= BLOCK_BYTES)) {
      ready.push(eventsBlock(rows.view()));
      rows.len = 0;
      blockRows = 0;
      // an entry past the block's bytes leaves no larger buffer behind
      if (rows.buf.length > 2 * BLOCK_BYTES) rows = new ByteSink(1 << 16);
    }
    if (closed.length > 0 && (force || closed.length >= BLOCK_ROWS)) {
      ready.push(dataBlock("attempts", closed));
      closed = [];
    }
  };
  /** Write the blocks made so far; false once the sink's reader went away (the pass stops there). */
  const drain = async (): Promise<boolean> => {
    for (let c = ready.shift(); c !== undefined; c = ready.shift()) {
      if (!(await sink(c))) {
        ready.length = 0;
        stopped = true;
        return false;
      }
    }
    return true;
  };
  /** The row `step` is at, and its table entry once `entrySize` made it (the window asks only while it is open). */
  let current: PageRow | null = null;
  let currentIndex = 0;
  let currentT: number | null = null;
  /** Where the entry `entrySize` wrote begins in `rows` (-1: it wrote none). */
  let entryAt = -1;
  /** The table entry's fields before its payload, from the row's cells as displayRow shows them. */
  const entryHead = (shown: PyObject): unknown[] => {
    const d = displayRow(shown, null);
    return [currentIndex, currentT, clipText(d.event, KEY_CHARS), clipText(d.agent, FIELD_CHARS), clipText(d.task, FIELD_CHARS), clipText(d.detail, FIELD_CHARS)];
  };
  const cells = new RowCells();
  /** Write the row's table entry to `rows`; its size as the window counts it (its UTF-16 length and a separator). */
  const entrySize = (): number => {
    const r = current!;
    entryAt = rows.len;
    if (blockRows > 0) rows.byte(COMMA);
    if (input.exactPass) {
      // the reference: the entry made as a string
      const head = entryHead(r.shown);
      head.push(payloadText(renderJson(r.full(), null)));
      return appendText(rows, scriptJson(head)) + 1;
    }
    // the fields' JSON with its closing bracket made the payload's separator, then the payload from bytes; the fields
    // from the row's bytes where the prose table reads its cells so (no value made), else made as a string
    let units: number;
    if (r.loaded !== null && cells.read(r.loaded, null)) units = appendCellsHead(rows, currentIndex, currentT, cells);
    else {
      units = appendText(rows, scriptJson(entryHead(r.shown)));
      rows.buf[rows.len - 1] = COMMA;
    }
    const json = r.json();
    units += json !== null ? appendPayload(rows, json) : appendRowPayload(rows, r.full());
    rows.byte(RBRACKET);
    return units + 2;
  };
  const figures = new RowFigures();
  /** What the row's event name says of the run (its type's count, ticks, cost known, git); whether it is a tick. */
  const tally = (row: PyObject, event: string): boolean => {
    const typeName = clipText(event, KEY_CHARS);
    const typeKey = types.has(typeName) || types.size < MAX_EVENT_TYPES ? typeName : "(other)";
    types.set(typeKey, (types.get(typeKey) ?? 0) + 1);
    if ((event === "task_completed" && row.get("cost_source") === "unknown") || (event === "run_completed" && row.get("cost_known") === false)) costKnown = false;
    if (event === "run_started" && !git.branch && !git.sha) git = { branch: textField(row, "git_branch"), sha: textField(row, "git_sha") };
    if (event !== "tick_start") return false;
    ticks++;
    return true;
  };
  /**
   * One row: `row` holds at least the keys rows.ts PAGE_FIELDS names, as
   * the full row has them; `full()` is the whole row (the table's).
   */
  const step = (r: PageRow): void => {
    const row = r.fields;
    const i = n++;
    keepText(lastHash, row, "event_hash");
    const event = pyStr(row.get("event"), "");
    figures.read(row, event);
    const ts = figures.ts;
    if (ts !== null) lastTs = ts;
    if (ts !== null && t0 === null) t0 = ts;
    const t = ts === null || t0 === null ? null : Math.round((ts - t0) * 1000);
    if (t !== null) lastT = Math.max(lastT, t);
    const at = t ?? lastT;
    const c = figures.cost;
    if (c !== null) cost = cost === null ? c : Math.max(cost, c);
    const tk = figures.tokens;
    tokens += tk;
    series.add(at, tally(row, event), c, tk);
    tracker.push(row, event, i, at);
    current = r;
    currentIndex = i;
    currentT = t;
    entryAt = -1;
    if (win.take(i, lastTs, at, entrySize)) blockRows++;
    else if (entryAt >= 0) rows.len = entryAt;
    if (blockRows >= BLOCK_ROWS || rows.len >= BLOCK_BYTES || closed.length >= BLOCK_ROWS) flush(false);
  };
  noFTL(step);
  if (input.exactPass) {
    // The reference: every row parsed whole (readJournalSync), written block by block as it is made.
    for (const item of readJournalSync(input.journal, { endOffset: total })) {
      if (item.kind !== "row") {
        discarded++;
        continue;
      }
      const row = item.row;
      fp.update(row);
      step({ fields: row, shown: row, full: () => row, json: () => null, loaded: null });
      if (ready.length > 0 && !(await drain())) break;
      // The row reader never waits on the event loop: give a SIGINT/SIGTERM handler its turn now and then.
      if (n % BLOCK_ROWS === 0) {
        input.onDrawProgress?.(item.offset, total);
        await nextTurn();
      }
    }
  } else if (onePass !== null) {
    const gc = new GrowthCollector(ONE_PASS_GC_GROWTH);
    let reads = 0;
    await onePass.run({ row: step, discarded: () => void discarded++, done: () => false }, fp, () => {
      // the last row's hash leaves the kernel's memory before it is read into again
      lastHash.settle();
      // the verify goes on meanwhile: the blocks made are held at once (the page waits for the verdict anyway)
      for (let c = ready.shift(); c !== undefined; c = ready.shift()) if (!onePass.hold(c)) stopped = true;
      // (reading the resident set's size costs a system call: every few reads)
      if (++reads % GC_POLL_READS === 0) gc.poll();
    });
    // the lines that are not rows: the verify's count of them (it hands only rows)
    discarded = (await verifying).discarded_line_indices.length;
  } else {
    const pageRows = {
      row: step,
      discarded: () => void discarded++,
      done: () => false,
    };
    // the chunks' values and table text are garbage the engine collects late
    const gc = new GrowthCollector(GC_GROWTH);
    for (const offset of readPageRows(input.journal, total, fp, pageRows)) {
      // the chunk's rows are done: the last one's hash leaves the read buffer before the next read
      lastHash.settle();
      if (ready.length > 0 && !(await drain())) break;
      if (!(await settle())) {
        stopped = true;
        break;
      }
      input.onDrawProgress?.(offset, total);
      gc.poll();
      // The row reader never waits on the event loop: give a SIGINT/SIGTERM handler its turn after each chunk.
      await nextTurn();
    }
  }
  const head = lastHash.value();
  tracker.finish(lastT);
  density.extend(lastT);
  const curves = held === null;
  if (held !== null) for (const h of held) closed.push(h.tuple);
  held = null;
  if (!stopped) {
    flush(true);
    await drain();
  }
  const verdict = await verifying;
  const m = input.metadata;
  const started = m?.started_at ?? t0;
  const fingerprint = n === 0 ? "" : fp.digest();
  const windowed = curves || input.window?.from !== undefined || input.window?.to !== undefined;
  const summary = {
    run_id: input.runId,
    started: started === null ? null : new Date(started * 1000).toISOString(),
    git_branch: clipText(m?.git_branch || git.branch, FIELD_CHARS),
    git_sha: clipText(m?.git_sha || git.sha, FIELD_CHARS),
    events: n,
    embedded: win.count,
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
    verdict: { ok: verdict.ok, text: verdictText(verdict, journalVerdictFailure(verdict), shown), divergent_index: verdict.divergent_index },
    lanes: by,
    // The table's window (and, with curves, the bars' time span): null when the table starts at event 0 and bars are one per attempt.
    window: windowed ? { from: win.first, to: win.last, t0: win.t0, t1: win.t1, cut: win.cut } : null,
    // Attempts as curves per lane when there are too many to draw one bar each; the bars are then the window's.
    density: curves ? { ...density.toJson(), drawn, undrawn } : null,
  };
  await sink(dataBlock("summary", summary));
  return {
    events: n,
    embedded: win.count,
    attempts: tracker.count,
    untracked: tracker.untracked,
    fingerprint,
    head,
    durationMs: lastT,
    curves,
    drawnAttempts: curves ? drawn : tracker.count,
    window: windowed ? { from: win.first, to: win.last } : null,
  };
}
