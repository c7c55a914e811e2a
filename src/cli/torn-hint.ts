import { basename, dirname, resolve } from "node:path";
import { JOURNAL_FILE_NAME } from "../journal/paths.ts";

/**
 * A verdict whose first failed check is a torn tail (a writer killed
 * mid-line) has one fix, `bernstein replay repair <RUN>`; the verdict says
 * so, in prose and JSON. The classification is the repair policy's own
 * (journal/verdict-failure.ts asks it), so the hint is given exactly when
 * repair would cut the tail.
 */
export interface TornTailFix {
  /** The command to run, or null when the journal is not in a run directory `repair` can name. */
  command: string | null;
}

/** The repair command for `journal`: `bernstein replay repair <RUN>` (+ `--sdd-dir` when not `.sdd`). */
export function repairCommand(journal: string): string | null {
  const path = resolve(journal);
  if (basename(path) !== JOURNAL_FILE_NAME) return null;
  const runDir = dirname(path);
  const runs = dirname(runDir);
  if (basename(runs) !== "runs") return null;
  const sdd = dirname(runs);
  const sddArg = sdd === resolve(".sdd") ? "" : ` --sdd-dir ${shellWord(sdd)}`;
  return `bernstein replay repair ${shellWord(basename(runDir))}${sddArg}`;
}

function shellWord(s: string): string {
  return /^[A-Za-z0-9_.\/:@%+=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The fix when the verdict's first failed check is a torn tail (classified
 * once, by the repair policy, in journal/verdict-failure.ts); else null.
 */
export function tornTailFix(doc: Record<string, unknown>, journal: string): TornTailFix | null {
  return doc.error === "torn_tail" ? { command: repairCommand(journal) } : null;
}

/** The prose line naming the fix. */
export function tornTailProse(fix: TornTailFix): string {
  return fix.command
    ? `torn tail: the last line was cut mid-write (a killed writer); fix: ${fix.command}`
    : "torn tail: the last line was cut mid-write (a killed writer); 'bernstein replay repair <RUN>' repairs it once the journal is <sdd>/runs/<RUN>/journal.jsonl";
}

/** Add the fix to a JSON verdict: `torn_tail`, `fix`, and `detail` names the fix (one message, not two). */
export function withTornTailJson(doc: Record<string, unknown>, fix: TornTailFix | null): Record<string, unknown> {
  if (!fix) return doc;
  const out: Record<string, unknown> = { ...doc, torn_tail: true, fix: fix.command };
  if (out.error === "torn_tail") out.detail = tornTailProse(fix);
  else if (typeof out.detail === "string") out.detail = `${out.detail}; ${tornTailProse(fix)}`;
  return out;
}
