import { isTerminal } from "../render/terminal.ts";
import { UsageError } from "../errors.ts";
import { MAX_THREADS, type FastVerifyResult } from "../journal/fast/engine.ts";
import { writeVerifyStats } from "./output.ts";

/**
 * CLI glue shared by `journal verify` and `replay <RUN_ID> --verify` for
 * the fast verifier: `--threads` parsing, the fields it adds to the JSON
 * verdict, the prose notes, and the progress line on stderr.
 */

/** Parse `--threads N`: an integer from 1 to MAX_THREADS (undefined: the engine's default, all cores). */
export function parseThreads(raw: unknown): number | undefined {
  if (raw === undefined || raw === null || raw === false) return undefined;
  const t = String(raw).trim();
  if (!/^[0-9]+$/.test(t) || Number(t) < 1 || Number(t) > MAX_THREADS) {
    throw new UsageError(`--threads must be an integer from 1 to ${MAX_THREADS}, got ${JSON.stringify(String(raw))}`, "invalid_threads", {
      threads: String(raw),
    });
  }
  return Number(t);
}

/** The fields the fast verifier adds after the verdict in `--as-json` documents. */
/**
 * The `--as-json` verdict document shared by `journal verify` and
 * `replay <RUN_ID> --verify`: the verdict fields in this order, then how the
 * verify was done.
 */
export function verifyResultJson(r: FastVerifyResult): Record<string, unknown> {
  return {
    ok: r.ok,
    path: r.path,
    chain_consistent: r.chain_consistent,
    coverage: r.coverage,
    identity: r.identity,
    count: r.count,
    head: r.head,
    divergent_index: r.divergent_index,
    expected_hash: r.expected_hash,
    actual_hash: r.actual_hash,
    discarded_line_indices: r.discarded_line_indices,
    errors: r.errors,
    ...fastVerifyJson(r),
  };
}

export function fastVerifyJson(r: FastVerifyResult): Record<string, unknown> {
  return {
    mode: r.mode,
    payloads_checked: r.payloads_checked,
    snapshot_bytes: r.snapshot_bytes,
    grew_by: r.grew_by,
    bytes_read: r.bytes_read,
  };
}

/** Under BERNSTEIN_VERIFY_STATS=1 (writeVerifyStats): which path verified how many rows, and the thread count. */
export async function reportVerifyStats(r: FastVerifyResult): Promise<void> {
  const p = r.rows_by_path;
  await writeVerifyStats(`rows by kernel ${p.kernel}, scanner ${p.scanner}, exact ${p.exact}; threads ${r.threads}`);
}

/** Prose notes: what links-only did not check, and a snapshot of a growing file. */
export function fastVerifyNotes(r: FastVerifyResult): string[] {
  const notes: string[] = [];
  if (!r.payloads_checked) {
    notes.push(
      "links-only: prev_hash links and event_hash format were checked; payload hashes were NOT recomputed (run without --links-only to check payloads)",
    );
  }
  if (r.grew_by > 0) {
    notes.push(
      `note: the journal grew by ${r.grew_by} bytes while it was verified; this verdict covers the snapshot of its first ${r.snapshot_bytes} bytes`,
    );
  }
  return notes;
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(bytes < 1e7 ? 1 : 0)} MB`;
}

function duration(s: number): string {
  if (!Number.isFinite(s)) return "?";
  if (s < 60) return `${Math.ceil(s)}s`;
  return `${Math.floor(s / 60)}m${String(Math.ceil(s % 60)).padStart(2, "0")}s`;
}

export interface ProgressLine {
  onProgress: (done: number, total: number) => void;
  /** Erase the line (if one was drawn). */
  finish: () => void;
}

/**
 * A progress line on stderr (bytes done, rate, ETA), drawn only when stderr
 * is a terminal and the verify has run for more than a second; nothing at
 * all when stderr is piped or redirected.
 */
export function progressLine(to?: NodeJS.WriteStream): ProgressLine {
  const started = performance.now();
  let drawn = false;
  // Checked without touching process.stderr, whose stream costs start-up time.
  if (to ? !to.isTTY : !isTerminal(2)) return { onProgress: () => {}, finish: () => {} };
  const stream = to ?? process.stderr;
  return {
    onProgress(done, total) {
      const elapsed = (performance.now() - started) / 1000;
      if (elapsed < 1) return;
      const rate = done / elapsed;
      const pct = total > 0 ? Math.floor((100 * done) / total) : 100;
      const eta = rate > 0 ? (total - done) / rate : Number.POSITIVE_INFINITY;
      stream.write(`\r\x1b[Kverifying ${mb(done)} / ${mb(total)} (${pct}%), ${mb(rate)}/s, ETA ${duration(eta)}`);
      drawn = true;
    },
    finish() {
      if (drawn) stream.write("\r\x1b[K");
      drawn = false;
    },
  };
}
