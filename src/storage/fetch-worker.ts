/**
 * The storage fetcher: one worker thread per process that does the network
 * I/O of remote inputs for every reading thread (the main thread and the
 * fast verifier's workers), each of which waits on its own shared buffer
 * for each answer (bridge.ts). The readers are synchronous: this thread is
 * where their bytes come from while they block. One fetcher, not one per
 * reading thread: each Bun worker costs megabytes of its own, which the
 * 64 MB bound of a remote verify has no room for.
 *
 * Each reader reads its object sequentially through ranged GETs. When the
 * verifier has said how it split the object (a plan: its range
 * boundaries), a read at a range's start asks for that range, in GETs of
 * at most SEGMENT bytes with READAHEAD more in flight, never past the
 * range's end (the next range is another thread's). Without a plan a read
 * away from where the last one ended (a probe for a line start) asks for
 * PROBE bytes only, and full segments once reads run on. Each GET buffers
 * at most SEGMENT_BUFFER bytes here before it stops pulling (the rest waits
 * in the socket): memory stays bounded whatever the object's size.
 *
 * Listed in scripts/worker-entrypoints.txt so the compiled binary embeds it.
 */
import type { BodyReader } from "./http1.ts";
import { StorageFailureError, RemoteObject } from "./client.ts";
import { deadlineFor, readLimits, type ReadLimits, type StorageFlags } from "./config.ts";
import { failureOf, storageFailure } from "./errors.ts";
import { parseRemote } from "./ref.ts";
import type { ToFetcher } from "./bridge.ts";
import { CTL, DATA_OFFSET, SIZE_OFFSET } from "./bridge.ts";

declare const self: Worker;

/** BERNSTEIN_S3_RANGE_BYTES: a tuning knob (the tests set small ranges to get many GETs from a small object). */
const SEGMENT = rangeBytes(process.env.BERNSTEIN_S3_RANGE_BYTES) ?? 16 << 20;
/** GETs in flight ahead of the one a reader is on, inside its planned range. */
const READAHEAD = 1;
/** A read that is not (yet) sequential asks for this much: a probe reads one 64 KiB window. */
const PROBE = 64 << 10;
const SEGMENT_BUFFER = 256 << 10;
/**
 * Every chunk a socket or stream hands over is a fresh buffer, freed only
 * by a collection: a full one (cheap in this thread's small heap) every
 * 512 KiB passed through keeps them from piling up: a remote verify with
 * two threads stays within the 64 MB bound, which
 * collecting every few MiB does not, and collecting more often gains
 * nothing more (docs/scale-out.md has the measurement).
 */
const COLLECT_EVERY = 512 << 10;
let sinceCollect = 0;
/** For BERNSTEIN_VERIFY_STATS: ranged GETs started, and the most running at once (all readers). */
const stats = { gets: 0, running: 0, max_in_flight: 0 };

function rangeBytes(raw: string | undefined): number | undefined {
  if (raw === undefined || !/^[0-9]+$/.test(raw.trim()) || Number(raw) < 1) return undefined;
  return Number(raw);
}
/** No byte and no answer for this long: the endpoint is taken for unreachable. */
const STALL_MS = 30_000;

let flags: StorageFlags = {};
/** The whole-object deadline and the minimum rate (config.ts), from the flags the process was given. */
let limits: ReadLimits = readLimits({});

/**
 * `p`, unless it takes too long: no answer for STALL_MS (s3_unreachable),
 * the object's deadline passing (s3_timeout), or `slow()` finding the
 * transfer under the minimum rate while it waits (s3_timeout).
 */
function guarded<T>(entry: RemoteEntry, p: Promise<T>, slow?: () => StorageFailureError | null): Promise<T> {
  const timers: ReturnType<typeof setTimeout>[] = [];
  const timeout = new Promise<never>((_, reject) => {
    timers.push(setTimeout(() => reject(Object.assign(new Error(`no answer within ${STALL_MS / 1000} s`), { code: "Timeout" })), STALL_MS));
    const left = entry.deadlineLeftMs();
    if (Number.isFinite(left)) timers.push(setTimeout(() => reject(entry.pastDeadline()), Math.max(0, left)));
    if (slow && limits.minRate > 0) {
      const every = Math.min(1000, Math.max(100, (limits.windowS * 1000) / 8));
      timers.push(
        setInterval(() => {
          const e = slow();
          if (e) reject(e);
        }, every),
      );
    }
  });
  return Promise.race([p, timeout]).finally(() => timers.forEach((t) => clearTimeout(t)));
}

/**
 * One ranged GET's transfer: how long it waited on the network and what it
 * got for it. The rate is judged over the last `windowS` seconds of waiting
 * (time with the socket paused, the reader busy verifying, is not counted);
 * a window with no byte at all is a stall (s3_unreachable after 30 s), not
 * a slow transfer.
 */
class RateMeter {
  /** [ms waited, bytes got], oldest first, trimmed to a little over the window. */
  private samples: [number, number][] = [];
  private waitingSince: number | null = null;

  waiting(): void {
    this.waitingSince = performance.now();
  }

  got(bytes: number): void {
    const now = performance.now();
    this.samples.push([now - (this.waitingSince ?? now), bytes]);
    this.waitingSince = null;
    let total = 0;
    for (let i = this.samples.length - 1; i >= 0; i--) {
      total += this.samples[i]![0];
      if (total > limits.windowS * 2000) {
        this.samples = this.samples.slice(i);
        break;
      }
    }
  }

  /** [bytes, seconds] over the last window of waiting, or null while less than a window was waited. */
  window(): [number, number] | null {
    const windowMs = limits.windowS * 1000;
    let waited = this.waitingSince === null ? 0 : performance.now() - this.waitingSince;
    let bytes = 0;
    for (let i = this.samples.length - 1; i >= 0 && waited < windowMs; i--) {
      waited += this.samples[i]![0];
      bytes += this.samples[i]![1];
    }
    return waited < windowMs ? null : [bytes, waited / 1000];
  }
}

/** An object as every reader of this process sees it: its size (asked once) and the verifier's plan. */
class RemoteEntry {
  readonly obj: RemoteObject;
  private total: Promise<number> | null = null;
  /** Range boundaries [0, b1, …, end], ascending, or null. */
  plan: number[] | null = null;
  /** When the object was first asked for (its deadline runs from there), its size once known, bytes received. */
  private startedAt: number | null = null;
  private knownSize: number | null = null;
  received = 0;

  constructor(url: string) {
    this.obj = new RemoteObject(parseRemote(url), flags);
  }

  deadlineLeftMs(): number {
    this.startedAt ??= performance.now();
    return this.startedAt + deadlineFor(limits, this.knownSize) * 1000 - performance.now();
  }

  pastDeadline(): StorageFailureError {
    const deadline = deadlineFor(limits, this.knownSize);
    const elapsed = (performance.now() - (this.startedAt ?? performance.now())) / 1000;
    const of = this.knownSize === null ? "before its size was known" : `${this.received} of ${this.knownSize} bytes received`;
    const how = limits.deadlineS === null ? "the default, 600 s + 4 s per MiB; --s3-deadline" : "--s3-deadline";
    return new StorageFailureError(
      storageFailure("timeout", this.obj.ref, this.obj.endpoint, `missed the whole-object deadline of ${deadline.toFixed(1)} s (${how}): ${of} after ${elapsed.toFixed(1)} s`, {
        timeout: "deadline",
        deadline_s: round1(deadline),
        elapsed_s: round1(elapsed),
        bytes_received: this.received,
        object_bytes: this.knownSize,
      }),
    );
  }

  /** s3_timeout when `meter`'s last window of waiting on bytes [start, end) came in under the minimum rate. */
  tooSlow(meter: RateMeter, start: number, end: number): StorageFailureError | null {
    if (!(limits.minRate > 0)) return null;
    const w = meter.window();
    if (w === null) return null;
    const [bytes, seconds] = w;
    if (bytes === 0 || bytes >= limits.minRate * seconds) return null;
    const rate = bytes / seconds;
    return new StorageFailureError(
      storageFailure(
        "timeout",
        this.obj.ref,
        this.obj.endpoint,
        `bytes ${start}-${end - 1} came at ${rate.toFixed(1)} B/s (${bytes} bytes in the last ${seconds.toFixed(1)} s of waiting), under the minimum rate of ${limits.minRate} B/s over ${limits.windowS} s (--s3-min-rate)`,
        {
          timeout: "min_rate",
          rate_bytes_per_s: round1(rate),
          min_rate_bytes_per_s: limits.minRate,
          window_s: limits.windowS,
          bytes_received: this.received,
          object_bytes: this.knownSize,
        },
      ),
    );
  }

  size(): Promise<number> {
    this.deadlineLeftMs();
    this.total ??= guarded(this, this.obj.size()).then(
      (n) => {
        this.knownSize = n;
        return n;
      },
      (err) => {
        // A failed size is not kept: the next request asks again.
        this.total = null;
        throw err;
      },
    );
    return this.total;
  }

  /** The end of the planned range holding `pos`, or null without a plan. */
  rangeEnd(pos: number): number | null {
    if (!this.plan) return null;
    for (const b of this.plan) if (b > pos) return b;
    return null;
  }

  startsRange(pos: number): boolean {
    return this.plan !== null && this.plan.includes(pos);
  }
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

const entries = new Map<string, RemoteEntry>();

function entryOf(url: string): RemoteEntry {
  let e = entries.get(url);
  if (!e) {
    e = new RemoteEntry(url);
    entries.set(url, e);
  }
  return e;
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
  private reader: BodyReader | null = null;

  constructor(
    private readonly entry: RemoteEntry,
    readonly start: number,
    readonly end: number,
  ) {
    void this.pump();
  }

  private get obj(): RemoteObject {
    return this.entry.obj;
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
    const meter = new RateMeter();
    const slow = () => this.entry.tooSlow(meter, this.start, this.end);
    try {
      meter.waiting();
      const reader = await guarded(this.entry, this.obj.reader(this.start, this.end), slow);
      this.reader = reader;
      if (this.cancelled) return void (await reader.cancel());
      for (;;) {
        while (this.buffered >= SEGMENT_BUFFER && !this.cancelled) await new Promise<void>((r) => (this.room = r));
        if (this.cancelled) return;
        meter.waiting();
        const { done, value } = await guarded(this.entry, reader.read(), slow);
        if (done) break;
        meter.got(value.length);
        this.entry.received += value.length;
        const tooSlow = slow();
        if (tooSlow) throw tooSlow;
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
      // A GET given up on (too slow, stalled) lets go of its connection.
      this.reader?.cancel().catch(() => undefined);
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

/** One reader's position in one object, and the GETs ahead of it. */
class Session {
  private cursor = -1;
  private segments: Segment[] = [];
  private sequential = false;

  constructor(readonly entry: RemoteEntry) {}

  async read(into: Uint8Array, pos: number, len: number): Promise<number> {
    const total = await this.entry.size();
    if (pos >= total || len <= 0) return 0;
    if (pos !== this.cursor || this.segments.length === 0) {
      for (const s of this.segments) s.cancel();
      this.segments = [];
      // A planned range's start: the verifier reads that range to its end.
      this.sequential = this.cursor === pos || this.entry.startsRange(pos);
      this.cursor = pos;
    } else {
      this.sequential = true;
    }
    this.fill(total, len);
    const seg = this.segments[0]!;
    const n = await seg.take(into, Math.min(len, into.length));
    if (n === 0) throw this.entry.obj.fail(new Error(`no bytes at offset ${pos}`));
    this.cursor += n;
    if (this.cursor >= seg.end) {
      this.segments.shift();
      // After a probe, or at a planned range's end (the reader goes on to whichever range it claims next), nothing is fetched ahead.
      if (this.sequential && !this.entry.startsRange(this.cursor)) this.fill(total, len);
    }
    return n;
  }

  /** Keep the GETs ahead of the cursor going (one, PROBE bytes long, until reads are sequential). */
  private fill(total: number, len: number): void {
    const want = this.sequential ? 1 + READAHEAD : 1;
    const limit = this.entry.rangeEnd(this.cursor) ?? total;
    let next = this.segments.length > 0 ? this.segments[this.segments.length - 1]!.end : this.cursor;
    while (this.segments.length < want && next < limit) {
      const end = Math.min(limit, next + (this.sequential ? SEGMENT : Math.max(PROBE, len)));
      this.segments.push(new Segment(this.entry, next, end));
      next = end;
    }
  }
}

/** A reading thread: its shared buffer, its sessions, and its requests in order. */
class Client {
  readonly ctl: Int32Array;
  readonly sizeCell: Float64Array;
  readonly data: Uint8Array;
  readonly sessions = new Map<string, Session>();
  queue: Promise<void> = Promise.resolve();

  constructor(shared: SharedArrayBuffer) {
    this.ctl = new Int32Array(shared, 0, 4);
    this.sizeCell = new Float64Array(shared, SIZE_OFFSET, 1);
    this.data = new Uint8Array(shared, DATA_OFFSET);
  }

  answer(state: number, n: number): void {
    this.ctl[CTL.N] = n;
    Atomics.store(this.ctl, CTL.STATE, state);
    Atomics.notify(this.ctl, CTL.STATE);
  }

  reply(state: number, doc: unknown): void {
    const bytes = new TextEncoder().encode(JSON.stringify(doc));
    this.data.set(bytes.subarray(0, this.data.length));
    this.answer(state, Math.min(bytes.length, this.data.length));
  }

  session(url: string): Session {
    let s = this.sessions.get(url);
    if (!s) {
      s = new Session(entryOf(url));
      this.sessions.set(url, s);
    }
    return s;
  }
}

const clients = new Map<string, Client>();

async function handle(c: Client, m: ToFetcher): Promise<void> {
  if (m.kind === "stats") return c.reply(1, { gets: stats.gets, max_in_flight: stats.max_in_flight });
  if (m.kind === "init" || m.kind === "hello") return;
  try {
    if (m.kind === "plan") {
      entryOf(m.url).plan = [...m.bounds];
      c.answer(1, 0);
    } else if (m.kind === "stat") {
      c.sizeCell[0] = await entryOf(m.url).size();
      c.answer(1, 0);
    } else {
      c.answer(1, await c.session(m.url).read(c.data, m.pos, m.len));
    }
  } catch (err) {
    const url = m.url;
    const f = err instanceof StorageFailureError ? err.failure : entries.has(url) ? entries.get(url)!.obj.fail(err).failure : failureOf(err, parseRemote(url), null);
    c.reply(2, f);
  }
}

function onRequest(m: ToFetcher): void {
  if (m.kind === "init" || m.kind === "hello") {
    if (m.kind === "init") {
      flags = m.flags;
      limits = readLimits(flags);
    }
    const c = new Client(m.shared);
    clients.set(m.client, c);
    // A hello is answered: the reader now knows this fetcher serves it.
    if (m.kind === "hello") c.answer(1, 0);
    return;
  }
  const c = clients.get(m.client);
  if (!c) return;
  // One request at a time per reader (it waits for each answer anyway); readers are served side by side.
  c.queue = c.queue.then(() => handle(c, m));
}

self.onmessage = (e: MessageEvent<ToFetcher>) => {
  const m = e.data;
  if (m.kind === "init" && m.serve !== null) {
    // The process's fetcher: the other threads' readers reach it on this channel.
    const channel = new BroadcastChannel(m.serve);
    channel.addEventListener("message", (ev) => onRequest((ev as MessageEvent<ToFetcher>).data));
    (channel as unknown as { unref?: () => void }).unref?.();
  }
  onRequest(m);
};
