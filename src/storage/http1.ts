import type { Socket } from "bun";

/**
 * A minimal HTTP/1.1 client for the ranged reads of plain-http endpoints
 * (a local or in-cluster S3, a public http URL), over Bun.connect.
 *
 * Why not fetch or Bun.s3: both buffer a response body ahead of its
 * reader, so a remote verify of a large journal through either goes over
 * the 64 MB bound (docs/scale-out.md has the measurement). Here a response body
 * is taken from the socket only as fast as the reader takes it: past
 * HIGH_WATER bytes queued the socket is paused, and the rest waits in the
 * kernel's socket buffers, which are not this process's memory.
 *
 * What it does not do, on purpose: TLS (https:// goes through fetch and
 * Bun.s3), pipelining, chunked 2xx bodies (an object's GET always has a
 * Content-Length; a chunked one is refused, never guessed at).
 */

const HIGH_WATER = 128 << 10;
/** Error answers are read up to this much (their S3 error code is in the first bytes). */
const ERROR_BODY_MAX = 4 << 10;

export type ReadResult = { done: true; value?: undefined } | { done: false; value: Uint8Array };

export interface BodyReader {
  read(): Promise<ReadResult>;
  cancel(): Promise<void>;
}

export interface RawResponse {
  status: number;
  headers: Map<string, string>;
  body: BodyReader;
}

interface Origin {
  hostname: string;
  port: number;
  key: string;
}

function originOf(url: URL): Origin {
  const port = Number(url.port || 80);
  return { hostname: url.hostname.replace(/^\[|\]$/g, ""), port, key: `${url.hostname}:${port}` };
}

const idle = new Map<string, Conn[]>();

class Conn {
  socket!: Socket<undefined>;
  closed = false;
  /** The response being read on this connection. */
  current: Exchange | null = null;

  static async open(o: Origin): Promise<Conn> {
    const conn = new Conn();
    conn.socket = await Bun.connect({
      hostname: o.hostname,
      port: o.port,
      socket: {
        data: (_s, d) => conn.current?.onData(d),
        close: () => conn.lost(null),
        end: () => conn.lost(null),
        error: (_s, err) => conn.lost(err),
      },
    });
    return conn;
  }

  private lost(err: Error | null): void {
    if (this.closed) return;
    this.closed = true;
    this.current?.onLost(err);
  }

  destroy(): void {
    this.closed = true;
    this.current = null;
    try {
      this.socket.terminate();
    } catch {
      // already gone
    }
  }
}

function release(o: Origin, conn: Conn): void {
  conn.current = null;
  if (conn.closed) return;
  // An idle connection never keeps the process alive.
  conn.socket.unref();
  const list = idle.get(o.key) ?? [];
  list.push(conn);
  idle.set(o.key, list);
}

function takeIdle(o: Origin): Conn | null {
  const list = idle.get(o.key);
  while (list && list.length > 0) {
    const c = list.pop()!;
    if (c.closed) continue;
    c.socket.ref();
    return c;
  }
  return null;
}

/** Bytes [skip, skip + cap) of a body that ignored Range (a 200 for a ranged GET). */
interface Window {
  skip: number;
  cap: number;
}

/** One request and its response on a connection. */
class Exchange implements BodyReader {
  private head: Uint8Array[] = [];
  private headBytes = 0;
  private bodyLeft = -1;
  private window: Window | null = null;
  private queue: Uint8Array[] = [];
  private queued = 0;
  private paused = false;
  private ended = false;
  private error: Error | null = null;
  private wake: (() => void) | null = null;
  private onHead: ((r: RawResponse) => void) | null = null;
  private onFail: ((e: Error) => void) | null = null;
  /** Any byte of the answer arrived (a reused connection closed before that is retried). */
  gotBytes = false;

  constructor(
    private readonly conn: Conn,
    private readonly origin: Origin,
    private readonly method: string,
    private readonly range: { start: number; end: number } | null,
  ) {}

  start(request: string): Promise<RawResponse> {
    return new Promise<RawResponse>((resolve, reject) => {
      this.onHead = resolve;
      this.onFail = reject;
      this.conn.current = this;
      this.conn.socket.write(request);
    });
  }

  onData(d: Uint8Array): void {
    this.gotBytes = true;
    if (this.bodyLeft < 0) {
      this.head.push(d);
      this.headBytes += d.length;
      const all = this.head.length === 1 ? d : Buffer.concat(this.head);
      const end = Buffer.from(all.buffer, all.byteOffset, all.length).indexOf("\r\n\r\n");
      if (end < 0) {
        if (this.headBytes > 64 << 10) this.fail(new Error("response headers longer than 64 KiB"));
        return;
      }
      this.head = [];
      this.parseHead(new TextDecoder("latin1").decode(all.subarray(0, end)));
      if (this.onHead === null) return;
      const rest = all.subarray(end + 4);
      const resolve = this.onHead;
      this.onHead = null;
      this.onFail = null;
      resolve({ status: this.status, headers: this.headers, body: this });
      if (rest.length > 0) this.onBody(rest);
      else if (this.bodyLeft === 0) this.finish();
      return;
    }
    this.onBody(d);
  }

  status = 0;
  headers = new Map<string, string>();

  private parseHead(text: string): void {
    const lines = text.split("\r\n");
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? "");
    if (!m) return this.fail(new Error(`not an HTTP/1.1 answer: ${JSON.stringify((lines[0] ?? "").slice(0, 80))}`));
    this.status = Number(m[1]);
    for (const line of lines.slice(1)) {
      const i = line.indexOf(":");
      if (i > 0) this.headers.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
    }
    const len = this.headers.get("content-length");
    const ok = this.status >= 200 && this.status < 300;
    if (this.method === "HEAD" || this.status === 204 || this.status === 304) this.bodyLeft = 0;
    else if (len !== undefined && /^\d+$/.test(len)) this.bodyLeft = Number(len);
    else if (ok) return this.fail(new Error(`HTTP ${this.status} without a Content-Length (a chunked object body is not read)`));
    else this.bodyLeft = ERROR_BODY_MAX; // an error answer of unknown length: its first bytes, then the connection is dropped
    if (this.status === 200 && this.range) this.window = { skip: this.range.start, cap: this.range.end - this.range.start };
    if (!ok) this.bodyLeft = Math.min(this.bodyLeft, ERROR_BODY_MAX);
  }

  private onBody(d: Uint8Array): void {
    let piece = d.length > this.bodyLeft ? d.subarray(0, this.bodyLeft) : d;
    this.bodyLeft -= piece.length;
    const w = this.window;
    if (w) {
      const s = Math.min(w.skip, piece.length);
      w.skip -= s;
      piece = piece.subarray(s, s + w.cap);
      w.cap -= piece.length;
    }
    if (piece.length > 0) {
      this.queue.push(piece);
      this.queued += piece.length;
      if (this.queued >= HIGH_WATER && !this.paused) {
        this.paused = true;
        this.conn.socket.pause();
      }
    }
    if (this.bodyLeft === 0 || (w && w.cap === 0)) this.finish();
    this.signal();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    const reusable = this.bodyLeft === 0 && this.status >= 200 && this.status < 300 && this.headers.get("connection")?.toLowerCase() !== "close";
    if (this.paused) this.conn.socket.resume();
    if (reusable) release(this.origin, this.conn);
    else this.conn.destroy();
    this.signal();
  }

  onLost(err: Error | null): void {
    if (this.ended) return;
    this.fail(err ?? Object.assign(new Error(`connection closed by ${this.origin.key}${this.bodyLeft > 0 ? ` with ${this.bodyLeft} bytes of the body still to come` : ""}`), { code: "ConnectionClosed" }));
  }

  private fail(err: Error): void {
    if (this.ended) return;
    this.ended = true;
    this.error = err;
    this.conn.destroy();
    const reject = this.onFail;
    this.onHead = null;
    this.onFail = null;
    reject?.(err);
    this.signal();
  }

  private signal(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  async read(): Promise<ReadResult> {
    while (this.queue.length === 0 && !this.ended) await new Promise<void>((r) => (this.wake = r));
    const value = this.queue.shift();
    if (value === undefined) {
      if (this.error) throw this.error;
      return { done: true, value: undefined };
    }
    this.queued -= value.length;
    if (this.paused && this.queued < HIGH_WATER / 2 && !this.ended) {
      this.paused = false;
      this.conn.socket.resume();
    }
    return { done: false, value };
  }

  async cancel(): Promise<void> {
    this.queue = [];
    this.queued = 0;
    if (!this.ended) {
      this.ended = true;
      this.conn.destroy();
    }
    this.signal();
  }
}

/** The Range header's value for bytes [start, end). */
export function rangeHeader(range: { start: number; end: number }): string {
  return `bytes=${range.start}-${range.end - 1}`;
}

/**
 * Send `method target` to url's origin with `headers` (and `Range` for [range.start, range.end))
 * and wait for the answer's head; the body is read from `body`. A kept-alive
 * connection the server closed in the meantime is replaced once.
 */
export async function request(method: "GET" | "HEAD", url: URL, target: string, headers: Record<string, string>, range: { start: number; end: number } | null): Promise<RawResponse> {
  const o = originOf(url);
  const lines = [`${method} ${target} HTTP/1.1`, `Host: ${url.host}`];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  if (range) lines.push(`Range: ${rangeHeader(range)}`);
  const text = `${lines.join("\r\n")}\r\n\r\n`;
  for (let attempt = 0; ; attempt++) {
    const reused = takeIdle(o);
    const conn = reused ?? (await Conn.open(o));
    const ex = new Exchange(conn, o, method, range);
    try {
      return await ex.start(text);
    } catch (err) {
      if (reused && !ex.gotBytes && attempt === 0) continue;
      throw err;
    }
  }
}

/** Close every idle connection (the process may then exit without waiting for them). */
export function closeIdle(): void {
  for (const list of idle.values()) for (const c of list) c.destroy();
  idle.clear();
}
