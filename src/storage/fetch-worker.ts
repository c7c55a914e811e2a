/**
 * The storage fetcher: a worker thread that does the network I/O of remote
 * inputs for one reading thread, which waits on a shared buffer for each
 * answer (bridge.ts). The readers (the fast verifier, the receipt and
 * journal readers) are synchronous: this thread is where their bytes come
 * from while they block.
 *
 * An object is read sequentially through ranged GETs of SEGMENT bytes,
 * up to IN_FLIGHT at once ahead of the reader, each buffering at most
 * SEGMENT_BUFFER bytes before it stops pulling (the rest waits in the
 * socket): memory stays bounded whatever the object's size. A read away
 * from where the last one ended (a probe for a line start) drops the
 * readahead and starts again there, with one GET until reads run on.
 *
 * Listed in scripts/worker-entrypoints.txt so the compiled binary embeds it.
 */
import { StorageFailureError, RemoteObject } from "./client.ts";
import type { StorageFlags } from "./config.ts";
import { failureOf, storageFailure } from "./errors.ts";
import { parseRemote } from "./ref.ts";
import type { ToFetcher } from "./bridge.ts";
import { CTL, DATA_OFFSET, SIZE_OFFSET } from "./bridge.ts";

declare const self: Worker;

/** BERNSTEIN_S3_RANGE_BYTES: a tuning knob (the tests set small ranges to get many GETs from a small object). */
const SEGMENT = rangeBytes(process.env.BERNSTEIN_S3_RANGE_BYTES) ?? 8 << 20;
const IN_FLIGHT = 3;
const SEGMENT_BUFFER = 1 << 20;
/**
 * Bun's HTTP client hands each body chunk over in a fresh buffer that is
 * freed only by a collection: a full one every 16 MiB keeps a 221 MB
 * object's stream from holding some 15 MB more (measured; see README).
 */
const COLLECT_EVERY = 16 << 20;
let sinceCollect = 0;
/** For BERNSTEIN_VERIFY_STATS: ranged GETs started, and the most running at once. */
const stats = { gets: 0, running: 0, max_in_flight: 0 };

function rangeBytes(raw: string | undefined): number | undefined {
  if (raw === undefined || !/^[0-9]+$/.test(raw.trim()) || Number(raw) < 1) return undefined;
  return Number(raw);
}
/** No byte and no answer for this long: the endpoint is taken for unreachable. */
const STALL_MS = 30_000;

let ctl: Int32Array;
let sizeCell: Float64Array;
let data: Uint8Array;
let flags: StorageFlags = {};
const sessions = new Map<string, Session>();

function stalled<T>(p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${STALL_MS / 1000} s`), { code: "Timeout" })), STALL_MS);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

class Segment {
  private chunks: Uint8Array[] = [];
  private head = 0;
  private buffered = 0;
  private done = false;
  private error: unknown = null;
  private cancelled = false;
  private wake: (() => void) | null = null;
  private room: (() => void) | null = null;
  private reader: { cancel(): Promise<void> } | null = null;

  constructor(
    private readonly obj: RemoteObject,
    readonly start: number,
    readonly end: number,
  ) {
    void this.pump();
  }

  private signal(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  private async pump(): Promise<void> {
    let got = 0;
    stats.gets++;
    stats.max_in_flight = Math.max(stats.max_in_flight, ++stats.running);
    try {
      const stream = await stalled(this.obj.range(this.start, this.end));
      const reader = stream.getReader();
      this.reader = reader;
      for (;;) {
        while (this.buffered >= SEGMENT_BUFFER && !this.cancelled) await new Promise<void>((r) => (this.room = r));
        if (this.cancelled) return;
        const { done, value } = await stalled(reader.read());
        if (done) break;
        got += value.length;
        this.chunks.push(value);
        this.buffered += value.length;
        this.signal();
      }
      if (got !== this.end - this.start) {
        throw new StorageFailureError(
          storageFailure("request_failed", this.obj.ref, this.obj.endpoint, `bytes ${this.start}-${this.end - 1}: got ${got} bytes (the object changed or the body was cut)`),
        );
      }
    } catch (err) {
      if (!this.cancelled) this.error = err;
    } finally {
      stats.running--;
      this.done = true;
      this.signal();
    }
  }

  /** Copy up to `max` bytes into `into` once any are here; 0 at the segment's end. */
  async take(into: Uint8Array, max: number): Promise<number> {
    while (this.buffered === 0 && !this.done) await new Promise<void>((r) => (this.wake = r));
    if (this.buffered === 0) {
      if (this.error) throw this.obj.fail(this.error);
      return 0;
    }
    let n = 0;
    while (n < max && this.chunks.length > 0) {
      const c = this.chunks[0]!;
      const k = Math.min(max - n, c.length - this.head);
      into.set(c.subarray(this.head, this.head + k), n);
      n += k;
      this.head += k;
      if (this.head === c.length) {
        this.chunks.shift();
        this.head = 0;
      }
    }
    this.buffered -= n;
    sinceCollect += n;
    if (sinceCollect >= COLLECT_EVERY) {
      sinceCollect = 0;
      Bun.gc(true);
    }
    const r = this.room;
    this.room = null;
    r?.();
    return n;
  }

  cancel(): void {
    this.cancelled = true;
    this.chunks = [];
    this.buffered = 0;
    const r = this.room;
    this.room = null;
    r?.();
    this.reader?.cancel().catch(() => undefined);
  }
}

class Session {
  private total: number | null = null;
  private cursor = -1;
  private segments: Segment[] = [];
  private sequential = false;
  readonly obj: RemoteObject;

  constructor(url: string) {
    this.obj = new RemoteObject(parseRemote(url), flags);
  }

  async size(): Promise<number> {
    if (this.total === null) this.total = await stalled(this.obj.size());
    return this.total;
  }

  async read(pos: number, len: number): Promise<number> {
    const total = await this.size();
    if (pos >= total || len <= 0) return 0;
    if (pos !== this.cursor || this.segments.length === 0) {
      for (const s of this.segments) s.cancel();
      this.segments = [];
      this.cursor = pos;
      this.sequential = false;
    } else {
      this.sequential = true;
    }
    this.fill(total);
    const seg = this.segments[0]!;
    const n = await seg.take(data, Math.min(len, data.length));
    if (n === 0) throw this.obj.fail(new Error(`no bytes at offset ${pos}`));
    this.cursor += n;
    if (this.cursor >= seg.end) {
      this.segments.shift();
      this.fill(total);
    }
    return n;
  }

  /** Keep the GETs ahead of the cursor going (one until reads are sequential). */
  private fill(total: number): void {
    const want = this.sequential ? IN_FLIGHT : 1;
    let next = this.segments.length > 0 ? this.segments[this.segments.length - 1]!.end : this.cursor;
    while (this.segments.length < want && next < total) {
      const end = Math.min(total, next + SEGMENT);
      this.segments.push(new Segment(this.obj, next, end));
      next = end;
    }
  }
}

function answer(state: number, n: number): void {
  ctl[CTL.N] = n;
  Atomics.store(ctl, CTL.STATE, state);
  Atomics.notify(ctl, CTL.STATE);
}

async function handle(m: ToFetcher): Promise<void> {
  if (m.kind === "init") return;
  if (m.kind === "stats") {
    const bytes = new TextEncoder().encode(JSON.stringify({ gets: stats.gets, max_in_flight: stats.max_in_flight }));
    data.set(bytes);
    answer(1, bytes.length);
    return;
  }
  let session: Session | undefined;
  try {
    session = sessions.get(m.url);
    if (!session) {
      session = new Session(m.url);
      sessions.set(m.url, session);
    }
    if (m.kind === "stat") {
      sizeCell[0] = await session.size();
      answer(1, 0);
    } else {
      answer(1, await session.read(m.pos, m.len));
    }
  } catch (err) {
    const f = err instanceof StorageFailureError ? err.failure : session ? session.obj.fail(err).failure : failureOf(err, parseRemote(m.url), null);
    // A failed size is not cached: the next request asks again.
    if (m.kind === "stat") sessions.delete(m.url);
    const bytes = new TextEncoder().encode(JSON.stringify(f));
    data.set(bytes.subarray(0, data.length));
    answer(2, Math.min(bytes.length, data.length));
  }
}

let queue: Promise<void> = Promise.resolve();

self.onmessage = (e: MessageEvent<ToFetcher>) => {
  const m = e.data;
  if (m.kind === "init") {
    ctl = new Int32Array(m.shared, 0, 4);
    sizeCell = new Float64Array(m.shared, SIZE_OFFSET, 1);
    data = new Uint8Array(m.shared, DATA_OFFSET);
    flags = m.flags;
    return;
  }
  // One request at a time: the reading thread waits for each answer anyway.
  queue = queue.then(() => handle(m));
};
