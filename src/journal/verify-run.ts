import type { FastVerifyOptions, FastVerifyResult } from "./model.ts";
import { refuseContent, verdictContent } from "./content.ts";
import {
  chainIntact,
  foldProviderState,
  foldSignedHeads,
  foldSpine,
  providerStateApplies,
  wantsDivergenceReport,
  type SignedHeads,
  type SpineJudgement,
  type VerdictChecks,
} from "./verdict.ts";
import { verifyJournal, writeDivergenceReport } from "./verify.ts";

/** `--seal NOTE` / `--since OLD`: the signed tree heads, checked by the caller's layer (tlog). */
export interface SignedHeadsCheck<H extends SignedHeads> {
  /** A signed seal note was given (a chain it cannot be checked on is then `mismatched`). */
  sealNote: boolean;
  /** Refuse a verify the heads cannot be checked on (standard input, links-only), whatever the chain's state. */
  admit(result: FastVerifyResult): void;
  /** Check the heads against the intact chain. */
  check(result: FastVerifyResult): Promise<H>;
}

export interface RunJournalVerifyOptions<H extends SignedHeads = SignedHeads, S extends SpineJudgement = SpineJudgement> extends FastVerifyOptions {
  runId: string;
  /** Where a negative verdict's `divergence_report.json` goes (null: nowhere, e.g. standard input). */
  reportDir: string | null;
  /** `--allow-empty`: an empty journal is verified as 0 events instead of refused (`input_empty`). */
  allowEmpty?: boolean;
  /** How the input is named in a refusal (default: the path). */
  input?: string;
  /** Called once the chain's verdict stands, before any further check (the CLI's stats line). */
  afterChain?: (result: FastVerifyResult) => Promise<void>;
  /** The signed tree heads to fold into the verdict. */
  signedHeads?: SignedHeadsCheck<H>;
  /** The lineage spine's judgement of the journal (null: the run has none). */
  spine?: (result: FastVerifyResult) => Promise<S | null>;
  /** Meet upstream's provider-state gate (`replay <RUN_ID> --verify`). */
  providerState?: boolean;
}

export interface RunJournalVerdict<H extends SignedHeads = SignedHeads, S extends SpineJudgement = SpineJudgement> {
  /** The verdict, every check folded in (verdict.ts). */
  result: FastVerifyResult;
  /** The further checks' own reports. */
  checks: VerdictChecks<H, S>;
  /** The divergence report written, if any. */
  reportPath: string | null;
  /** Why the report could not be written (best effort, as in Python: never turns a verdict into an error). */
  reportError: unknown;
}

/**
 * Verify a run journal as `journal verify` and `replay <RUN_ID> --verify`
 * do: the fast verify (against the seal, if any), the further checks asked
 * for folded in (verdict.ts's order), then for a negative verdict
 * `divergence_report.json` beside it. An empty input (unless allowed) and
 * one without a journal row are refused (content.ts) before any further
 * check or report.
 */
export async function verifyRunJournal<H extends SignedHeads = SignedHeads, S extends SpineJudgement = SpineJudgement>(
  path: string,
  o: RunJournalVerifyOptions<H, S>,
): Promise<RunJournalVerdict<H, S>> {
  // the gate runs inside the verify's own pass (its rows are read once)
  const gate: FastVerifyOptions["providerStateGate"] = o.providerState ? { verdict: null } : undefined;
  const result = await verifyJournal(path, { seal: o.seal, threads: o.threads, linksOnly: o.linksOnly, onProgress: o.onProgress, tree: o.tree, maxRowBytes: o.maxRowBytes, providerStateGate: gate });
  refuseContent(verdictContent(result, path, o.maxRowBytes), o.input ?? path, { allowEmpty: o.allowEmpty });
  await o.afterChain?.(result);
  const checks: VerdictChecks<H, S> = { signedHeads: null, spine: null, gate: null };
  if (o.signedHeads) {
    o.signedHeads.admit(result);
    checks.signedHeads = chainIntact(result) ? await o.signedHeads.check(result) : null;
    foldSignedHeads(result, o.signedHeads.sealNote, checks.signedHeads);
  }
  if (o.spine) {
    checks.spine = await o.spine(result);
    foldSpine(result, checks.spine);
  }
  if (o.providerState && providerStateApplies(result)) {
    // the verify fills it in whenever its chain verified (fillProviderState): a verdict without it is no verdict
    if (!gate?.verdict) throw new Error("the verify returned without the provider-state gate's verdict");
    checks.gate = gate.verdict;
    foldProviderState(result, checks.gate);
  }
  let reportPath: string | null = null;
  let reportError: unknown = null;
  if (o.reportDir !== null && wantsDivergenceReport(result, checks)) {
    try {
      reportPath = writeDivergenceReport(o.reportDir, o.runId, result);
    } catch (err) {
      reportError = err;
    }
  }
  return { result, checks, reportPath, reportError };
}
