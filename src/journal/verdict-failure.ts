import { isStdinPath } from "../fsutil/input.ts";
import { isTornTail as repairPolicyTornTail } from "./tail-scan.ts";
import { firstOfErrors, type ErrorCode } from "../errors/index.ts";
import type { JournalVerifyResult } from "./model.ts";

export type JournalFailure = Extract<ErrorCode, "chain_broken" | "torn_tail" | "coverage_partial" | "seal_mismatch">;

/**
 * The error code and one-line detail of a negative journal verdict (null
 * when it is ok), so a verdict carries `error`/`detail` like every other
 * failure. The first failed check names it, in the verifier's order: the
 * chain, then coverage (a torn tail told apart from lines lost in the
 * middle), then the seal; `errors` keeps the full list.
 */
export function journalVerdictFailure(r: JournalVerifyResult): { error: JournalFailure; detail: string } | null {
  if (r.ok) return null;
  if (!r.chain_consistent) return { error: "chain_broken", detail: firstOfErrors(r.errors, "chain broken") };
  if (r.coverage !== "complete") {
    if (isTornTail(r.path, r.discarded_line_indices)) {
      const lines = r.discarded_line_indices.join(", ");
      return {
        error: "torn_tail",
        detail: firstOfErrors([`the journal ends in a torn write (physical line(s) ${lines}); 'replay repair' removes it`, ...r.errors.slice(1)], ""),
      };
    }
    return { error: "coverage_partial", detail: firstOfErrors(r.errors, "coverage partial") };
  }
  return { error: "seal_mismatch", detail: firstOfErrors(r.errors, "seal mismatch") };
}

/**
 * A torn tail as the repair policy defines it (what `replay repair` would
 * cut: one unterminated final line), asked of the repair module itself so
 * the verdict never names a fix that repair would refuse. It reads the file
 * once more, only for a verdict that already lost lines; standard input
 * cannot be read again and is never classified as torn.
 */
function isTornTail(path: string, discarded: readonly number[]): boolean {
  if (discarded.length === 0 || isStdinPath(path)) return false;
  try {
    return repairPolicyTornTail(path);
  } catch {
    return false;
  }
}
