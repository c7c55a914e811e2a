import { BernsteinError } from "../../errors/index.ts";
import type { FromWorker, RunMessage, ToWorker } from "./protocol.ts";
import { kernelModule } from "./kernel.ts";
import { fromWire } from "./protocol.ts";
import { RangeVerifier, threadVerifier, type RangeResult, type RangeTask, type RowTextSink } from "./range.ts";
import { workerEntry } from "../../fsutil/worker-entry.ts";
import { nextTurn } from "../../fsutil/turn.ts";

/** A verify in this thread stopped between two ranges because its signal aborted (FastVerifyOptions.signal). */
export class VerifyAborted extends Error {
  constructor() {
    super("verify stopped: its signal aborted");
  }
}

/**
 * Where range jobs run: in this thread (one range after another), or in
 * this thread together with worker threads, all claiming ranges from one
 * shared counter.
 */
export interface Executor {
  readonly threads: number;
  /** Verify every task; results in task order. */
  runAll(tasks: readonly RangeTask[]): Promise<RangeResult[]>;
  /** Bytes verified so far in the current run (finished ranges and the running ones). */
  bytesDone(): number;
  close(): void;
}

/**
 * Runs every range in the calling thread, one after another (a turn of the
 * event loop between two: see fsutil/turn.ts). `knownBases`: a range's
 * base is not guessed from its first row's stored index but taken from the
 * ranges before it, which are done by then (a journal whose stored indices
 * are not the rows' positions, a foreign writer's, is then verified once,
 * not counted and then verified again). Tests turn it off to run the
 * guesses and their redo in this thread.
 */
export class InProcessExecutor implements Executor {
  readonly threads = 1;
  /** This thread's verifier; with `rowText`, one of this executor's own (no other verify's rows reach the sink). */
  private readonly verifier: RangeVerifier;
  private finished = 0;
  private current = 0;
  constructor(
    private readonly onChunk?: () => void,
    private readonly knownBases = true,
    private readonly signal?: AbortSignal,
    /** Where the verifier hands each verified row's text (RangeVerifier.rowText). */
    rowText?: RowTextSink,
  ) {
    if (rowText === undefined) this.verifier = threadVerifier();
    else {
      this.verifier = new RangeVerifier();
      this.verifier.rowText = rowText;
    }
  }

  async runAll(tasks: readonly RangeTask[]): Promise<RangeResult[]> {
    this.finished = 0;
    const results: RangeResult[] = [];
    let base = 0;
    try {
      for (const given of tasks) {
        if (results.length > 0) await nextTurn();
        if (this.signal?.aborted) throw new VerifyAborted();
        const task = this.knownBases && given.guessBase ? { ...given, baseIndex: base, guessBase: false } : given;
        const r = this.verifier.run(task, (done) => {
          this.current = done;
          this.onChunk?.();
        });
        results.push(r);
        base += r.rows;
        this.current = 0;
        this.finished += task.end - task.start;
      }
    } finally {
      this.verifier.settle();
    }
    return results;
  }

  bytesDone(): number {
    return this.finished + this.current;
  }

  close(): void {}
}

function workerSpecifier(): string {
  return workerEntry("journal/fast/worker.ts");
}

/** One run in progress: results by range, and the workers still working on it. */
interface Run {
  id: number;
  results: (RangeResult | undefined)[];
  finishedBytes: number;
  /** Workers that have not yet reported idle (or died) for this run. */
  busy: Set<number>;
  error: Error | null;
  wake: (() => void) | null;
}

/**
 * This thread plus `workers` worker threads. The workers are spawned at
 * once and not waited for: this thread starts verifying immediately, and a
 * worker joins the run whenever it has loaded (its run message waits in
 * its queue). Every thread claims the next range from a shared atomic
 * counter, so no thread ever waits for another to hand out work — in
 * particular not for this thread's event loop, which is blocked while it
 * verifies a range of its own.
 *
 * A worker that dies (not an input error, which every thread would report
 * alike) only loses the range it was on: this thread verifies whatever has
 * no result at the end.
 */
export class WorkerPool implements Executor {
  readonly threads: number;
  private readonly workers: (Worker | null)[] = [];
  private readonly progress: Float64Array;
  private readonly verifier = threadVerifier();
  private run: Run | null = null;
  private runIds = 0;
  private mainCurrent = 0;

  private constructor(
    workers: number,
    /** Called as this thread verifies (a kept pool's next verify sets its own). */
    public onChunk: (() => void) | undefined,
    /** Not a links-only pool: the workers hold the kernel's hashing module. */
    readonly hashing: boolean,
    private readonly mainLane = true,
  ) {
    this.threads = workers + (mainLane ? 1 : 0);
    this.progress = new Float64Array(new SharedArrayBuffer(8 * Math.max(1, workers)));
  }

  /**
   * Spawn `workers` workers (they load in the background; nothing is awaited); `hashing`: not a links-only run.
   * `mainLane: false`: this thread verifies no range while a worker lives, it only awaits them (a remote
   * object: a read blocked on the network in this thread would hold off SIGINT/SIGTERM).
   */
  static spawn(workers: number, onChunk?: () => void, hashing = true, o: { mainLane?: boolean } = {}): WorkerPool {
    const pool = new WorkerPool(workers, onChunk, hashing, o.mainLane ?? true);
    const spec = workerSpecifier();
    for (let i = 0; i < workers; i++) {
      let w: Worker;
      try {
        w = new Worker(spec);
      } catch {
        pool.workers.push(null);
        continue;
      }
      pool.workers.push(w);
      w.onmessage = (e: MessageEvent<FromWorker>) => pool.onMessage(i, e.data);
      w.onerror = (ev) => pool.onWorkerDied(i, ev);
      const init: ToWorker = { kind: "init", progress: pool.progress.buffer as SharedArrayBuffer, slot: i, kernel: hashing ? kernelModule() : null };
      w.postMessage(init);
    }
    return pool;
  }

  async runAll(tasks: readonly RangeTask[]): Promise<RangeResult[]> {
    const next = new SharedArrayBuffer(8);
    const counter = new Int32Array(next);
    const run: Run = { id: ++this.runIds, results: new Array(tasks.length), finishedBytes: 0, busy: new Set(), error: null, wake: null };
    this.run = run;
    const msg: RunMessage = { kind: "run", id: run.id, tasks: tasks as RangeTask[], next };
    this.progress.fill(0);
    this.workers.forEach((w, i) => {
      if (w === null) return;
      run.busy.add(i);
      w.postMessage(msg satisfies ToWorker);
    });
    try {
      // This thread's lane: claim and verify until no range is left.
      for (let mine = 0; this.mainLane || this.workers.every((w) => w === null); mine++) {
        if (mine > 0) await nextTurn();
        const k = Atomics.add(counter, 0, 1);
        if (k >= tasks.length) break;
        this.verifyHere(run, tasks, k, counter);
      }
      // Wait for the workers to finish the ranges they claimed.
      while (run.busy.size > 0 && run.error === null) {
        await new Promise<void>((resolve) => (run.wake = resolve));
      }
      if (run.error) throw run.error;
      // Ranges claimed by a worker that died: verify them here.
      for (let k = 0; k < tasks.length; k++) if (run.results[k] === undefined) this.verifyHere(run, tasks, k, null);
      return run.results as RangeResult[];
    } finally {
      this.run = null;
      this.verifier.settle();
    }
  }

  private verifyHere(run: Run, tasks: readonly RangeTask[], k: number, shared: Int32Array | null): void {
    const task = tasks[k]!;
    try {
      run.results[k] = this.verifier.run(
        task,
        (done) => {
          this.mainCurrent = done;
          this.onChunk?.();
        },
        shared,
      );
    } finally {
      this.mainCurrent = 0;
    }
    run.finishedBytes += task.end - task.start;
  }

  bytesDone(): number {
    const run = this.run;
    if (!run) return 0;
    // finishedBytes: this thread's ranges; each worker's slot: its bytes of this run.
    let sum = run.finishedBytes + this.mainCurrent;
    for (let i = 0; i < this.progress.length; i++) sum += this.progress[i]!;
    return sum;
  }

  /** Ask each worker to collect its garbage now (it does so when it is idle: between two runs). */
  collect(): void {
    for (const w of this.workers) w?.postMessage({ kind: "collect" } satisfies ToWorker);
  }

  /**
   * Let the workers go: each is unreferenced (the process may exit without
   * it) and asked to end itself once idle. terminate() would make the
   * process's exit wait for the thread to be torn down.
   */
  close(): void {
    for (const w of this.workers) {
      if (w === null) continue;
      w.unref();
      w.postMessage({ kind: "close" } satisfies ToWorker);
    }
    this.workers.length = 0;
  }

  private onMessage(i: number, msg: FromWorker): void {
    const run = this.run;
    if (!run || msg.id !== run.id) return;
    if (msg.kind === "result") {
      run.results[msg.k] = msg.result;
      return;
    }
    // "idle" or "error": this worker is done with the run.
    if (msg.kind === "error") {
      // An input error is every thread's verdict alike; anything else is
      // this worker's failure, and its range is redone in this thread.
      const err = fromWire(msg.error);
      if (err instanceof BernsteinError) run.error ??= err;
    }
    run.busy.delete(i);
    run.wake?.();
  }

  private onWorkerDied(i: number, _ev: ErrorEvent): void {
    this.workers[i]?.terminate();
    this.workers[i] = null;
    const run = this.run;
    if (!run) return;
    run.busy.delete(i);
    this.progress[i] = 0;
    run.wake?.();
  }
}
