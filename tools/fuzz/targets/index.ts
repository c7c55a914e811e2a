import type { FuzzTarget } from "../types.ts";
import { statSync } from "node:fs";
import { join } from "node:path";
import { JOURNAL_MAX_ROW_BYTES } from "../../../src/fsutil/input.ts";
import { verifyJournalFast } from "../../../src/journal/fast/engine.ts";
import { fillProviderState } from "../../../src/journal/fast/in-thread.ts";
import { RangeVerifier } from "../../../src/journal/fast/range.ts";
import { stitch } from "../../../src/journal/fast/stitch.ts";
import { journalTarget, type ParallelVerify } from "./journal.ts";
import { parserTarget } from "./parser.ts";
import { displayTarget } from "./display.ts";
import { receiptTarget } from "./receipt.ts";
import { replayDiffTarget } from "./replay-diff.ts";
import { rowIndexTarget } from "./row-index.ts";
import { serverTarget } from "./server.ts";
import { tarTarget } from "./tar.ts";

export const TARGET_NAMES = ["parser", "journal", "receipt", "server", "replay-diff", "display", "tar", "row-index"] as const;
export type TargetName = (typeof TARGET_NAMES)[number];

export interface TargetOptions {
  /** Compiled binary for the sampled cases (null: in-process only). */
  bin: string | null;
  /** Cross-check with python3 where the target can. */
  python: boolean;
  /** The parallel journal verifier to compare with (journal target). */
  parallel?: ParallelVerify | null;
}

/** The Python reference verifiers shipped with the tests. */
export const REFERENCE_DIR = join(import.meta.dir, "..", "..", "..", "test", "reference");

/**
 * The fast engine as the fuzzer drives it: many ranges in this thread with
 * tiny reads (every range/chunk boundary lands somewhere new), every third
 * call one range with a tiny read area (the kernel for lines longer than
 * it), and every 40th call real worker threads.
 */
export function parallelVerifier(): ParallelVerify {
  let calls = 0;
  return async (path, opts = {}) => {
    calls++;
    const ranges = 1 + (calls % 6);
    const gate = opts.providerStateGate;
    if (calls % 40 === 0) return verifyJournalFast(path, { threads: 2, minRangeBytes: 1, maxRowBytes: opts.maxRowBytes, providerStateGate: gate });
    if (calls % 3 === 1) {
      // One range with a read area of a few hundred bytes: most lines are longer, so the kernel sized to a long line takes them.
      const v = new RangeVerifier(256 + ((calls * 131) % 4000), "always");
      const task = { path, start: 0, end: statSync(path).size, isLast: true, baseIndex: 0, linksOnly: false, chunkSize: 64 + ((calls * 97) % 4096), maxRowBytes: opts.maxRowBytes ?? JOURNAL_MAX_ROW_BYTES, providerState: gate !== undefined };
      const results = [v.run(task)];
      const verdict = stitch({ path, exists: true, results });
      fillProviderState({ providerStateGate: gate }, verdict, results);
      return verdict;
    }
    return verifyJournalFast(path, { threads: ranges, ranges, minRangeBytes: 1, inProcess: true, chunkSize: 64 + ((calls * 97) % 4096), maxRowBytes: opts.maxRowBytes, providerStateGate: gate });
  };
}

export function makeTarget(name: TargetName, opts: TargetOptions): FuzzTarget {
  switch (name) {
    case "parser":
      return parserTarget({ bin: opts.bin, python: opts.python });
    case "journal":
      return journalTarget({ bin: opts.bin, reference: opts.python ? join(REFERENCE_DIR, "verify_journal.py") : null, parallel: opts.parallel ?? parallelVerifier() });
    case "receipt":
      return receiptTarget({ bin: opts.bin, reference: opts.python ? join(REFERENCE_DIR, "verify_receipt.py") : null });
    case "server":
      return serverTarget({ bin: opts.bin });
    case "replay-diff":
      return replayDiffTarget();
    case "display":
      return displayTarget();
    case "tar":
      return tarTarget({ bin: opts.bin, python: opts.python });
    case "row-index":
      return rowIndexTarget();
  }
}
