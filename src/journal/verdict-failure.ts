import { firstOfErrors, type ErrorCode } from "../errors.ts";
import type { JournalVerifyResult } from "./verify.ts";

export type JournalFailure = Extract<ErrorCode, "chain_broken" | "coverage_partial" | "seal_mismatch">;

/**
 * The error code and one-line detail of a negative journal verdict (null
 * when it is ok), so a verdict carries `error`/`detail` like every other
 * failure. The first failed check names it, in the verifier's order: the
 * chain, then coverage, then the seal; `errors` keeps the full list.
 */
export function journalVerdictFailure(r: JournalVerifyResult): { error: JournalFailure; detail: string } | null {
  if (r.ok) return null;
  const error: JournalFailure = !r.chain_consistent ? "chain_broken" : r.coverage !== "complete" ? "coverage_partial" : "seal_mismatch";
  return { error, detail: firstOfErrors(r.errors, error) };
}
