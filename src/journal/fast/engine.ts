import { availableParallelism } from "node:os";
import { closeSync, fstatSync, statSync } from "node:fs";
import { BernsteinError } from "../../errors.ts";
import { ChainWalker, verdictOf, type JournalSeal, type JournalVerifyResult } from "../verify.ts";
import { InProcessExecutor, WorkerPool, type Executor } from "./executor.ts";
import { partition, rangeWeights } from "./partition.ts";
import { openJournal, type RangeResult, type RangeTask } from "./range.ts";
import { rangesToRedo, stitch, trueBases } from "./stitch.ts";

/**
 * The fast verifier: the exact verifier's verdict (same fields, same
 * indices, same messages) at close to the hashing limit.
 *
 *  1. Take a snapshot size (the file may be growing under a live run).
 *  2. Split it at line boundaries into ranges (two per thread, at least
 *     32 MiB each: smaller journals are verified in this thread, since a
 *     worker's JIT warm-up costs more than it would save).
 *  3. Full mode: count the rows before each range with a newline census
 *     (ranges 0..n-2), verify every range at its base row index on a
 *     worker, redo any range whose census was off (junk or blank-looking
 *     lines), stitch the ranges into one walk. Links-only: no census.
 *  4. If the file grew while we read and the snapshot ended inside a line
 *     (a write in progress), verify again up to the last complete line.
 *
 * Memory is under 2 MiB of buffers per thread whatever the journal size
 * (peak RSS of the whole process: about 47 MB with one thread, 55 MB with
 * two — this thread plus one worker — on 220 MB and 2 GB journals alike).
 */

export type VerifyMode = "full" | "links-only";

export interface FastVerifyOptions {
  seal?: JournalSeal | null;
  /** Worker threads (default: available cores). 1 = this thread only. */
  threads?: number;
  /** Check prev_hash links and hash format only; payloads are not re-hashed. */
  linksOnly?: boolean;
  /** Verify [0, endOffset) only (default: the size at start). */
  endOffset?: number;
  /** Smallest range worth a thread (default 32 MiB; tests use tiny values to force many boundaries). */
  minRangeBytes?: number;
  /** Number of ranges (default: two per thread, each at least minRangeBytes). */
  ranges?: number;
  /** Run every range in this thread (tests: range logic without workers). */
  inProcess?: boolean;
  /** Read size per range job (tests: tiny values force many chunk boundaries). */
  chunkSize?: number;
  /** Called about every 250 ms with bytes verified so far and the snapshot size. */
  onProgress?: (done: number, total: number) => void;
  /** Called once the snapshot size is taken, before any row is read (tests: simulate a live writer). */
  afterSnapshot?: (snapshotBytes: number) => void;
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
}

/** Threads to use when not told: the cores this process may run on. */
export function defaultThreads(): number {
  try {
    return Math.max(1, availableParallelism());
  } catch {
    return 1;
  }
}

export const MAX_THREADS = 256;
/**
 * Each worker thread compiles the hot loops afresh (JIT warm-up of some
 * 100 ms of CPU), so a range smaller than this costs more than it saves.
 */
const DEFAULT_MIN_RANGE = 32 << 20;
/** Verify speed / census speed: sizes ranges so threads finish together. */
const CENSUS_RATIO = 0.1;

function fileSize(path: string): number | null {
  try {
    return statSync(path).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    return -1;
  }
}

export async function verifyJournalFast(path: string, opts: FastVerifyOptions = {}): Promise<FastVerifyResult> {
  const linksOnly = opts.linksOnly ?? false;
  const requested = Math.min(MAX_THREADS, Math.max(1, Math.floor(opts.threads ?? defaultThreads())));
  const size0 = fileSize(path);
  const base = { mode: (linksOnly ? "links-only" : "full") as VerifyMode, payloads_checked: !linksOnly };
  if (size0 === null) {
    // Missing file: an empty, consistent chain (mismatched against a seal).
    const v = verdictOf({ path, exists: false, walker: new ChainWalker(), discarded: [], seal: opts.seal });
    return { ...v, ...base, snapshot_bytes: 0, grew_by: 0, threads: 1 };
  }
  // Opening validates readability (directory, permissions) with the reader's error.
  const fd = openJournal(path);
  let snapshot: number;
  let bounds: number[];
  try {
    snapshot = Math.min(opts.endOffset ?? fstatSync(fd).size, fstatSync(fd).size);
    bounds = planRanges(fd, snapshot, requested, opts, linksOnly);
  } finally {
    closeSync(fd);
  }
  opts.afterSnapshot?.(snapshot);
  const threads = opts.inProcess ? 1 : Math.min(requested, bounds.length - 1);
  const progress = new ProgressTracker(snapshot, opts.onProgress);
  let exec: Executor | null = null;
  if (threads > 1) {
    try {
      // threads - 1 workers, and this thread as the last lane
      exec = await WorkerPool.start(threads - 1, { onChunk: (inFlight) => progress.poll(inFlight) });
    } catch {
      exec = null; // workers unavailable: verify in this thread
    }
  }
  exec ??= new InProcessExecutor((inFlight) => progress.poll(inFlight));
  progress.start(exec);
  try {
    let results: RangeResult[];
    try {
      results = await runRanges(exec, path, bounds, linksOnly, opts.chunkSize, progress);
    } catch (err) {
      // A worker that died (not an input error, which every thread reports
      // alike) must not turn a verdict into a crash: redo it in this thread.
      if (err instanceof BernsteinError || !(exec instanceof WorkerPool)) throw err;
      exec.close();
      exec = new InProcessExecutor((inFlight) => progress.poll(inFlight));
      progress.reset(snapshot);
      results = await runRanges(exec, path, bounds, linksOnly, opts.chunkSize, progress);
    }
    let end = snapshot;
    let grewBy = Math.max(0, (fileSize(path) ?? 0) - snapshot);
    const last = results[results.length - 1];
    if (grewBy > 0 && opts.endOffset === undefined && last && !last.lastLineTerminated && last.lastLineStart < end) {
      // The snapshot ended inside a line that a live writer was appending:
      // that fragment is not a torn tail. Verify up to the last full line.
      end = last.lastLineStart;
      const fd2 = openJournal(path);
      try {
        bounds = planRanges(fd2, end, requested, opts, linksOnly);
      } finally {
        closeSync(fd2);
      }
      progress.reset(end);
      results = await runRanges(exec, path, bounds, linksOnly, opts.chunkSize, progress);
      grewBy = Math.max(0, (fileSize(path) ?? 0) - end);
    }
    const verdict = stitch({ path, exists: true, results, seal: opts.seal });
    return { ...verdict, ...base, snapshot_bytes: end, grew_by: grewBy, threads: exec.threads };
  } finally {
    progress.stop();
    exec.close();
  }
}

/**
 * BERNSTEIN_FAST_VERIFY_MIN_RANGE (bytes): a tuning knob for the smallest
 * range worth a thread. It changes only how the work is split, never the
 * verdict; the e2e tests set it to 1 to push tiny journals through workers.
 */
function envMinRange(): number | undefined {
  const raw = process.env.BERNSTEIN_FAST_VERIFY_MIN_RANGE;
  if (raw === undefined || !/^[0-9]+$/.test(raw.trim())) return undefined;
  return Number(raw.trim());
}

/**
 * Two ranges per thread by default: a thread slowed down (by another
 * process, a busy core) then costs at most one range, because free threads
 * take the remaining ranges as they finish. With one range per thread the
 * sizes are staggered instead, so the census of range 0 does not delay
 * the thread that verifies range 1.
 */
function planRanges(fd: number, end: number, threads: number, opts: FastVerifyOptions, linksOnly: boolean): number[] {
  const minRange = Math.max(1, opts.minRangeBytes ?? envMinRange() ?? DEFAULT_MIN_RANGE);
  const wanted = opts.ranges ?? (threads > 1 ? 2 * threads : 1);
  const n = Math.max(1, Math.min(wanted, Math.floor(end / minRange)));
  if (n === 1) return [0, end];
  const staggered = n <= threads && !linksOnly;
  return partition(fd, end, rangeWeights(n, staggered ? CENSUS_RATIO : 0));
}

/**
 * Verify every range: ranges 1.. need their base row index, from a census
 * of the ranges before them (full mode only: links-only never hashes an
 * index). Jobs go to the executor as soon as their input is known.
 */
async function runRanges(
  exec: Executor,
  path: string,
  bounds: readonly number[],
  linksOnly: boolean,
  chunkSize: number | undefined,
  progress: ProgressTracker,
): Promise<RangeResult[]> {
  const n = bounds.length - 1;
  const task = (k: number, baseIndex: number): RangeTask => ({
    path,
    start: bounds[k]!,
    end: bounds[k + 1]!,
    isLast: k === n - 1,
    baseIndex,
    linksOnly,
    chunkSize,
  });
  const verifyJob = (k: number, baseIndex: number): Promise<RangeResult> =>
    exec.verify(task(k, baseIndex)).then((r) => {
      progress.done(r.end - r.start);
      return r;
    });
  let results: RangeResult[];
  if (linksOnly || n === 1) {
    results = await Promise.all(Array.from({ length: n }, (_, k) => verifyJob(k, 0)));
  } else {
    // The censuses first (they are quick, and every verify(k) but the first
    // waits for them), then verify(0), then verify(k) as soon as censuses
    // 0..k-1 are in; the executor hands jobs out in this order.
    const censuses = Array.from({ length: n - 1 }, (_, k) => exec.census(task(k, 0)));
    const jobs: Promise<RangeResult>[] = [verifyJob(0, 0)];
    let base = 0;
    for (let k = 1; k < n; k++) {
      base += (await censuses[k - 1]!).nonEmptyLines;
      jobs.push(verifyJob(k, base));
    }
    results = await Promise.all(jobs);
  }
  // A census counts non-empty lines; junk or whitespace-only lines make it
  // overshoot, and every later range was hashed at the wrong index: redo
  // those (rare), now that the true counts are known.
  const redo = rangesToRedo(results);
  if (redo.length > 0) {
    const bases = trueBases(results);
    progress.extend(redo.reduce((sum, k) => sum + (bounds[k + 1]! - bounds[k]!), 0));
    const again = await Promise.all(redo.map((k) => verifyJob(k, bases[k]!)));
    redo.forEach((k, i) => (results[k] = again[i]!));
  }
  return results;
}

/**
 * Progress for the caller's progress line: finished range bytes plus the
 * bytes of running jobs. Worker jobs are sampled by a timer; in-process
 * jobs block the event loop, so they report through poll() from the read
 * loop instead (both at most every 250 ms).
 */
class ProgressTracker {
  private finished = 0;
  private last = 0;
  private timer: ReturnType<typeof setInterval> | null = null;
  constructor(
    private total: number,
    private readonly onProgress?: (done: number, total: number) => void,
  ) {}

  start(exec: Executor): void {
    if (this.onProgress && exec instanceof WorkerPool) {
      this.timer = setInterval(() => this.report(exec.inFlightBytes()), 250);
    }
  }

  poll(inFlight: number): void {
    if (!this.onProgress) return;
    const now = performance.now();
    if (now - this.last < 250) return;
    this.last = now;
    this.report(inFlight);
  }

  private report(inFlight: number): void {
    this.onProgress?.(Math.min(this.total, this.finished + inFlight), this.total);
  }

  done(bytes: number): void {
    this.finished += bytes;
  }

  extend(bytes: number): void {
    this.total += bytes;
  }

  reset(total: number): void {
    this.finished = 0;
    this.total = total;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
