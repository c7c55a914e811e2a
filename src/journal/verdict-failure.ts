import { isStdinPath } from "../fsutil/input.ts";
import { tailVerdict, type TailVerdict } from "../fsutil/torn-tail.ts";
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
    if (endsInTornTail(r)) {
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
 * A torn tail as the repair policy defines it (fsutil/torn-tail.ts: one
 * unterminated final line, what `replay repair` would cut), decided from
 * the lines the verify itself read, so the verdict never names a fix that
 * repair would refuse and never reads the input again. Standard input
 * cannot be repaired and is never classified as torn.
 */
export function endsInTornTail(r: JournalVerifyResult): boolean {
  return !isStdinPath(r.path) && tailOfVerdict(r).kind === "torn";
}

/** The torn-tail policy's verdict on the lines a verify read: its discarded lines and its last line (none read: clean, or refused). */
export function tailOfVerdict(r: JournalVerifyResult): TailVerdict {
  const last = r.lastLine;
  const discarded = r.discarded_line_indices;
  return tailVerdict({ path: r.path, discarded, lastLine: last?.index ?? -1, firstDiscardedAt: last?.start ?? null, terminated: last?.terminated ?? false });
}
