import type { JournalSeal, FastVerifyResult } from "../journal/model.ts";
import type { TreeRequest } from "../journal/fast/subtrees.ts";
import { verifyRunJournal, type RunJournalVerdict, type SignedHeadsCheck } from "../journal/verify-run.ts";
import type { SignedHeads, SpineJudgement } from "../journal/verdict.ts";
import { journalOutcome } from "../ci/journal.ts";
import type { InputVerdict } from "./ci-report.ts";
import { reportVerifyStats, verifyInterrupt } from "./fast-verify.ts";
import { withInterrupts } from "./interrupt.ts";
import { byteProgress, type ByteProgress } from "./progress.ts";
import { tornTailFix, tornTailProse, withTornTailJson } from "./torn-hint.ts";

/**
 * The one verify → stats → report → render flow of the run-journal verify
 * commands (`journal verify`, `replay <RUN_ID> --verify`): the progress
 * line and the interrupt guard around the library's `verifyRunJournal`,
 * the stats line, then the command's own prose and JSON, with the torn-tail
 * hint added to both. The verdict is the library's (journal/verdict.ts);
 * each command keeps its wording in `render`.
 */
export interface JournalVerdictSpec<H extends SignedHeads, S extends SpineJudgement> {
  command: string;
  json: boolean;
  path: string;
  runId: string;
  seal: JournalSeal | null;
  threads: number | undefined;
  linksOnly: boolean;
  /** `--max-row-bytes`: the longest row verified (undefined: the verify default, 256 MiB). */
  maxRowBytes?: number;
  /** `--allow-empty`: verify an empty journal as 0 events instead of refusing it. */
  allowEmpty?: boolean;
  /** Build these Merkle subtrees in the verify pass (the signed tree heads then need no second pass). */
  tree?: TreeRequest;
  /** Where a negative verdict's divergence report goes (null: none). */
  reportDir: string | null;
  /** What an interrupted verify states (default: path and bytes verified). */
  facts?: (progress: ByteProgress) => Record<string, unknown>;
  /** The further checks folded into the verdict (journal/verify-run.ts). */
  signedHeads?: SignedHeadsCheck<H>;
  spine?: (result: FastVerifyResult) => Promise<S | null>;
  providerState?: boolean;
  onReportError?: (err: unknown) => void;
  /** The verdict's prose (made only when printed: a gate's thousands of findings are not rendered twice) and its document. */
  render(v: RunJournalVerdict<H, S>): { lines: () => string[]; doc: Record<string, unknown> };
}

export async function journalVerdict<H extends SignedHeads = SignedHeads, S extends SpineJudgement = SpineJudgement>(
  spec: JournalVerdictSpec<H, S>,
): Promise<InputVerdict> {
  const progress = byteProgress("verifying");
  const guard = verifyInterrupt(spec.command, spec.json, spec.path, progress);
  if (spec.facts) guard.facts = () => spec.facts!(progress);
  const v = await withInterrupts(guard, () =>
    verifyRunJournal<H, S>(spec.path, {
      seal: spec.seal,
      threads: spec.threads,
      linksOnly: spec.linksOnly,
      maxRowBytes: spec.maxRowBytes,
      allowEmpty: spec.allowEmpty,
      tree: spec.tree,
      onProgress: progress.onProgress,
      runId: spec.runId,
      reportDir: spec.reportDir,
      afterChain: (r) => stats(r, progress),
      signedHeads: spec.signedHeads,
      spine: spec.spine,
      providerState: spec.providerState,
    }).finally(progress.finish),
  );
  if (v.reportError !== null) spec.onReportError?.(v.reportError);
  const { lines, doc } = spec.render(v);
  const fix = tornTailFix(doc, spec.path);
  let prose: string[] | undefined;
  return {
    ok: v.result.ok,
    get lines() {
      return (prose ??= [...lines(), ...(fix ? [tornTailProse(fix)] : [])]);
    },
    doc: withTornTailJson(doc, fix),
    file: spec.path,
    outcome: (base) => journalOutcome({ base, result: v.result, seal: spec.seal, gate: v.checks.gate }),
  };
}

/** The stats line comes after the progress line is gone and before any further check. */
async function stats(r: FastVerifyResult, progress: ByteProgress): Promise<void> {
  progress.finish();
  await reportVerifyStats(r);
}
