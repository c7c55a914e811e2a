import { statSync } from "node:fs";
import { UsageError } from "../errors/index.ts";
import { MAX_THREADS } from "../journal/fast/engine.ts";
import type { FastVerifyResult } from "../journal/model.ts";
import type { InterruptOptions } from "./interrupt.ts";
import { writeVerifyStats } from "./output.ts";
import type { ByteProgress } from "./progress.ts";
import { fetchStats } from "../storage/bridge.ts";
import { isRemotePath } from "../storage/ref.ts";

/**
 * CLI glue shared by `journal verify` and `replay <RUN_ID> --verify` for
 * the fast verifier: `--threads` parsing, the stats line and the prose
 * notes (the progress line is progress.ts; the verdict and its JSON are
 * journal/verdict.ts).
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

/** The largest `--max-row-bytes` taken: a row is held whole in memory (about twice its size) while it is hashed. */
const MAX_ROW_LIMIT = 4 * 1024 ** 3;

/**
 * Parse `--max-row-bytes N`: bytes, or with a K, M or G suffix (powers of
 * 1024), from 1 KiB to 4 GiB (undefined: the verify default, 256 MiB).
 */
export function parseMaxRowBytes(raw: unknown): number | undefined {
  if (raw === undefined || raw === null || raw === false) return undefined;
  const m = /^([0-9]+)([KMG]?)(?:i?B)?$/i.exec(String(raw).trim());
  const n = m ? Number(m[1]) * 1024 ** " KMG".indexOf((m[2] || " ").toUpperCase()) : NaN;
  if (!Number.isSafeInteger(n) || n < 1024 || n > MAX_ROW_LIMIT) {
    throw new UsageError(`--max-row-bytes must be a size from 1K to 4G (bytes, or with a K, M or G suffix), got ${JSON.stringify(String(raw))}`, "invalid_row_limit", { value: String(raw) });
  }
  return n;
}

/** Under BERNSTEIN_VERIFY_STATS=1 (writeVerifyStats): which path verified how many rows, and the thread count. */
export async function reportVerifyStats(r: FastVerifyResult): Promise<void> {
  const p = r.rows_by_path;
  // A round trip to the fetcher: only when the stats are printed.
  const remote = process.env.BERNSTEIN_VERIFY_STATS === "1" && isRemotePath(r.path) ? fetchStats() : null;
  const gets = remote ? `; ranged GETs ${remote.gets}, at most ${remote.max_in_flight} in flight` : "";
  const respaced = p.respaced > 0 ? `; re-spaced ${p.respaced} of the kernel's` : "";
  await writeVerifyStats(`rows by kernel ${p.kernel}, exact ${p.exact}; threads ${r.threads}${gets}${respaced}`);
}

/** The prose line naming the row fields no hash covers, on every verdict (upstream prints it too; an edited `ts` stays invisible to the chain). */
export function unauthenticatedLine(r: FastVerifyResult): string {
  return `Unauthenticated fields: ${r.unauthenticated_fields.join(", ")}`;
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

/** What an interrupted verify can state: how far it got (not a verdict on that part). */
export function verifyFacts(path: string, progress: ByteProgress): Record<string, unknown> {
  // Before the first progress sample (~250 ms in) the total is the file's size.
  return { path, bytes_verified: progress.done, bytes_total: progress.total > 0 ? progress.total : sizeOf(path) };
}

function sizeOf(path: string): number | null {
  try {
    return statSync(path).size;
  } catch {
    return null;
  }
}

/** The interrupt guard of a verify (see interrupt.ts). */
export function verifyInterrupt(command: string, json: boolean, path: string, progress: ByteProgress): InterruptOptions {
  return {
    json,
    command,
    facts: () => verifyFacts(path, progress),
    doing: () => (progress.total > 0 ? `verifying (${progress.done} of ${progress.total} bytes seen)` : "verifying"),
  };
}
