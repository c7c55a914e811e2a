import { InputError } from "../errors/index.ts";
import { storageFlags, type StorageFlags } from "./config.ts";
import { toError, type StorageFailure } from "./errors.ts";
import { workerEntry } from "../fsutil/worker-entry.ts";

/**
 * Synchronous reads of remote objects for the synchronous readers (the
 * fast verifier's range loop, the tar and line readers): this thread posts
 * a request to the process's fetcher worker (fetch-worker.ts) and waits on
 * its own shared buffer until the answer is there. The fetcher does the
 * HTTP, with its readahead, while this thread blocks.
 *
 * The main thread spawns the fetcher (on its first remote read: the size
 * of the object, always asked before any worker reads it) and talks to it
 * by postMessage; a worker thread (the fast verifier's) says hello on a
 * BroadcastChannel, which the fetcher listens on, and asks there. A worker
 * in a process without a fetcher (none was spawned by the main thread)
 * spawns one of its own.
 */

export type ToFetcher =
  | { kind: "init"; client: string; shared: SharedArrayBuffer; flags: StorageFlags; serve: string | null }
  | { kind: "hello"; client: string; shared: SharedArrayBuffer }
  | { kind: "stat"; client: string; url: string }
  | { kind: "stats"; client: string }
  | { kind: "plan"; client: string; url: string; bounds: number[] }
  | { kind: "read"; client: string; url: string; pos: number; len: number };

/** The channel the process's fetcher serves the worker threads on. */
const CHANNEL = "bernstein.storage.fetcher";
/** How long a worker's hello waits for the process's fetcher before the worker spawns its own. */
const HELLO_WAIT_MS = 5_000;

/** Int32 slots at the start of the shared buffer. */
export const CTL = { STATE: 0, N: 1 } as const;
export const SIZE_OFFSET = 16;
export const DATA_OFFSET = 64;
/**
 * The most one read returns: what the fast verifier asks for at once (its
 * 256 KiB read area); readers that ask for more get short reads. One such
 * buffer per reading thread.
 */
const DATA_BYTES = 256 << 10;
/** The fetcher gives up on a stalled request after 30 s (one read answers as soon as any byte is there); this is only for a fetcher that died. */
const MAX_WAIT_MS = 120_000;

function fetcherSpecifier(): string {
  return workerEntry("storage/fetch-worker.ts");
}

function spawnFetcher(client: string, shared: SharedArrayBuffer, serve: string | null): Worker {
  // smol: a small heap, collected often (the fetcher holds little but passes a lot through).
  const worker = new Worker(fetcherSpecifier(), { smol: true } as WorkerOptions);
  // The fetcher never keeps the process alive: it only answers reading threads.
  worker.unref();
  worker.postMessage({ kind: "init", client, shared, flags: storageFlags(), serve } satisfies ToFetcher);
  return worker;
}

/**
 * node:worker_threads, loaded when a bridge is first made (a remote input):
 * at start-up it would cost every command its load.
 */
function workerThreads(): typeof import("node:worker_threads") {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require("node:worker_threads") as typeof import("node:worker_threads");
}

class Bridge {
  private post!: (m: ToFetcher) => void;
  private readonly client = String(workerThreads().threadId);
  private ctl!: Int32Array;
  private sizeCell!: Float64Array;
  private data!: Uint8Array;
  private readonly sizes = new Map<string, number>();

  constructor() {
    const { isMainThread } = workerThreads();
    if (!isMainThread && this.joinProcessFetcher()) return;
    const shared = this.share();
    const worker = spawnFetcher(this.client, shared, isMainThread ? CHANNEL : null);
    this.post = (m) => worker.postMessage(m);
  }

  private share(): SharedArrayBuffer {
    const shared = new SharedArrayBuffer(DATA_OFFSET + DATA_BYTES);
    this.ctl = new Int32Array(shared, 0, 4);
    this.sizeCell = new Float64Array(shared, SIZE_OFFSET, 1);
    this.data = new Uint8Array(shared, DATA_OFFSET);
    return shared;
  }

  /** A worker thread: say hello to the main thread's fetcher; false when none answers. */
  private joinProcessFetcher(): boolean {
    const shared = this.share();
    const channel = new BroadcastChannel(CHANNEL);
    (channel as unknown as { unref?: () => void }).unref?.();
    channel.postMessage({ kind: "hello", client: this.client, shared } satisfies ToFetcher);
    if (Atomics.wait(this.ctl, CTL.STATE, 0, HELLO_WAIT_MS) === "timed-out" && Atomics.load(this.ctl, CTL.STATE) === 0) {
      channel.close();
      return false;
    }
    this.post = (m) => channel.postMessage(m);
    return true;
  }

  private call(msg: ToFetcher): number {
    Atomics.store(this.ctl, CTL.STATE, 0);
    this.post(msg);
    const until = Date.now() + MAX_WAIT_MS;
    while (Atomics.load(this.ctl, CTL.STATE) === 0) {
      if (Date.now() > until) throw fetcherSilent(msg);
      Atomics.wait(this.ctl, CTL.STATE, 0, 1000);
    }
    return this.answer();
  }

  /**
   * As call, without blocking this thread: the main thread's event loop
   * keeps running while the fetcher works (its SIGINT/SIGTERM handler can
   * run; a blocked main thread never sees a signal). One request at a time,
   * as call: the caller awaits each.
   */
  private async callAsync(msg: ToFetcher): Promise<number> {
    Atomics.store(this.ctl, CTL.STATE, 0);
    this.post(msg);
    const until = Date.now() + MAX_WAIT_MS;
    // A pending Atomics.waitAsync does not keep the process alive (and the
    // fetcher is unref'd): without this timer the process would exit 0
    // mid-read, its work unfinished.
    const alive = setInterval(() => undefined, 60_000);
    try {
      while (Atomics.load(this.ctl, CTL.STATE) === 0) {
        if (Date.now() > until) throw fetcherSilent(msg);
        const w = waitAsync(this.ctl, CTL.STATE, 0, 1000);
        if (w.async) await w.value;
      }
    } finally {
      clearInterval(alive);
    }
    return this.answer();
  }

  /** The answer in the shared buffer: its byte count, or the fetcher's failure thrown. */
  private answer(): number {
    const n = this.ctl[CTL.N]!;
    if (Atomics.load(this.ctl, CTL.STATE) === 2) {
      const failure = JSON.parse(new TextDecoder().decode(this.data.subarray(0, n))) as StorageFailure;
      throw toError(failure);
    }
    return n;
  }

  size(url: string): number {
    const known = this.sizes.get(url);
    if (known !== undefined) return known;
    this.call({ kind: "stat", client: this.client, url });
    const size = this.sizeCell[0]!;
    this.sizes.set(url, size);
    return size;
  }

  async sizeAsync(url: string): Promise<number> {
    const known = this.sizes.get(url);
    if (known !== undefined) return known;
    await this.callAsync({ kind: "stat", client: this.client, url });
    const size = this.sizeCell[0]!;
    this.sizes.set(url, size);
    return size;
  }

  /** Ranged GETs so far and the most in flight at once (diagnostics). */
  stats(): { gets: number; max_in_flight: number } {
    const n = this.call({ kind: "stats", client: this.client });
    return JSON.parse(new TextDecoder().decode(this.data.subarray(0, n)));
  }

  /** The reader's range boundaries of `url` ([0, b1, …, end]): reads at a boundary then ask for that whole range. */
  plan(url: string, bounds: readonly number[]): void {
    this.call({ kind: "plan", client: this.client, url, bounds: [...bounds] });
  }

  read(url: string, buf: Uint8Array, off: number, len: number, pos: number): number {
    const n = this.call({ kind: "read", client: this.client, url, pos, len: Math.min(len, DATA_BYTES) });
    buf.set(this.data.subarray(0, n), off);
    return n;
  }

  async readAsync(url: string, buf: Uint8Array, off: number, len: number, pos: number): Promise<number> {
    const n = await this.callAsync({ kind: "read", client: this.client, url, pos, len: Math.min(len, DATA_BYTES) });
    buf.set(this.data.subarray(0, n), off);
    return n;
  }
}

function fetcherSilent(msg: ToFetcher): InputError {
  return new InputError("s3_unreachable", "storage fetcher did not answer", { url: "url" in msg ? msg.url : "" });
}

/** Atomics.waitAsync (ES2024; not in this lib's typings yet). */
const waitAsync = (Atomics as unknown as {
  waitAsync(a: Int32Array, i: number, v: number, ms: number): { async: false; value: string } | { async: true; value: Promise<string> };
}).waitAsync;

let bridge: Bridge | null = null;

/** This thread's bridge (its fetcher is spawned on first use). */
export function threadBridge(): Bridge {
  return (bridge ??= new Bridge());
}

/** This thread's fetch statistics, or null when it read nothing remote. */
export function fetchStats(): { gets: number; max_in_flight: number } | null {
  return bridge ? bridge.stats() : null;
}
