import { jsonFields, type JsonFields } from "../../../json-fields.ts";
import { isAbsolute, join, resolve } from "node:path";
import { UsageError } from "../../../errors/index.ts";
import { AtomicFileStream } from "../../../fsutil/atomic-stream.ts";
import { readMetadata } from "../../../journal/metadata.ts";
import { planReceiptOutput } from "../../../receipts/output.ts";
import { sanitizeCell } from "../../../render/table.ts";
import { assertJournalExists, type RunRef } from "../../../replay/discovery.ts";
import { LANE_GROUPINGS, renderTimeline, type LaneGrouping, type TimelineResult, type WindowBound } from "../../../timeline/generate.ts";
import { parseThreads } from "../../fast-verify.ts";
import { verdictJson } from "../../../journal/verdict.ts";
import { withInterrupts } from "../../interrupt.ts";
import { log } from "../../log.ts";
import { printJson, printLines, stdoutClosed, writeStdout, writeStdoutBytes } from "../../output.ts";
import { byteProgress } from "../../progress.ts";
import type { ReplayContext } from "./context.ts";
import { parseCount, refuseFlags } from "./flags.ts";
import { sealFor } from "./seal-source.ts";

export const TIMELINE_USAGE =
  "usage: bernstein replay <RUN_ID | latest> --html [OUT | -] [--force] [--seal F] [--lanes role|agent|model] [--from I|TIME] [--to I|TIME] [--max-events N] [--max-bars N]";

/** `--from` / `--to`: an event index (digits) or an ISO 8601 time (a date, optionally with a time and zone). */
export function parseBound(value: string, flag: string): WindowBound {
  const v = value.trim();
  if (/^\+?\d[\d_]*$/.test(v)) return { index: parseCount(v, flag) };
  const ms = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(v) ? Date.parse(v) : Number.NaN;
  if (!Number.isFinite(ms)) throw new UsageError(`--${flag} needs an event index or an ISO time (2026-12-01T10:00:00Z), got ${JSON.stringify(value)}`);
  return { time: ms / 1000 };
}

function timelineOptions(ctx: ReplayContext) {
  const a = ctx.args as Record<string, string | undefined>;
  const lanes = a.lanes ?? "role";
  if (!(LANE_GROUPINGS as readonly string[]).includes(lanes)) throw new UsageError(`--lanes is one of ${LANE_GROUPINGS.join(", ")}, got ${JSON.stringify(lanes)}`);
  const from = a.from === undefined ? undefined : parseBound(a.from, "from");
  const to = a.to === undefined ? undefined : parseBound(a.to, "to");
  if (from && to && "index" in from && "index" in to && from.index > to.index) throw new UsageError(`--from ${from.index} is after --to ${to.index}`);
  if (from && to && "time" in from && "time" in to && from.time > to.time) throw new UsageError(`--from ${a.from} is after --to ${a.to}`);
  return {
    lanes: lanes as LaneGrouping,
    window: from || to ? { from, to } : undefined,
    maxEvents: a["max-events"] === undefined ? undefined : parseCount(a["max-events"], "max-events"),
    maxBars: a["max-bars"] === undefined ? undefined : parseCount(a["max-bars"], "max-bars"),
  };
}

/**
 * `replay <RUN_ID> --html [OUT]`: verify the run journal, then write its
 * timeline page to OUT (default `<run_dir>/timeline.html`, refreshed each
 * time; `-` for standard output). Output rules as `replay export`: an
 * existing OUT needs --force, never over the journal or anything else under
 * `<sdd>/runs`. A negative verdict still writes the page (it shows the
 * divergence) and exits 1.
 */
export async function runTimeline(ctx: ReplayContext, run: RunRef): Promise<number> {
  refuseFlags(ctx, ["html", "seal", "threads", "force", "allow-empty", "lanes", "from", "to", "max-events", "max-bars"], "replay <RUN_ID> --html");
  const [, outArg, ...extra] = ctx.positionals;
  if (extra.length > 0) throw new UsageError(TIMELINE_USAGE);
  const toStdout = outArg === "-";
  if (toStdout && ctx.json) throw new UsageError("--html - writes the page to standard output, where --as-json would put its document; give an OUT file with --as-json");
  const threads = parseThreads(ctx.args.threads);
  const options = timelineOptions(ctx);
  assertJournalExists(run);
  const source = sealFor(ctx, run);
  const defaultOut = join(run.runDir, "timeline.html");
  const output = outArg ?? defaultOut;
  const file = toStdout
    ? null
    : (() => {
        const plan = planReceiptOutput({
          out: output,
          sddDir: ctx.sddDir,
          inputs: [run.journal],
          force: ctx.args.force === true,
          isDefault: outArg === undefined,
          what: "the timeline",
          allowInRuns: defaultOut,
        });
        return new AtomicFileStream(plan.path, { replace: plan.replace, fileMode: plan.fileMode, dirMode: plan.dirMode });
      })();
  const progress = byteProgress("verifying");
  const drawing = byteProgress("drawing");
  const input = {
    runId: run.runId,
    journal: run.journal,
    metadata: readMetadata(run.runDir),
    seal: source.seal,
    sealPath: source.path,
    threads,
    onProgress: progress.onProgress,
    onDrawProgress: (done: number, total: number) => {
      progress.finish();
      drawing.onProgress(done, total);
    },
    allowEmpty: Boolean(ctx.args["allow-empty"]),
    // The page names no absolute local path: the run's files by their place in the run.
    paths: pathNames([
      [run.journal, "<run_dir>/journal.jsonl"],
      [run.runDir, "<run_dir>"],
      [ctx.sddDir, "<sdd_dir>"],
    ]),
    ...options,
  };
  const guard = { json: ctx.json, command: "replay --html", facts: () => ({ run_id: run.runId, output, written: false }), doing: () => `writing ${output}` };
  let r: TimelineResult;
  try {
    r = await withInterrupts(guard, () =>
      renderTimeline(input, file ? (chunk) => file.write(chunk) : toStdoutSink).finally(() => {
        progress.finish();
        drawing.finish();
      }),
    );
    file?.commit();
  } catch (err) {
    file?.abort();
    throw err;
  }
  await report(ctx, run, r, toStdout ? "-" : output, file?.bytes ?? null);
  return r.failure ? 1 : 0;
}

/** Each path as given and resolved, absolute ones only, with the name the page shows for it. */
function pathNames(pairs: [string, string][]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [p, name] of pairs) for (const form of [p, resolve(p)]) if (isAbsolute(form)) out[form] = name;
  return out;
}

/** Standard output as the page's sink: stop generating once its reader has gone. */
async function toStdoutSink(chunk: string | Uint8Array): Promise<boolean> {
  await (typeof chunk === "string" ? writeStdout(chunk) : writeStdoutBytes(chunk));
  return !stdoutClosed();
}

async function report(ctx: ReplayContext, run: RunRef, r: TimelineResult, output: string, bytes: number | null): Promise<void> {
  const facts = {
    run_id: run.runId,
    output,
    bytes,
    events: r.events,
    embedded_events: r.embedded,
    attempts: r.attempts,
    untracked_claims: r.untracked,
    drawn_attempts: r.drawnAttempts,
    curves: r.curves,
    window: r.window,
  };
  if (ctx.json) {
    const verdict = verdictJson(r.verdict, run.runId);
    await printJson(r.failure ? { ok: false, error: r.failure.error, detail: r.failure.detail, ...facts, verify: verdict } : { ok: true, ...facts, verify: verdict });
    return;
  }
  if (output === "-") {
    // The page is on stdout: the verdict goes to stderr.
    if (r.failure) log.warn(`${r.failure.error}: ${sanitizeCell(r.failure.detail)}; the page shows the divergence instead of a timeline`);
    return;
  }
  const lines = [
    `Timeline written -> ${output}`,
    `  events:   ${r.events}${eventsNote(r)}`,
    `  attempts: ${r.attempts}${r.untracked ? ` (+${r.untracked} claims beyond the tracker's bound, not drawn)` : ""}${r.curves ? ` (drawn as curves per lane; ${r.drawnAttempts} as bars)` : ""}`,
    `  size:     ${bytes} bytes`,
  ];
  // The detail can quote journal content: never raw to the terminal.
  if (r.failure) lines.unshift(`${r.failure.error}: ${sanitizeCell(r.failure.detail)}`, "The page shows the divergence instead of a timeline.");
  await printLines(...lines);
}

/** Which events the page's table lists in full, when not all of them. */
function eventsNote(r: TimelineResult): string {
  if (r.window) return r.embedded === 0 ? " (none listed in the page's table: the window is empty)" : ` (#${r.window.from}..#${r.window.to}, ${r.embedded} listed in the page's table)`;
  return r.embedded < r.events ? ` (the first ${r.embedded} listed in the page's table)` : "";
}

/** The document `report` prints (`replay <RUN_ID> --html --as-json`; docs/cli/replay.md). */
export const TIMELINE_FIELDS: JsonFields = jsonFields([
  ["ok", "boolean", "The page was written and the journal verified"],
  ["error?", "string", "Why not (the verify's error code)"],
  ["detail?", "string", "One line saying what failed"],
  ["run_id", "string", "The run drawn"],
  ["output", "string", "The page's file (- for stdout)"],
  ["bytes", "number | null", "Size of the page written"],
  ["events", "number", "Journal events read"],
  ["embedded_events", "number", "Events embedded in the page"],
  ["attempts", "number", "Task attempts found"],
  ["untracked_claims", "number", "Claims without a matching attempt"],
  ["drawn_attempts", "number", "Attempts drawn as bars"],
  ["curves", "object", "The curves drawn (cost, tokens, agents …)"],
  ["window", "object", "The time window drawn (--from, --to)"],
  ["verify", "object", "The journal's verdict (the fields of `journal verify --as-json`)"],
]);
