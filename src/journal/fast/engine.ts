import { availableParallelism } from "node:os";
import { inputSize, isStdinPath, type OpenInput } from "../../fsutil/input.ts";
import { remoteSizeAsync } from "../../storage/input.ts";
import { isRemotePath } from "../../storage/ref.ts";
import { chainVerdict } from "../verdict.ts";
import type { FastVerifyOptions, FastVerifyResult, VerifyMode, VerifyWorkers } from "../model.ts";
export type { FastVerifyOptions, FastVerifyResult, RowsByPath, VerifyMode } from "../model.ts";
import { InProcessExecutor, WorkerPool, type Executor } from "./executor.ts";
import { partition } from "./partition.ts";
import { openJournal, type RangeResult, type RangeTask } from "./range.ts";
import { fillProviderState, fillTree, rowLimitOf, rowsByPath, verifyInThread } from "./in-thread.ts";
import { rangesToRedo, refuseOverlong, stitch, trueBases } from "./stitch.ts";

/**
 * The fast verifier: the exact verifier's verdict (same fields, same
 * indices, same messages) at close to the hashing limit.
 *
 *  1. Take a snapshot size (the file may be growing under a live run).
 *     Spawn the workers right away: they load while this thread plans.
 *  2. Split the snapshot at line boundaries into equal ranges (about
 *     8 MiB, at most 16 per thread; journals under 64 MiB are verified in
 *     this thread alone, since a worker's JIT warm-up costs more than it
 *     would save).
 *  3. Every thread claims ranges from a shared counter and verifies them.
 *     A range's rows are hashed at their global position, which for range
 *     k > 0 is not known until the ranges before it are counted: it is
 *     taken from the stored `index` of its first row (what an in-order
 *     writer put there). The stitcher knows the true positions; a range
 *     whose guess was wrong (rows deleted or duplicated, a missing index)
 *     is verified again at its true base — only ranges up to the first
 *     failure can matter, so a tampered journal costs at most that.
 *  4. If the file grew while we read and the snapshot ended inside a line
 *     (a write in progress), verify again up to the last complete line.
 *
 * Memory is a few MiB of buffers per thread whatever the journal size, so
 * peak RSS does not grow with the journal (the bench reports it).
 */

/** Threads to use when not told: the cores this process may run on. */
export function defaultThreads(): number {
  try {
    return Math.max(1, availableParallelism());
  } catch {
    return 1;
  }
}

export const MAX_THREADS = 256;
/** A remote object's threads: past 2–4 ranged GETs in flight the storage server is the limit, and each thread costs memory. */
export const MAX_REMOTE_THREADS = 4;
/**
 * Each worker thread compiles the hot loops afresh (a JIT warm-up that costs
 * more than a small journal's hashing), so a journal smaller than this is
 * verified in one thread.
 */
const MIN_PARALLEL_BYTES = 64 << 20;
/**
 * Ranges of about this size: small enough that threads finish within a
 * few tens of milliseconds of each other, large enough that the per-range
 * cost (opening the file, a result message, a stitch step) does not show.
 */
const DEFAULT_RANGE_BYTES = 8 << 20;
const MAX_RANGES_PER_THREAD = 16;
/**
 * Ranges of a single-threaded verify (and of any journal under
 * MIN_PARALLEL_BYTES): between two ranges the verifying thread yields to
 * its event loop, the only place a SIGINT/SIGTERM handler runs, so a range
 * must take well under the 2 s the signals contract allows, even on the
 * exact path on a loaded machine (where ranges four times this size came
 * near it).
 */
const SINGLE_THREAD_RANGE_BYTES = 16 << 20;

/** Null: no such file; -1: cannot be stat'ed (the open then reports why). A remote object: its size. */
const fileSize = inputSize;

function bytesRead(results: readonly RangeResult[]): number {
  return results.reduce((sum, r) => sum + r.bytesRead, 0);
}

export async function verifyJournalFast(path: string, opts: FastVerifyOptions = {}): Promise<FastVerifyResult> {
  const linksOnly = opts.linksOnly ?? false;
  const requested = opts.rowText !== undefined ? 1 : requestedThreads(path, opts.threads);
  const base = { mode: (linksOnly ? "links-only" : "full") as VerifyMode, payloads_checked: !linksOnly };
  // Standard input: one range read as a stream to its end in this thread (no size to split, no second pass).
  if (opts.rowText !== undefined && (isStdinPath(path) || isRemotePath(path))) throw new Error("verify: rows' texts are handed on from a local file only");
  if (isStdinPath(path)) return verifyInThread(path, opts);
  // A remote object is never waited on by this thread while it blocks: its
  // size is awaited here (later asks are answered from the bridge's cache),
  // partition probes are awaited, and every range is verified by a worker
  // (remoteOnly below). A signal handler runs only when this thread's event
  // loop does: a read blocked here would hold off SIGINT/SIGTERM for as long
  // as a slow server takes.
  const remote = isRemotePath(path);
  if (remote) await remoteSizeAsync(path);
  const size0 = fileSize(path);
  // Opening refuses a non-regular file and validates readability (permissions) with the reader's error.
  if (size0 === null) {
    // Missing file: an empty, consistent chain (mismatched against a seal).
    const v = chainVerdict({ path, exists: false, walk: { count: 0, prefixHead: "", divergence: null }, discarded: [], lastLine: null, seal: opts.seal });
    return { ...v, ...base, snapshot_bytes: 0, grew_by: 0, threads: 1, bytes_read: 0, stream: false, rows_by_path: rowsByPath([]) };
  }
  const input = openJournal(path);
  let snapshot: number;
  let bounds: number[];
  let exec: Executor | null = null;
  let progress: ProgressTracker;
  try {
    const size = input.size ?? 0;
    snapshot = Math.min(opts.endOffset ?? size, size);
    progress = new ProgressTracker(snapshot, opts.onProgress);
    const count = rangeCount(snapshot, requested, opts);
    // Spawn the workers before partitioning: they load while this thread partitions.
    const threads = verifyThreads(snapshot, requested, opts);
    if (remote && !opts.inProcess) exec = WorkerPool.spawn(threads, () => progress.poll(), !linksOnly, { mainLane: false });
    else if (opts.leaveThread && threads > 1) exec = WorkerPool.spawn(threads - 1, () => progress.poll(), !linksOnly, { mainLane: false });
    else exec = threads > 1 ? workersFor(opts.workers, threads - 1, () => progress.poll(), !linksOnly) : new InProcessExecutor(() => progress.poll(), !opts.inProcess, opts.signal, opts.rowText);
    bounds = await boundsOf(input, snapshot, count);
  } catch (err) {
    if (!isKept(exec, opts)) exec?.close();
    throw err;
  } finally {
    input.close();
  }
  opts.afterSnapshot?.(snapshot);
  progress.start(exec);
  try {
    const ranges: RangeOptions = { linksOnly, chunkSize: opts.chunkSize, tree: opts.tree?.spec ?? null, maxRowBytes: rowLimitOf(opts), providerState: opts.providerStateGate !== undefined };
    let results = await runRanges(exec, path, bounds, ranges, progress);
    let end = snapshot;
    let grewBy = Math.max(0, (fileSize(path) ?? 0) - snapshot);
    const last = results[results.length - 1];
    if (grewBy > 0 && opts.endOffset === undefined && last && !last.lastLineTerminated && last.lastLineStart < end) {
      // The snapshot ended inside a line that a live writer was appending:
      // that fragment is not a torn tail. Verify up to the last full line.
      end = last.lastLineStart;
      const again = openJournal(path);
      try {
        bounds = await planRanges(again, end, requested, opts);
      } finally {
        again.close();
      }
      progress.reset(end);
      results = await runRanges(exec, path, bounds, ranges, progress);
      grewBy = Math.max(0, (fileSize(path) ?? 0) - end);
    }
    const verdict = stitch({ path, exists: true, results, seal: opts.seal });
    fillTree(opts.tree, verdict, results);
    fillProviderState(opts, verdict, results);
    return {
      ...verdict,
      ...base,
      snapshot_bytes: end,
      grew_by: grewBy,
      threads: exec.threads,
      bytes_read: bytesRead(results),
      stream: false,
      rows_by_path: rowsByPath(results),
    };
  } finally {
    progress.stop();
    if (!isKept(exec, opts)) exec.close();
    else {
      // Another verify follows on the same threads: what this one left is collected before it allocates, in
      // every thread, so the threads' heaps do not grow from one journal to the next.
      (exec as WorkerPool).collect();
      Bun.gc(true);
    }
  }
}

/** `exec` is the caller's kept pool (closed by the caller, not by this verify). */
function isKept(exec: Executor | null, opts: FastVerifyOptions): boolean {
  return exec !== null && exec === (opts.workers?.pool as unknown);
}

/** A pool of `n` workers: the kept one (spawned into `kept` on first use) when its mode fits, else one of this verify's own. */
function workersFor(kept: VerifyWorkers | undefined, n: number, onChunk: () => void, hashing: boolean): WorkerPool {
  if (kept === undefined) return WorkerPool.spawn(n, onChunk, hashing);
  const pool = kept.pool;
  if (pool instanceof WorkerPool && pool.hashing === hashing) {
    pool.onChunk = onChunk;
    return pool;
  }
  if (pool !== null) return WorkerPool.spawn(n, onChunk, hashing);
  const made = WorkerPool.spawn(n, onChunk, hashing);
  kept.pool = made;
  return made;
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
 * How many ranges: SINGLE_THREAD_RANGE_BYTES each when single-threaded or the journal is small, else
 * equal ranges of about DEFAULT_RANGE_BYTES (1 to 16 per thread), so that
 * a thread slowed down (by another process, a busy core) costs at most one
 * small range at the end. (partition() may merge ranges that would hold no
 * line feed, so there can be fewer.)
 */
function rangeCount(end: number, threads: number, opts: FastVerifyOptions): number {
  const override = opts.minRangeBytes ?? envMinRange();
  const size = Math.max(1, override ?? DEFAULT_RANGE_BYTES);
  let wanted: number;
  if (opts.ranges !== undefined) wanted = opts.ranges;
  else if (oneThread(end, opts)) return Math.max(1, Math.round(end / SINGLE_THREAD_RANGE_BYTES));
  // One thread still takes a big journal in ranges of SINGLE_THREAD_RANGE_BYTES: between them it yields to the event loop (signals).
  else if (threads === 1) return Math.max(1, Math.round(end / Math.max(size, SINGLE_THREAD_RANGE_BYTES)));
  else wanted = Math.min(MAX_RANGES_PER_THREAD * threads, Math.max(threads, Math.round(end / size)));
  return Math.max(1, Math.min(wanted, Math.floor(end / size)));
}

/** The threads a verify of `path` may take when asked for `threads` (default: the cores). */
function requestedThreads(path: string, threads: number | undefined): number {
  // A remote object: at most MAX_REMOTE_THREADS ranges read (ranged GETs) at once (src/storage/).
  return Math.min(isRemotePath(path) ? MAX_REMOTE_THREADS : MAX_THREADS, Math.max(1, Math.floor(threads ?? defaultThreads())));
}

/** The threads a verify of the first `end` bytes takes, `requested` at most (1: this thread alone). */
function verifyThreads(end: number, requested: number, opts: FastVerifyOptions): number {
  return opts.inProcess || oneThread(end, opts) ? 1 : Math.min(requested, rangeCount(end, requested, opts));
}

/** Whether a verify of the `bytes` of `path`, asked for `threads` threads (default: the cores), runs on worker threads, not in this thread alone. */
export function verifiesOnWorkers(path: string, bytes: number, threads?: number): boolean {
  return verifyThreads(bytes, requestedThreads(path, threads), {}) > 1;
}

/** A journal too small for worker threads to pay off (their JIT warm-up): verified in one thread, in ranges (rangeCount). */
function oneThread(end: number, opts: FastVerifyOptions): boolean {
  return opts.ranges === undefined && (opts.minRangeBytes ?? envMinRange()) === undefined && end < MIN_PARALLEL_BYTES;
}

/** Boundaries [0, b1, ..., end] of n equal ranges at line starts. */
async function boundsOf(input: OpenInput, end: number, n: number): Promise<number[]> {
  const bounds = n === 1 ? [0, end] : await partition(input, end, Array.from({ length: n }, () => 1 / n));
  input.willRead?.(bounds);
  return bounds;
}

/** Range boundaries for a journal of `end` bytes (see rangeCount). */
function planRanges(input: OpenInput, end: number, threads: number, opts: FastVerifyOptions): Promise<number[]> {
  return boundsOf(input, end, rangeCount(end, threads, opts));
}

/** What every range of a verify is asked for, beside its bytes and base. */
type RangeOptions = Pick<RangeTask, "linksOnly" | "chunkSize" | "tree" | "maxRowBytes" | "providerState">;

/**
 * Verify every range: range 0 at base 0, the others at the base their
 * first row's stored index suggests; then redo, at its true base, any
 * range whose guess was wrong and that can still matter.
 */
async function runRanges(exec: Executor, path: string, bounds: readonly number[], opts: RangeOptions, progress: ProgressTracker): Promise<RangeResult[]> {
  const n = bounds.length - 1;
  const linksOnly = opts.linksOnly;
  const task = (k: number, baseIndex: number, guessBase: boolean): RangeTask => ({
    path,
    start: bounds[k]!,
    end: bounds[k + 1]!,
    isLast: k === n - 1,
    baseIndex,
    guessBase,
    ...opts,
  });
  // Links-only never hashes an index: no guess needed.
  const results = await exec.runAll(Array.from({ length: n }, (_, k) => task(k, 0, k > 0 && !linksOnly)));
  refuseOverlong(path, results);
  if (linksOnly) {
    // No index was hashed: every range is valid at its true base.
    trueBases(results).forEach((b, k) => (results[k]!.baseIndex = b));
    return results;
  }
  const redo = rangesToRedo(results);
  if (redo.length > 0) {
    const bases = trueBases(results);
    progress.extend(redo.reduce((sum, k) => sum + (bounds[k + 1]! - bounds[k]!), 0));
    const again = await exec.runAll(redo.map((k) => task(k, bases[k]!, false)));
    redo.forEach((k, i) => (results[k] = again[i]!));
  }
  return results;
}

/**
 * Progress for the caller's progress line, at most every 250 ms: sampled
 * by a timer while this thread waits for workers, and through poll() from
 * the read loop while this thread verifies a range itself (its event loop
 * is blocked then). Bytes of an earlier run (a redo, a re-read after
 * growth) are carried as `base`.
 */
class ProgressTracker {
  private base = 0;
  private last = 0;
  private timer: ReturnType<typeof setInterval> | null = null;
  private exec: Executor | null = null;
  constructor(
    private total: number,
    private readonly onProgress?: (done: number, total: number) => void,
  ) {}

  start(exec: Executor): void {
    this.exec = exec;
    if (this.onProgress && exec instanceof WorkerPool) {
      this.timer = setInterval(() => this.report(), 250);
    }
  }

  poll(): void {
    if (!this.onProgress) return;
    const now = performance.now();
    if (now - this.last < 250) return;
    this.last = now;
    this.report();
  }

  private report(): void {
    const done = this.base + (this.exec?.bytesDone() ?? 0);
    this.onProgress?.(Math.min(this.total, done), this.total);
  }

  /** A redo run follows: its bytes come on top of the finished ones. */
  extend(bytes: number): void {
    this.base = this.total;
    this.total += bytes;
  }

  reset(total: number): void {
    this.base = 0;
    this.total = total;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
