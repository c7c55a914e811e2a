import type { FromWorker, Job, ToWorker } from "./protocol.ts";
import { fromWire } from "./protocol.ts";
import { RangeVerifier, type RangeCensus, type RangeResult, type RangeTask } from "./range.ts";

/**
 * Where range jobs run: in this thread (one range after another), or on a
 * pool of worker threads (one job per worker at a time, FIFO queue).
 */
export interface Executor {
  readonly threads: number;
  census(task: RangeTask): Promise<RangeCensus>;
  verify(task: RangeTask): Promise<RangeResult>;
  /** Bytes verified so far by jobs still running (finished jobs are counted by the caller). */
  inFlightBytes(): number;
  close(): void;
}

/** Runs every job synchronously in the calling thread. */
export class InProcessExecutor implements Executor {
  readonly threads = 1;
  private readonly verifier = new RangeVerifier();
  private current = 0;
  constructor(private readonly onChunk?: (bytesDoneInJob: number) => void) {}

  async census(task: RangeTask): Promise<RangeCensus> {
    return this.verifier.census(task);
  }

  async verify(task: RangeTask): Promise<RangeResult> {
    const r = this.verifier.run(task, (done) => {
      this.current = done;
      this.onChunk?.(done);
    });
    this.current = 0;
    return r;
  }

  inFlightBytes(): number {
    return this.current;
  }

  close(): void {}
}

/** The worker module: next to this file in a source run, at its embedded path in the compiled binary. */
function workerSpecifier(): string {
  const here = import.meta.url;
  if (here.startsWith("file:///$bunfs/") || here.startsWith("file:///B:/~BUN/")) {
    // Compiled: entry points are embedded relative to their common root (src/).
    return `${import.meta.dir}/journal/fast/worker.ts`;
  }
  return new URL("./worker.ts", here).href;
}

interface Pending {
  job: Job;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

/** A fixed pool of worker threads sharing a FIFO job queue. */
/**
 * A fixed pool of worker threads sharing a FIFO job queue, optionally with
 * this (the main) thread as one more lane: the main thread would otherwise
 * only wait, it runs the same code ~10% faster than a worker, and one worker
 * fewer is one JIT warm-up and ~6 MB of memory fewer. A main-lane job runs
 * synchronously; between jobs the event loop hands finished worker jobs
 * their next ones.
 */
export class WorkerPool implements Executor {
  readonly threads: number;
  private readonly workers: Worker[] = [];
  private readonly idle: number[] = [];
  private readonly running = new Map<number, Pending>(); // worker index -> job
  private readonly queue: Pending[] = [];
  private readonly progress: Float64Array;
  private nextId = 1;
  private failed: Error | null = null;
  private readonly main: { verifier: RangeVerifier; onChunk?: (bytesDoneInJob: number) => void } | null;
  private mainScheduled = false;
  private mainCurrent = 0;

  private constructor(workers: number, mainLane: { onChunk?: (bytesDoneInJob: number) => void } | null) {
    this.threads = workers + (mainLane ? 1 : 0);
    this.progress = new Float64Array(new SharedArrayBuffer(8 * Math.max(1, workers)));
    this.main = mainLane ? { verifier: new RangeVerifier(), onChunk: mainLane.onChunk } : null;
  }

  /**
   * Start `workers` workers (plus the main-thread lane when `mainLane` is
   * given); rejects if any fails to load (the caller falls back to one thread).
   */
  static async start(workers: number, mainLane: { onChunk?: (bytesDoneInJob: number) => void } | null = null): Promise<WorkerPool> {
    const pool = new WorkerPool(workers, mainLane);
    const threads = workers;
    const spec = workerSpecifier();
    const ready: Promise<void>[] = [];
    for (let i = 0; i < threads; i++) {
      const w = new Worker(spec);
      pool.workers.push(w);
      ready.push(
        new Promise<void>((resolve, reject) => {
          w.onmessage = (e: MessageEvent<FromWorker>) => {
            if (e.data.kind === "ready") {
              w.onmessage = (ev: MessageEvent<FromWorker>) => pool.onMessage(i, ev.data);
              w.onerror = (ev) => pool.onWorkerError(i, ev);
              pool.idle.push(i);
              resolve();
            }
          };
          w.onerror = (ev) => reject(new Error(`worker failed to start: ${ev.message}`));
        }),
      );
      const init: ToWorker = { kind: "init", progress: pool.progress.buffer as SharedArrayBuffer, slot: i };
      w.postMessage(init);
    }
    try {
      await Promise.all(ready);
    } catch (err) {
      pool.close();
      throw err;
    }
    return pool;
  }

  census(task: RangeTask): Promise<RangeCensus> {
    return this.submit({ kind: "census", id: this.nextId++, task }) as Promise<RangeCensus>;
  }

  verify(task: RangeTask): Promise<RangeResult> {
    return this.submit({ kind: "verify", id: this.nextId++, task }) as Promise<RangeResult>;
  }

  inFlightBytes(): number {
    let sum = this.mainCurrent;
    for (const i of this.running.keys()) sum += this.progress[i]!;
    return sum;
  }

  close(): void {
    for (const w of this.workers) w.terminate();
    this.workers.length = 0;
    for (const p of [...this.running.values(), ...this.queue]) p.reject(new Error("fast verify pool closed"));
    this.running.clear();
    this.queue.length = 0;
  }

  private submit(job: Job): Promise<unknown> {
    if (this.failed) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => {
      this.queue.push({ job, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.idle.length > 0 && this.queue.length > 0) {
      const i = this.idle.shift()!;
      const p = this.queue.shift()!;
      this.running.set(i, p);
      this.progress[i] = 0;
      this.workers[i]!.postMessage(p.job satisfies ToWorker);
    }
    if (this.main && this.queue.length > 0 && !this.mainScheduled) {
      this.mainScheduled = true;
      setImmediate(() => void this.runMainLane());
    }
  }

  /** Run queued jobs in this thread, yielding to the event loop between them. */
  private async runMainLane(): Promise<void> {
    const main = this.main!;
    try {
      while (this.queue.length > 0 && !this.failed) {
        const p = this.queue.shift()!;
        try {
          if (p.job.kind === "census") p.resolve(main.verifier.census(p.job.task));
          else {
            const r = main.verifier.run(p.job.task, (done) => {
              this.mainCurrent = done;
              main.onChunk?.(this.inFlightBytes());
            });
            this.mainCurrent = 0;
            p.resolve(r);
          }
        } catch (err) {
          this.mainCurrent = 0;
          p.reject(err instanceof Error ? err : new Error(String(err)));
        }
        // let finished workers report (and take the next jobs) before the next main-lane job
        await new Promise<void>((r) => setImmediate(r));
        this.dispatch();
      }
    } finally {
      this.mainScheduled = false;
      if (this.queue.length > 0 && !this.failed) this.dispatch();
    }
  }

  private onMessage(i: number, msg: FromWorker): void {
    const p = this.running.get(i);
    if (!p || msg.kind === "ready") return;
    this.running.delete(i);
    this.progress[i] = 0;
    this.idle.push(i);
    if (msg.kind === "error") p.reject(fromWire(msg.error));
    else if (msg.kind === "census") p.resolve(msg.census);
    else p.resolve(msg.result);
    this.dispatch();
  }

  private onWorkerError(i: number, ev: ErrorEvent): void {
    const err = new Error(`fast verify worker crashed: ${ev.message}`);
    this.failed = err;
    const p = this.running.get(i);
    this.running.delete(i);
    p?.reject(err);
    for (const q of this.queue) q.reject(err);
    this.queue.length = 0;
  }
}
