import { jsonFields, type JsonFields } from "../../../json-fields.ts";
import { readMetadata, type RunMetadata } from "../../../journal/metadata.ts";
import { errorMessage } from "../../../errors/index.ts";
import { paint } from "../../../render/ansi.ts";
import { joinFitting, sanitizeCell, terminalWidth, wrapCells } from "../../../render/table.ts";
import { CellSpool } from "../../../replay/cell-spool.ts";
import { runChain } from "../../../replay/chain.ts";
import { assertReadable, type RunRef } from "../../../replay/discovery.ts";
import { durationText, localTime } from "../../../replay/format.ts";
import { scanRunFast, type RunScan } from "../../../replay/run-view.ts";
import { runTable, writeRunTable } from "../../../replay/run-table.ts";
import { streamRunJson } from "../../../replay/run-json.ts";
import type { ByteOutput } from "../../../replay/sink.ts";
import { log } from "../../log.ts";
import { printLines, stdoutClosed, writeStdoutBytes, writeStdoutBytesSync } from "../../output.ts";
import type { ReplayContext } from "./context.ts";
import { limitOf, refuseFlags } from "./flags.ts";
import { sealFor, type SealSource } from "./seal-source.ts";

/**
 * `bernstein replay <RUN_ID> | latest`: a deterministic re-display of the
 * recorded events (nothing is re-executed). A streaming pass over the
 * journal (facts for the header) that leaves each row's cells in a
 * temporary spool, then the table laid out from the spool; the pass stops
 * after `--limit` rows, so memory stays flat and `--limit` never reads the rest.
 */
export async function showRun(ctx: ReplayContext, run: RunRef): Promise<number> {
  refuseFlags(ctx, ["limit", "seal", "with-previous"], "replay <RUN_ID>");
  if (ctx.args["with-previous"]) return showChain(ctx, run);
  return showOne(ctx, run);
}

/**
 * `replay <RUN> --with-previous`: the runs this run continues (its
 * `run_started` names them, see `replay/chain.ts`), oldest first, each
 * shown exactly as `replay <RUN>` shows it under a header line naming the
 * run. `--as-json`: one document `{"ok": true, "runs": [<each run's document>], "missing_previous": …}`.
 * A predecessor that is gone is a note (`missing_previous`), not an error.
 */
async function showChain(ctx: ReplayContext, run: RunRef): Promise<number> {
  assertReadable(run);
  const chain = runChain(ctx.sddDir, run);
  const note = chain.missing ? `previous run ${chain.missing.runId} not shown: ${chain.missing.reason}` : null;
  if (ctx.json) {
    await stdoutBytes.write(utf8('{\n"ok": true,\n"runs": [\n'));
    for (const [i, r] of chain.runs.entries()) {
      if (i > 0) await stdoutBytes.write(utf8(",\n"));
      await streamRunJson({ journal: r.journal, runId: r.runId, metadata: readMetadata(r.runDir), limit: limitOf(ctx) }, stdoutBytes);
      if (stdoutBytes.closed()) return 0;
    }
    const missing = chain.missing ? { run_id: chain.missing.runId, reason: chain.missing.reason } : null;
    await stdoutBytes.write(utf8(`],\n"missing_previous": ${JSON.stringify(missing)}\n}\n`));
    return 0;
  }
  if (note) await printLines(paint("yellow", `Note: ${note}.`), "");
  for (const [i, r] of chain.runs.entries()) {
    const cont = i > 0 ? ` (continues ${chain.runs[i - 1]!.runId})` : "";
    await printLines(paint("bold", `=== Run ${i + 1} of ${chain.runs.length}: ${r.runId}${cont} ===`));
    await showOne(ctx, r);
    if (i < chain.runs.length - 1) await printLines("");
  }
  return 0;
}

async function showOne(ctx: ReplayContext, run: RunRef): Promise<number> {
  const limit = limitOf(ctx);
  assertReadable(run);
  const metadata = readMetadata(run.runDir);
  if (ctx.json) {
    await streamRunJson({ journal: run.journal, runId: run.runId, metadata, limit }, stdoutBytes);
    return 0;
  }
  const spool = CellSpool.open();
  try {
    return await showRunTable(ctx, run, metadata, limit, spool ?? undefined);
  } finally {
    spool?.close();
  }
}

async function showRunTable(ctx: ReplayContext, run: RunRef, metadata: RunMetadata | null, limit: number | undefined, spool?: CellSpool): Promise<number> {
  // The first pass also measures the id columns, so ids get their full width.
  const ids = { agent: 0, task: 0 };
  const scan = await scanRunFast(run.journal, limit, ids, spool);
  if (scan.discarded.length > 0) {
    log.warn(
      `${scan.discarded.length} line(s) of ${run.journal} could not be read as events and are not shown ` +
        `(physical line(s) ${scan.discarded.slice(0, 10).join(", ")}${scan.discarded.length > 10 ? ", …" : ""}); ` +
        `run 'bernstein replay ${run.runId} --verify'`,
    );
  }
  if (scan.events === 0) {
    await printLines(paint("yellow", limit === 0 ? "No events shown (--limit 0)." : "Replay log is empty."));
    return 0;
  }
  await printLines(...header(run, scan, metadata));
  // The scan's garbage is collected before the table's pass starts, so the two do not add up.
  Bun.gc(true);
  await writeRunTable(run.journal, scan.baseTs, limit, runTable(ids, terminalWidth()), stdoutBytes, spool);
  await printLines(...footer(ctx, run, scan));
  return 0;
}

function header(run: RunRef, scan: RunScan, metadata: RunMetadata | null): string[] {
  const events = scan.complete ? `${scan.events}` : `${scan.events} (first ${scan.events} events shown)`;
  const first = [
    `Run: ${run.runId}`,
    `Events: ${events}`,
    `Duration: ${durationText(scan.durationSeconds)}`,
    `Fingerprint: ${scan.fingerprint.slice(0, 16)}...`,
  ];
  const width = terminalWidth();
  const lines = [paint("bold cyan", "Deterministic Replay"), ...joinFitting(first, width)];
  if (metadata) {
    const second: string[] = [];
    const started = metadata.started_at ? localTime(metadata.started_at, true) : null;
    second.push(`Started: ${started ?? "-"}`);
    if (metadata.git_branch) second.push(`Branch: ${metadata.git_branch}`);
    if (metadata.git_sha) second.push(`SHA: ${metadata.git_sha.slice(0, 12)}`);
    if (metadata.config_hash) second.push(`Config: ${metadata.config_hash.slice(0, 12)}...`);
    lines.push(...joinFitting(second, width));
  }
  lines.push("");
  return lines;
}

/** Prose as [style, text] segments; each segment is wrapped to the terminal on its own lines. */
type Segment = [style: string, text: string];

function sealStatus(ctx: ReplayContext, run: RunRef, scan: RunScan): Segment[] {
  let source: SealSource;
  try {
    source = sealFor(ctx, run);
  } catch (err) {
    return [["bold bright_red", `Seal: unreadable (${errorMessage(err)}); completeness is not proven.`]];
  }
  const { seal, path } = source;
  if (!seal) {
    return [["yellow", "Seal: none; completeness is not proven (a journal cut at a row boundary would look the same)."]];
  }
  if (!scan.complete) {
    return [["", `Seal: ${path} exists; not compared, because only the first ${scan.events} events were read.`]];
  }
  if (seal.head === scan.lastEventHash && seal.event_count === scan.events) {
    return [
      ["bright_green", `Seal: matches (${path}: head ${seal.head.slice(0, 16)}..., ${seal.event_count} events).`],
      ["", `The chain itself is not re-verified by this display: run 'bernstein replay ${run.runId} --verify'.`],
    ];
  }
  return [
    [
      "bold bright_red",
      `Seal: DOES NOT MATCH (${path} commits to head ${seal.head.slice(0, 16) || "(empty)"}..., ${seal.event_count} events; ` +
        `the journal ends at ${scan.lastEventHash.slice(0, 16) || "(empty)"}... after ${scan.events} events).`,
    ],
  ];
}

/** Wrap each segment to `width` (words kept whole where possible), painting every line. */
function wrapSegments(segments: Segment[], width: number, indent = ""): string[] {
  return segments.flatMap(([style, text]) =>
    wrapCells(sanitizeCell(text), Math.max(20, width - indent.length)).map((l) => indent + (style ? paint(style, l) : l)),
  );
}

function footer(ctx: ReplayContext, run: RunRef, scan: RunScan): string[] {
  const width = terminalWidth();
  const scope = scan.complete ? `all ${scan.events} events` : `the first ${scan.events} events shown`;
  return [
    "",
    // A hash never splits: it moves to its own line when the label and it do not fit together.
    ...joinFitting(["SHA-256 fingerprint:", scan.fingerprint], width, " "),
    ...wrapSegments([["dim", `digest of ${scope} without their clock fields (ts, elapsed_s); identical event streams share it.`]], width, "  "),
    ...joinFitting(["Merkle head:", `${scan.lastEventHash || "(none)"}${scan.complete ? "" : " (of the last event shown)"}`], width, " "),
    ...wrapSegments([["dim", "The Merkle head identifies this event stream; it proves the stream is complete only if it also matches a seal."]], width, "  "),
    ...wrapSegments(sealStatus(ctx, run, scan), width),
  ];
}

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

const stdoutBytes: ByteOutput = { write: writeStdoutBytes, writeSync: writeStdoutBytesSync, closed: stdoutClosed };

/** The document `showChain` writes (`replay <RUN_ID> --with-previous --as-json`; docs/cli/replay.md). */
export const CHAIN_FIELDS: JsonFields = jsonFields([
  ["ok", "true", "The runs were read"],
  ["runs", "object[]", "Each run's `replay <RUN_ID> --as-json` document, oldest first"],
  ["missing_previous", "object | null", "A predecessor that is gone: {run_id, reason}"],
]);
