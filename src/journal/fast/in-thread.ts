import { isStdinPath, JOURNAL_MAX_ROW_BYTES } from "../../fsutil/input.ts";
import { gateOfRanges } from "../provider-state.ts";
import type { FastVerifyOptions, FastVerifyResult, JournalVerifyResult, RowsByPath } from "../model.ts";
import { DECLINED_AT_KEPT, threadVerifier, type RangeResult } from "./range.ts";
import { stitch } from "./stitch.ts";
import type { TreeRequest } from "./subtrees.ts";

/**
 * The whole input verified in this thread, synchronously, as one range
 * read to its end, with the same per-row code and stitch as a file's
 * ranges, so the verdict is the exact verifier's. For standard input (no
 * size to split, no second pass) and for a caller that cannot wait on the
 * event loop (a writer resuming its chain under its lock).
 */
export function verifyInThread(path: string, opts: FastVerifyOptions = {}): FastVerifyResult {
  const linksOnly = opts.linksOnly ?? false;
  const verifier = threadVerifier();
  let r: RangeResult;
  try {
    r = verifier.run(
      {
        path,
        start: 0,
        end: Number.MAX_SAFE_INTEGER,
        isLast: true,
        baseIndex: 0,
        linksOnly,
        chunkSize: opts.chunkSize,
        tree: opts.tree?.spec ?? null,
        maxRowBytes: rowLimitOf(opts),
        providerState: opts.providerStateGate !== undefined,
      },
      opts.onProgress ? (done) => opts.onProgress!(done, done) : undefined,
    );
  } finally {
    verifier.settle();
  }
  const results = [r];
  const verdict = stitch({ path, exists: true, results, seal: opts.seal });
  fillTree(opts.tree, verdict, results);
  fillProviderState(opts, verdict, results);
  const mode = linksOnly ? "links-only" : "full";
  const stream = isStdinPath(path);
  return { ...verdict, mode, payloads_checked: !linksOnly, snapshot_bytes: r.bytesRead, grew_by: 0, threads: 1, bytes_read: r.bytesRead, stream, rows_by_path: rowsByPath(results) };
}

/**
 * The longest row verify takes: a row is hashed from its bytes (never a
 * tree of values), so memory stays near twice the row, and a row Python
 * wrote with a 20 MB tool result still verifies.
 */
export function rowLimitOf(opts: FastVerifyOptions): number {
  return opts.maxRowBytes ?? JOURNAL_MAX_ROW_BYTES;
}

export function rowsByPath(results: readonly RangeResult[]): RowsByPath {
  const paths: RowsByPath = { kernel: 0, exact: 0, respaced: 0, declined_at: [] };
  for (const r of results) {
    paths.kernel += r.kernelRows;
    paths.exact += r.exactRows;
    paths.respaced += r.respacedRows;
    const at = paths.declined_at;
    paths.declined_at = at !== null && r.declinedAt !== null && at.length + r.declinedAt.length <= DECLINED_AT_KEPT ? at.concat(r.declinedAt) : null;
  }
  return paths;
}

/** The provider-state gate's verdict over a journal whose chain verified whole, for the caller who asked. */
export function fillProviderState(opts: FastVerifyOptions, verdict: JournalVerifyResult, results: readonly RangeResult[]): void {
  if (opts.providerStateGate !== undefined) opts.providerStateGate.verdict = verdict.ok ? gateOfRanges(results) : null;
}

/** A verified journal's subtrees (every range's, in order) and kept row, for the caller who asked. */
export function fillTree(request: TreeRequest | undefined, verdict: JournalVerifyResult, results: readonly RangeResult[]): void {
  if (request === undefined || !verdict.chain_consistent || verdict.coverage !== "complete") return;
  request.subtrees = results.flatMap((r) => r.tree?.subtrees ?? []);
  request.row = results.find((r) => r.tree?.row != null)?.tree?.row ?? null;
}
