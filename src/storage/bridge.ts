import { InputError } from "../errors.ts";
import { storageFlags, type StorageFlags } from "./config.ts";
import { toError, type StorageFailure } from "./errors.ts";

/**
 * Synchronous reads of remote objects for the synchronous readers (the
 * fast verifier's range loop, the tar and line readers): this thread posts
 * a request to its own fetcher worker (fetch-worker.ts) and waits on a
 * shared buffer until the answer is there. The fetcher does the HTTP, with
 * its readahead, while this thread blocks.
 */

export type ToFetcher =
  | { kind: "init"; shared: SharedArrayBuffer; flags: StorageFlags }
  | { kind: "stat"; url: string }
  | { kind: "stats"; url: string }
  | { kind: "read"; url: string; pos: number; len: number };

/** Int32 slots at the start of the shared buffer. */
export const CTL = { STATE: 0, N: 1 } as const;
export const SIZE_OFFSET = 16;
export const DATA_OFFSET = 64;
/** The most one read returns: more than any reader asks for at once. */
const DATA_BYTES = 1 << 20;
/** The fetcher gives up on a stalled request after 30 s; this is only for a fetcher that died. */
const MAX_WAIT_MS = 120_000;

function fetcherSpecifier(): string {
  const here = import.meta.url;
  if (here.startsWith("file:///$bunfs/") || here.startsWith("file:///B:/~BUN/")) {
    // Compiled: entry points are embedded relative to their common root (src/).
    return `${import.meta.dir}/storage/fetch-worker.ts`;
  }
  return new URL("./fetch-worker.ts", here).href;
}

class Bridge {
  private readonly worker: Worker;
  private readonly ctl: Int32Array;
  private readonly sizeCell: Float64Array;
  private readonly data: Uint8Array;
  private readonly sizes = new Map<string, number>();

  constructor() {
    const shared = new SharedArrayBuffer(DATA_OFFSET + DATA_BYTES);
    this.ctl = new Int32Array(shared, 0, 4);
    this.sizeCell = new Float64Array(shared, SIZE_OFFSET, 1);
    this.data = new Uint8Array(shared, DATA_OFFSET);
    // smol: a small heap, collected often (the fetcher holds little but passes a lot through).
    this.worker = new Worker(fetcherSpecifier(), { smol: true } as WorkerOptions);
    // The fetcher never keeps the process alive: it only answers this thread.
    this.worker.unref();
    this.worker.postMessage({ kind: "init", shared, flags: storageFlags() } satisfies ToFetcher);
  }

  private call(msg: ToFetcher): number {
    Atomics.store(this.ctl, CTL.STATE, 0);
    this.worker.postMessage(msg);
    const until = Date.now() + MAX_WAIT_MS;
    while (Atomics.load(this.ctl, CTL.STATE) === 0) {
      if (Date.now() > until) throw new InputError("s3_unreachable", "storage fetcher did not answer", { url: "url" in msg ? msg.url : "" });
      Atomics.wait(this.ctl, CTL.STATE, 0, 1000);
    }
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
    this.call({ kind: "stat", url });
    const size = this.sizeCell[0]!;
    this.sizes.set(url, size);
    return size;
  }

  /** Ranged GETs so far and the most in flight at once (diagnostics). */
  stats(): { gets: number; max_in_flight: number } {
    const n = this.call({ kind: "stats", url: "" });
    return JSON.parse(new TextDecoder().decode(this.data.subarray(0, n)));
  }

  read(url: string, buf: Uint8Array, off: number, len: number, pos: number): number {
    const n = this.call({ kind: "read", url, pos, len: Math.min(len, DATA_BYTES) });
    buf.set(this.data.subarray(0, n), off);
    return n;
  }
}

let bridge: Bridge | null = null;

/** This thread's bridge (its fetcher is spawned on first use). */
export function threadBridge(): Bridge {
  return (bridge ??= new Bridge());
}

/** This thread's fetch statistics, or null when it read nothing remote. */
export function fetchStats(): { gets: number; max_in_flight: number } | null {
  return bridge ? bridge.stats() : null;
}
