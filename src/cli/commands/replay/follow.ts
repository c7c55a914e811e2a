import type { JournalVerifyResult } from "../../../journal/model.ts";
import { journalVerdictFailure } from "../../../journal/verdict-failure.ts";
import { runningOrchestrator } from "../../../orchestrator/live-watch.ts";
import { paint } from "../../../render/ansi.ts";
import { renderJson } from "../../../render/json.ts";
import { sanitizeCell } from "../../../render/table.ts";
import { assertReadable, type RunRef } from "../../../replay/discovery.ts";
import { followJournal, type FollowEnd } from "../../../replay/follow.ts";
import { outputFailure, stdoutClosed, writeStdout, writeStdoutBytes } from "../../output.ts";
import { FollowLines } from "../../../replay/follow-lines.ts";
import { byteProgress } from "../../progress.ts";
import type { ReplayContext } from "./context.ts";
import { refuseFlags } from "./flags.ts";
import { withOwnSignalHandling } from "../../interrupt.ts";

const ENDED: Record<FollowEnd, string> = {
  run_completed: "the run completed",
  run_gone: "the run's process is gone",
  diverged: "the journal diverged",
  interrupted: "interrupted",
};

/**
 * `replay <RUN | latest> --follow`: print the run's events as they are
 * appended, each verified first, until the run ends, the chain breaks
 * (exit 1, the divergent index) or SIGINT/SIGTERM (the verdict so far).
 * --as-json: one document per line per event, then the verdict document.
 */
export async function followRun(ctx: ReplayContext, run: RunRef): Promise<number> {
  refuseFlags(ctx, ["follow"], "replay <RUN_ID> --follow");
  assertReadable(run);
  // a signal ends the follow with the verdict so far, not replay's interrupted report
  return withOwnSignalHandling((abort) => follow(ctx, run, abort));
}

async function follow(ctx: ReplayContext, run: RunRef, abort: AbortController): Promise<number> {
  // The events' lines go out together, whenever follow says they may (after each read while catching up, every
  // thousand events read row by row, before waiting for more): a write per event made catching up a write call per row.
  const lines = new FollowLines(ctx.json);
  // a long journal is verified before its first event shows: on a terminal, how far (gone once events are written)
  const progress = byteProgress("verifying");
  const drain = async (): Promise<void> => {
    progress.finish();
    if (lines.pos === 0) return;
    // follow hands on no event while this waits
    await writeStdoutBytes(lines.view());
    lines.reset();
    if (stdoutClosed() || outputFailure()) abort.abort();
  };
  try {
    const { end, verdict } = await followJournal({
      path: run.journal,
      runAlive: () => runningOrchestrator(ctx.sddDir)?.run_id === run.runId,
      signal: abort.signal,
      onEvent: (index, _line, ev) => lines.event(index, ev),
      drain,
      onVerifyProgress: progress.onProgress,
      wants: ctx.json ? "json" : "display",
    });
    if (ctx.json) await writeStdout(renderJson(followDoc(run, verdict, end), null) + "\n");
    else await writeStdout(followProse(run, verdict, end).join("\n") + "\n");
    return verdict.ok ? 0 : 1;
  } finally {
    progress.finish();
  }
}

function followDoc(run: RunRef, r: JournalVerifyResult, end: FollowEnd): Record<string, unknown> {
  return {
    ok: r.ok,
    ...journalVerdictFailure(r),
    run_id: run.runId,
    path: r.path,
    ended: end,
    chain_consistent: r.chain_consistent,
    coverage: r.coverage,
    count: r.count,
    head: r.head,
    divergent_index: r.divergent_index,
    divergent_line: r.divergent_line,
    expected_hash: r.expected_hash,
    actual_hash: r.actual_hash,
    discarded_line_indices: r.discarded_line_indices,
    errors: r.errors,
  };
}

function followProse(run: RunRef, r: JournalVerifyResult, end: FollowEnd): string[] {
  if (r.ok) return [paint("bold bright_green", "chain intact") + ` for ${run.runId} (${r.count} events; ${ENDED[end]})`, `head=${r.head || "(empty)"}`];
  if (!r.chain_consistent) {
    return [
      paint("bold bright_red", "DIVERGENCE") + ` first divergent step ${r.divergent_index} (line ${r.divergent_line}) in run ${run.runId}`,
      `  expected: ${r.expected_hash ?? "(not computable)"}`,
      `  actual:   ${sanitizeCell(r.actual_hash || "(empty)")}`,
      `  head of the verified prefix (steps before ${r.divergent_index}): ${r.head || "(empty)"}`,
    ];
  }
  return [
    paint("bold bright_red", "INCOMPLETE") +
      ` journal for run ${run.runId}: physical line(s) ${r.discarded_line_indices.map((i) => i + 1).join(", ")} could not be read; chain consistent over the ${r.count} events before`,
  ];
}
