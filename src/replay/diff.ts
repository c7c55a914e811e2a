import { refuseContent, runJournalContent } from "../journal/content.ts";
import { readJournal } from "../journal/reader.ts";
import type { PyObject } from "../pyjson/types.ts";
import { comparePair, endVerdict, lengthVerdict, verdictMaker, type JournalDiff } from "./diff-compare.ts";
import { diffRunJournalsFast } from "./diff-fast.ts";
import { diffRules, RowProjector, type DiffRules } from "./diff-rules.ts";

export { changedFields, IGNORED_FIELDS, type DiffReasonCode, type JournalDiff } from "./diff-compare.ts";

/** The exact reader's rows of a journal (discarded lines skipped). */
async function* rowsOf(path: string): AsyncGenerator<PyObject> {
  for await (const item of readJournal(path)) if (item.kind === "row") yield item.row;
}

/**
 * `replay diff` of two run journals. Rows are compared on their bytes
 * where that proves them equal (./diff-fast.ts); any other step, and every
 * divergence reported, goes through comparePair, so the result is the
 * exact path's (diffRunJournalsExact, the reference the tests hold it to).
 */
export async function diffRunJournals(pathA: string, pathB: string, rules: DiffRules = diffRules()): Promise<JournalDiff> {
  return diffRunJournalsFast(pathA, pathB, rules);
}

/**
 * `replay diff` of two runs' journals: refused (journal/content.ts) when one
 * is empty (unless `allowEmpty`) or holds no run-journal row, since two such
 * files would "match"; then `diffRunJournals`. Reading up to the first row
 * with journal members costs one row per journal.
 */
export async function diffRunInputs(pathA: string, pathB: string, rules: DiffRules, opts: { allowEmpty?: boolean } = {}): Promise<JournalDiff> {
  for (const p of [pathA, pathB]) refuseContent(runJournalContent(p), p, { allowEmpty: opts.allowEmpty });
  return diffRunJournals(pathA, pathB, rules);
}

/** The reference: both journals through the exact reader, every step through comparePair. */
export async function diffRunJournalsExact(pathA: string, pathB: string, rules: DiffRules = diffRules()): Promise<JournalDiff> {
  const a = rowsOf(pathA);
  const b = rowsOf(pathB);
  const pa = new RowProjector(rules);
  const pb = new RowProjector(rules);
  const verdict = verdictMaker(rules, () => [...pa.seen, ...pb.seen]);
  try {
    let i = 0;
    for (;;) {
      const [ra, rb] = await Promise.all([a.next(), b.next()]);
      if (ra.done && rb.done) return endVerdict(i, verdict);
      if (ra.done || rb.done) {
        const longer = ra.done ? b : a;
        let extra = 1;
        while (!(await longer.next()).done) extra++;
        return lengthVerdict(i, ra.done ? null : ra.value, rb.done ? null : rb.value, extra, verdict);
      }
      const d = comparePair(i, ra.value, rb.value, pa, pb, verdict);
      if (d !== null) return d;
      i++;
    }
  } finally {
    await Promise.all([a.return(undefined), b.return(undefined)]);
  }
}
