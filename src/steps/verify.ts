import { checkInput } from "../fsutil/input.ts";
import { pyRepr, pyPrefix } from "../pyjson/python.ts";
import { GENESIS_HASH } from "./hash.ts";
import { DEFAULT_MAX_LINE_BYTES } from "../fsutil/lines.ts";
import { forEachFileLine } from "./reader.ts";
import { ChainWalker } from "./walk.ts";

export interface StepJournalVerdict {
  ok: boolean;
  head_hash: string;
  steps: number;
  errors: string[];
}

/**
 * Verify an on-disk step journal (`000000.jsonl`) per §1.5: every
 * non-blank physical line (universal newlines, 1-based, blank lines counted)
 * is checked; errors are collected, never thrown.
 */
export async function verifyStepJournal(path: string, expectedHead?: string | null): Promise<StepJournalVerdict> {
  // A FIFO, device or directory is refused (input_not_regular_file), never read as "no journal".
  if (checkInput(path, { what: "journal" }) === "missing") {
    const ok = expectedHead === undefined || expectedHead === null || expectedHead === GENESIS_HASH;
    return {
      ok,
      head_hash: GENESIS_HASH,
      steps: 0,
      errors: ok ? [] : [`no journal file at ${path}; expected head ${pyRepr(expectedHead)}`],
    };
  }
  const walker = new ChainWalker("disk", DEFAULT_MAX_LINE_BYTES);
  await forEachFileLine(path, "universal", (line, lineNo) => walker.line(line, lineNo), DEFAULT_MAX_LINE_BYTES, walker.probe);
  const r = walker.result();
  if (expectedHead !== undefined && expectedHead !== null && expectedHead !== r.head_hash) {
    r.errors.push(`head mismatch: expected ${pyPrefix(expectedHead, 16)}..., got ${pyPrefix(r.head_hash, 16)}...`);
  }
  return { ok: r.errors.length === 0, ...r };
}
