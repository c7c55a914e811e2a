import { journalPath } from "../journal/paths.ts";
import { sealJournalDetailed, type SealOutcome } from "../journal/seal.ts";
import { appendJournalHeadSeal, type SpineSealResult } from "./append.ts";
import { auditKeyForSealing } from "./key.ts";

/**
 * Seal a finished run for both tools: this project's seal.json (journal
 * verify reads it) and, with an audit key configured, upstream's
 * journal-head entry in the run's lineage spine (upstream's identity check
 * reads only that). The spine entry is appended only after seal.json is
 * written, so it never seals a journal that did not verify.
 */
export interface RunSeal {
  seal: SealOutcome;
  /** The spine entry, or null when it was not written (`spine_skipped` says why). */
  spine: SpineSealResult | null;
  spine_skipped: "no_audit_key" | "not_asked" | null;
}

export async function sealRun(sddDir: string, runId: string, opts: { spine?: boolean } = {}): Promise<RunSeal> {
  // The key first: a key that cannot be used refuses before anything is written.
  const key = opts.spine === false ? null : auditKeyForSealing();
  const seal = await sealJournalDetailed(sddDir, runId);
  if (opts.spine === false) return { seal, spine: null, spine_skipped: "not_asked" };
  if (key === null) return { seal, spine: null, spine_skipped: "no_audit_key" };
  const spine = appendJournalHeadSeal(sddDir, runId, seal.seal.head, journalPath(sddDir, runId), key);
  return { seal, spine, spine_skipped: null };
}
