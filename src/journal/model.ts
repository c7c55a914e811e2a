import type { RowTextSink } from "./fast/range.ts";
import type { TreeRequest } from "./fast/subtrees.ts";
import type { ProviderStateVerdict } from "./provider-state.ts";
/**
 * The public results of a run-journal verify, as types only: what the exact
 * verifier (journal/verify.ts) and the fast one (journal/fast/) both return.
 * Importing this module loads nothing.
 */

export interface JournalSeal {
  head: string;
  event_count: number;
}

export type Coverage = "complete" | "partial";
export type Identity = "verified" | "mismatched" | "unverifiable";

export interface JournalVerifyResult {
  ok: boolean;
  path: string;
  chain_consistent: boolean;
  coverage: Coverage;
  identity: Identity;
  /** Usable rows (objects), not physical lines. */
  count: number;
  /**
   * Head of the verified prefix: the last stored event_hash that checked
   * out ("" when none did), as Python reports it after a divergence too.
   */
  head: string;
  divergent_index: number | null;
  /** 1-based physical line of the divergent row in the file (null: no divergence, or rows not read from a file). */
  divergent_line: number | null;
  expected_hash: string | null;
  actual_hash: string | null;
  discarded_line_indices: number[];
  errors: string[];
  unauthenticated_fields: string[];
  /**
   * The input's last physical line as this verify read it (not part of the
   * JSON): what the torn-tail policy asks of the discarded lines, so the
   * verdict names a torn write without reading the input again. Null when
   * no line was read from a file (rows in memory, a missing file).
   */
  lastLine: LastLine | null;
}

/** A physical line's number (0-based), where it starts (byte offset), and whether a terminator ended it. */
export interface LastLine {
  index: number;
  start: number;
  terminated: boolean;
}

export interface Divergence {
  index: number;
  /** 0-based physical line of the row (absent or null when the rows did not come from a file). */
  line?: number | null;
  /** Null when the row's hash cannot be computed (unknown hash_profile). */
  expected: string | null;
  actual: string;
  error: string;
}

export type VerifyMode = "full" | "links-only";

export interface FastVerifyOptions {
  seal?: JournalSeal | null;
  /** Worker threads (default: available cores). 1 = this thread only. */
  threads?: number;
  /** Check prev_hash links and hash format only; payloads are not re-hashed. */
  linksOnly?: boolean;
  /** Verify [0, endOffset) only (default: the size at start). */
  endOffset?: number;
  /** Size of a range (default 8 MiB; tests use tiny values to force many boundaries). */
  minRangeBytes?: number;
  /** Number of ranges (default: about one per minRangeBytes, 1 to 16 per thread). */
  ranges?: number;
  /** Run every range in this thread (tests: range logic without workers). */
  inProcess?: boolean;
  /** Read size per range job (tests: tiny values force many chunk boundaries). */
  chunkSize?: number;
  /** Called about every 250 ms with bytes verified so far and the snapshot size. */
  onProgress?: (done: number, total: number) => void;
  /** Called once the snapshot size is taken, before any row is read (tests: simulate a live writer). */
  afterSnapshot?: (snapshotBytes: number) => void;
  /** Also build the journal's Merkle subtrees in the same pass (filled in when the chain verified whole). */
  tree?: TreeRequest;
  /** Longest row taken (default JOURNAL_MAX_ROW_BYTES, 256 MiB); a longer line is `row_too_large`. */
  maxRowBytes?: number;
  /** Also run the provider-state gate in the same pass: its verdict is filled in when the chain verified whole (`ok`). */
  providerStateGate?: { verdict: ProviderStateVerdict | null };
  /**
   * This thread has work of its own meanwhile (the timeline page's rows):
   * with more than one thread, the ranges go to `threads - 1` workers and
   * this one only awaits them.
   */
  leaveThread?: boolean;
  /** Worker threads to use and keep (several journals verified one after another); default: spawned and let go by this verify. */
  workers?: VerifyWorkers;
  /**
   * Stop once this aborts (a VerifyAborted is thrown): looked at between two
   * ranges of a verify in this thread (`threads: 1`), where it yields to
   * the event loop anyway; workers finish the verify they were given.
   */
  signal?: AbortSignal;
  /**
   * Hand each verified row's text, in file order, here (a verify in this
   * thread alone: the ranges one after another). What it was handed stands
   * only if the verify then finds the chain clean.
   */
  rowText?: RowTextSink;
}

/**
 * Worker threads kept across the verifies of several journals, one after
 * another (`replay list` counting its runs): pass the same object to each,
 * close it after the last. Each verify would otherwise start a thread (a
 * heap of its own) while the last one's was still ending; kept, each
 * thread collects between two verifies what the last one left.
 */
export class VerifyWorkers {
  /** The pool, once a verify spawned it (the engine's; a verify of the same mode uses it). */
  pool: { readonly hashing: boolean; close(): void } | null = null;

  close(): void {
    this.pool?.close();
    this.pool = null;
  }
}

export interface FastVerifyResult extends JournalVerifyResult {
  mode: VerifyMode;
  /** False in links-only mode: payload hashes were not recomputed. */
  payloads_checked: boolean;
  /** Bytes of the file that were verified (the snapshot). */
  snapshot_bytes: number;
  /** Bytes appended while verifying (0 when the file did not grow). */
  grew_by: number;
  /** Threads that did the work. */
  threads: number;
  /** Bytes of the input read to reach this verdict (the sum over threads; every byte of the snapshot once). */
  bytes_read: number;
  /** The input was standard input (`-`, `/dev/stdin`), read as one stream in this thread. */
  stream: boolean;
  /**
   * How the rows were verified (diagnostics, not part of the verdict): by
   * the WebAssembly kernel or the exact py-json path.
   */
  rows_by_path: RowsByPath;
}

export interface RowsByPath {
  kernel: number;
  exact: number;
  /** Of `kernel`, the rows the kernel took re-spaced as Python's writer spaces a row (codec/writer-spacing.ts). */
  respaced: number;
  /**
   * The file offsets of the rows the kernel declined as they are written
   * (verified by the exact path, or re-spaced), in order; null when there
   * were more than a few thousand. Every other row was verified by the
   * kernel on its own bytes, so it is spelled as Python's writer spells a row.
   */
  declined_at: number[] | null;
}
