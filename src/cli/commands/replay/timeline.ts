import { join } from "node:path";
import { UsageError } from "../../../errors/index.ts";
import { AtomicFileStream } from "../../../fsutil/atomic-stream.ts";
import { readMetadata } from "../../../journal/metadata.ts";
import { planReceiptOutput } from "../../../receipts/output.ts";
import { sanitizeCell } from "../../../render/table.ts";
import { assertJournalExists, type RunRef } from "../../../replay/discovery.ts";
import { renderTimeline, type TimelineResult } from "../../../timeline/generate.ts";
import { parseThreads } from "../../fast-verify.ts";
import { verdictJson } from "../../../journal/verdict.ts";
import { withInterrupts } from "../../interrupt.ts";
import { log } from "../../log.ts";
import { printJson, printLines, stdoutClosed, writeStdout } from "../../output.ts";
import { byteProgress } from "../../progress.ts";
import type { ReplayContext } from "./context.ts";
import { refuseFlags } from "./flags.ts";
import { sealFor } from "./seal-source.ts";

export const TIMELINE_USAGE = "usage: bernstein replay <RUN_ID | latest> --html [OUT | -] [--force] [--seal F]";

/**
 * `replay <RUN_ID> --html [OUT]`: verify the run journal, then write its
 * timeline page to OUT (default `<run_dir>/timeline.html`, refreshed each
 * time; `-` for standard output). Output rules as `replay export`: an
 * existing OUT needs --force, never over the journal or anything else under
 * `<sdd>/runs`. A negative verdict still writes the page (it shows the
 * divergence) and exits 1.
 */
export async function runTimeline(ctx: ReplayContext, run: RunRef): Promise<number> {
  refuseFlags(ctx, ["html", "seal", "threads", "force", "allow-empty"], "replay <RUN_ID> --html");
  const [, outArg, ...extra] = ctx.positionals;
  if (extra.length > 0) throw new UsageError(TIMELINE_USAGE);
  const toStdout = outArg === "-";
  if (toStdout && ctx.json) throw new UsageError("--html - writes the page to standard output, where --as-json would put its document; give an OUT file with --as-json");
  const threads = parseThreads(ctx.args.threads);
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
  const input = { runId: run.runId, journal: run.journal, metadata: readMetadata(run.runDir), seal: source.seal, sealPath: source.path, threads, onProgress: progress.onProgress, allowEmpty: Boolean(ctx.args["allow-empty"]) };
  const guard = { json: ctx.json, command: "replay --html", facts: () => ({ run_id: run.runId, output, written: false }), doing: () => `writing ${output}` };
  let r: TimelineResult;
  try {
    r = await withInterrupts(guard, () =>
      renderTimeline(input, file ? (chunk) => file.write(chunk) : toStdoutSink).finally(progress.finish),
    );
    file?.commit();
  } catch (err) {
    file?.abort();
    throw err;
  }
  await report(ctx, run, r, toStdout ? "-" : output, file?.bytes ?? null);
  return r.failure ? 1 : 0;
}

/** Standard output as the page's sink: stop generating once its reader has gone. */
async function toStdoutSink(chunk: string): Promise<boolean> {
  await writeStdout(chunk);
  return !stdoutClosed();
}

async function report(ctx: ReplayContext, run: RunRef, r: TimelineResult, output: string, bytes: number | null): Promise<void> {
  const facts = { run_id: run.runId, output, bytes, events: r.events, embedded_events: r.embedded, attempts: r.attempts, untracked_claims: r.untracked };
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
    `  events:   ${r.events}${r.embedded < r.events ? ` (the first ${r.embedded} listed in the page's table)` : ""}`,
    `  attempts: ${r.attempts}${r.untracked ? ` (+${r.untracked} claims beyond the tracker's bound, not drawn)` : ""}`,
    `  size:     ${bytes} bytes`,
  ];
  // The detail can quote journal content: never raw to the terminal.
  if (r.failure) lines.unshift(`${r.failure.error}: ${sanitizeCell(r.failure.detail)}`, "The page shows the divergence instead of a timeline.");
  await printLines(...lines);
}
