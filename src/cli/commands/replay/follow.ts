import type { JournalVerifyResult } from "../../../journal/model.ts";
import { journalVerdictFailure } from "../../../journal/verdict-failure.ts";
import { runningOrchestrator } from "../../../orchestrator/live-watch.ts";
import { paint } from "../../../render/ansi.ts";
import { renderJson } from "../../../render/json.ts";
import { sanitizeCell } from "../../../render/table.ts";
import { assertReadable, type RunRef } from "../../../replay/discovery.ts";
import { displayRow, numberField } from "../../../replay/display.ts";
import { followJournal, type FollowEnd } from "../../../replay/follow.ts";
import { outputFailure, stdoutClosed, writeStdout } from "../../output.ts";
import type { ReplayContext } from "./context.ts";
import { refuseFlags } from "./flags.ts";
import { withOwnSignalHandling } from "../../interrupt.ts";

/** Characters of event lines written at once. */
const OUT_BATCH = 1 << 16;

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
  return withOwnSignalHandling(() => follow(ctx, run));
}

async function follow(ctx: ReplayContext, run: RunRef): Promise<number> {
  const abort = new AbortController();
  const stop = (): void => abort.abort();
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  let baseTs: number | null = null;
  // The events' lines go out together: after every OUT_BATCH characters, and whenever the lines there so far are out
  // (a write per event made catching up with a long journal a write call per row).
  let out: string[] = [];
  let outChars = 0;
  const flush = async (): Promise<void> => {
    if (out.length === 0) return;
    const text = out.join("");
    out = [];
    outChars = 0;
    await writeStdout(text);
    if (stdoutClosed() || outputFailure()) abort.abort();
  };
  const put = async (line: string): Promise<void> => {
    out.push(line);
    outChars += line.length;
    if (outChars >= OUT_BATCH) await flush();
  };
  try {
    const { end, verdict } = await followJournal({
      path: run.journal,
      runAlive: () => runningOrchestrator(ctx.sddDir)?.run_id === run.runId,
      signal: abort.signal,
      onEvent: async (index, _line, row) => {
        if (ctx.json) await put(renderJson({ index, event: row }, null) + "\n");
        else {
          if (baseTs === null) baseTs = numberField(row.get("ts"));
          const d = displayRow(row, baseTs);
          await put(sanitizeCell(`${String(index).padStart(4)}  ${d.time.padStart(5)}  ${d.event.padEnd(22)} ${d.agent.padEnd(18)} ${d.task.padEnd(8)} ${d.detail}`).trimEnd() + "\n");
        }
      },
      onCaughtUp: flush,
    });
    if (ctx.json) await writeStdout(renderJson(followDoc(run, verdict, end), null) + "\n");
    else await writeStdout(followProse(run, verdict, end).join("\n") + "\n");
    return verdict.ok ? 0 : 1;
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
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
