import type { FastVerifyOptions, FastVerifyResult } from "./model.ts";
import { refuseContent, verdictContent } from "./content.ts";
import { verifyJournal, writeDivergenceReport } from "./verify.ts";

export interface RunJournalVerifyOptions<T> extends FastVerifyOptions {
  runId: string;
  /** Where a negative verdict's `divergence_report.json` goes (null: nowhere, e.g. standard input). */
  reportDir: string | null;
  /** Further checks folded into the verdict before the report is written (the signed tree heads). */
  refine?: (result: FastVerifyResult) => Promise<T>;
  /** Whether a negative verdict gets a divergence report (default: yes; not for a failure of a check other than the chain's). */
  wantsReport?: (result: FastVerifyResult, refined: T | null) => boolean;
  /** `--allow-empty`: an empty journal is verified as 0 events instead of refused (`input_empty`). */
  allowEmpty?: boolean;
  /** How the input is named in a refusal (default: the path). */
  input?: string;
}

export interface RunJournalVerdict<T> {
  result: FastVerifyResult;
  /** What `refine` returned (null without one). */
  refined: T | null;
  /** The divergence report written, if any. */
  reportPath: string | null;
  /** Why the report could not be written (best effort, as in Python: never turns a verdict into an error). */
  reportError: unknown;
}

/**
 * Verify a run journal as `journal verify` and `replay <RUN_ID> --verify`
 * do: the fast verify (against the seal, if any), the caller's further
 * checks, then for a negative verdict `divergence_report.json` beside it.
 * An empty input (unless allowed) and one without a journal row are
 * refused (content.ts) before any further check or report.
 */
export async function verifyRunJournal<T = never>(path: string, o: RunJournalVerifyOptions<T>): Promise<RunJournalVerdict<T>> {
  const result = await verifyJournal(path, { seal: o.seal, threads: o.threads, linksOnly: o.linksOnly, onProgress: o.onProgress, tree: o.tree });
  refuseContent(verdictContent(result, path), o.input ?? path, { allowEmpty: o.allowEmpty });
  const refined = o.refine ? await o.refine(result) : null;
  let reportPath: string | null = null;
  let reportError: unknown = null;
  if (!result.ok && o.reportDir !== null && (o.wantsReport?.(result, refined) ?? true)) {
    try {
      reportPath = writeDivergenceReport(o.reportDir, o.runId, result);
    } catch (err) {
      reportError = err;
    }
  }
  return { result, refined, reportPath, reportError };
}
