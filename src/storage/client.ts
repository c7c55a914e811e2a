import { s3Config, type S3Config, type StorageFlags } from "./config.ts";
import { failureOf, kindOf, kindOfStatus, storageFailure, type StorageFailure } from "./errors.ts";
import { rangeHeader, request, type BodyReader, type RawResponse } from "./http1.ts";
import type { HttpRef, RemoteRef, S3Ref } from "./ref.ts";
import { objectPath, signedHeaders } from "./sigv4.ts";

/**
 * The asynchronous half of object storage: the size of an object and
 * ranged reads of it, through Bun.s3 (SigV4) for s3:// and fetch for
 * http(s) URLs. Every failure is thrown as a StorageFailureError carrying a
 * typed StorageFailure (errors.ts).
 *
 * Bun.s3 pitfalls kept away from: the bucket and region are always passed
 * (never Bun's defaults: "auto" region, S3_BUCKET overriding the URL's
 * bucket); a size is always known before a range is asked for (slice(-n)
 * of an unknown size sends a bogus range); an empty range is never
 * requested (slice(a, a) returns a byte).
 */
export class StorageFailureError extends Error {
  constructor(readonly failure: StorageFailure) {
    super(failure.message);
  }
}

export function s3ClientFor(ref: S3Ref, cfg: S3Config): Bun.S3Client {
  return new Bun.S3Client({
    endpoint: cfg.endpoint,
    region: cfg.region,
    bucket: ref.bucket,
    accessKeyId: cfg.accessKeyId,
    secretAccessKey: cfg.secretAccessKey,
    sessionToken: cfg.sessionToken,
    virtualHostedStyle: false,
  });
}

export class RemoteObject {
  readonly endpoint: string | null;
  private readonly cfg: S3Config | null;
  private s3File: Bun.S3File | null = null;
  /** The object's URL when it is read over plain http by http1.ts (null: through Bun.s3 / fetch). */
  private readonly plain: PlainTarget | null;
  constructor(
    readonly ref: RemoteRef,
    flags?: StorageFlags,
  ) {
    this.cfg = ref.kind === "s3" ? s3Config(flags) : null;
    this.endpoint = this.cfg?.endpoint ?? null;
    this.plain = plainUrl(ref, this.cfg);
  }

  /** Bun.s3's handle on the object, made on first use (reads over plain http never need it; uploads do). */
  private get file(): Bun.S3File | null {
    if (this.ref.kind !== "s3") return null;
    return (this.s3File ??= s3ClientFor(this.ref, this.cfg!).file(this.ref.key));
  }

  fail(err: unknown): StorageFailureError {
    if (err instanceof StorageFailureError) return err;
    return new StorageFailureError(failureOf(err, this.ref, this.endpoint));
  }

  /** The object's size in bytes. */
  async size(): Promise<number> {
    if (this.plain) return this.plainSize(this.plain);
    if (this.ref.kind === "http") return httpSize(this.ref, this);
    try {
      return (await this.file!.stat()).size;
    } catch (err) {
      // A HEAD answer has no body, so Bun cannot tell a refused signature
      // from anything else: ask for one byte to learn why.
      if ((err as { code?: unknown }).code === "UnknownError") throw await this.whyHeadFailed(err);
      throw this.fail(err);
    }
  }

  private async whyHeadFailed(headErr: unknown): Promise<StorageFailureError> {
    try {
      await this.file!.slice(0, 1).arrayBuffer();
    } catch (err) {
      return this.fail(err);
    }
    return this.fail(headErr);
  }

  /** Bytes [start, end) of the object (end > start), as a stream. */
  async range(start: number, end: number): Promise<ReadableStream<Uint8Array>> {
    if (!(end > start)) throw new Error(`empty range [${start}, ${end}) requested`);
    if (this.ref.kind === "http") return httpRange(this.ref, this, start, end);
    return this.file!.slice(start, end).stream() as ReadableStream<Uint8Array>;
  }

  /** Bytes [start, end) of the object (end > start), pulled as fast as they are read. */
  async reader(start: number, end: number): Promise<BodyReader> {
    if (!this.plain) return (await this.range(start, end)).getReader() as BodyReader;
    if (!(end > start)) throw new Error(`empty range [${start}, ${end}) requested`);
    const r = await this.plainGet("GET", this.plain, { start, end });
    if (r.status === 206 || r.status === 200) return r.body;
    throw await this.plainFailure(r);
  }

  private async plainGet(method: "GET" | "HEAD", to: PlainTarget, range: { start: number; end: number } | null): Promise<RawResponse> {
    const headers = this.cfg ? signedHeaders(method, to.origin.host, to.target, this.cfg, range ? { range: rangeHeader(range) } : {}) : {};
    try {
      return await request(method, to.origin, to.target, headers, range);
    } catch (err) {
      throw this.fail(err);
    }
  }

  /** A refusal's kind from its status and the S3 error code in its body (a HEAD has none). */
  private async plainFailure(r: RawResponse): Promise<StorageFailureError> {
    let text = "";
    try {
      for (;;) {
        const { done, value } = await r.body.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
    } catch {
      // the status is enough
    }
    await r.body.cancel();
    const code = /<Code>([^<]{1,64})<\/Code>/.exec(text)?.[1];
    const kind = code !== undefined && kindOf({ code }) !== "request_failed" ? kindOf({ code }) : kindOfStatus(r.status);
    return new StorageFailureError(storageFailure(kind, this.ref, this.endpoint, `HTTP ${r.status}${code ? ` ${code}` : ""}`));
  }

  /** HEAD for a signed object; a one-byte GET for a URL (a presigned URL is signed for GET only). */
  private async plainSize(url: PlainTarget): Promise<number> {
    if (this.ref.kind === "s3") {
      const r = await this.plainGet("HEAD", url, null);
      const len = r.headers.get("content-length");
      if (r.status === 200 && len !== undefined && /^\d+$/.test(len)) return Number(len);
      throw await this.plainFailure(r);
    }
    const r = await this.plainGet("GET", url, { start: 0, end: 1 });
    const total = /\/(\d+)\s*$/.exec(r.headers.get("content-range") ?? "");
    const len = r.headers.get("content-length");
    if ((r.status === 206 || r.status === 416) && total) {
      await r.body.cancel();
      return Number(total[1]);
    }
    if (r.status === 200 && len !== undefined && /^\d+$/.test(len)) {
      await r.body.cancel();
      return Number(len);
    }
    throw await this.plainFailure(r);
  }

  /** Whether the object exists (a refusal or an unreachable endpoint still throws). */
  async exists(): Promise<boolean> {
    try {
      await this.size();
      return true;
    } catch (err) {
      if (err instanceof StorageFailureError && err.failure.kind === "not_found") return false;
      throw err;
    }
  }

  /**
   * Upload a local file: multipart in parts of `partSize` (Bun.s3; 5 MiB is S3's smallest), so an
   * object appears only when the last part is in and its upload completed;
   * a failed upload is aborted and leaves nothing a reader can see.
   */
  async upload(localPath: string, partSize = 5 << 20): Promise<void> {
    if (this.ref.kind !== "s3") throw new StorageFailureError(storageFailure("request_failed", this.ref, null, "uploads go to s3:// URLs only"));
    try {
      await this.file!.write(Bun.file(localPath), { partSize, queueSize: 2, retry: 2, type: "application/x-tar" });
    } catch (err) {
      throw this.fail(err);
    }
  }

  /** Put a small object in one request (atomic, as every S3 PUT is). */
  async put(bytes: Uint8Array): Promise<void> {
    try {
      await this.file!.write(bytes, { type: "application/json" });
    } catch (err) {
      throw this.fail(err);
    }
  }
}

/** Where a plain-http request goes: the origin, and the request target as sent (and signed), never re-normalised. */
interface PlainTarget {
  origin: URL;
  target: string;
}

/**
 * Plain http endpoints and URLs are read by http1.ts; https ones by Bun.s3
 * and fetch (TLS). BERNSTEIN_S3_CLIENT=bun sends plain http through Bun.s3
 * and fetch too (the tests cover that path against a plain-http server).
 */
function plainUrl(ref: RemoteRef, cfg: S3Config | null): PlainTarget | null {
  if (process.env.BERNSTEIN_S3_CLIENT === "bun") return null;
  if (ref.kind === "http") {
    if (!/^http:\/\//i.test(ref.url)) return null;
    const u = new URL(ref.url);
    return { origin: u, target: `${u.pathname}${u.search}` };
  }
  if (!cfg || !/^http:\/\//i.test(cfg.endpoint)) return null;
  const endpoint = new URL(cfg.endpoint);
  return { origin: endpoint, target: objectPath(endpoint, ref) };
}

function httpFailure(ref: HttpRef, r: Response): StorageFailureError {
  return new StorageFailureError(storageFailure(kindOfStatus(r.status), ref, null, `HTTP ${r.status}`));
}

async function httpGet(ref: HttpRef, obj: RemoteObject, range: string): Promise<Response> {
  try {
    return await fetch(ref.url, { headers: { Range: range } });
  } catch (err) {
    throw obj.fail(err);
  }
}

/**
 * A presigned URL is signed for GET only (a HEAD is refused): the size
 * comes from the Content-Range of a one-byte ranged GET.
 */
async function httpSize(ref: HttpRef, obj: RemoteObject): Promise<number> {
  const r = await httpGet(ref, obj, "bytes=0-0");
  const total = /\/(\d+)\s*$/.exec(r.headers.get("content-range") ?? "");
  await r.body?.cancel();
  if (r.status === 206 && total) return Number(total[1]);
  // An empty object cannot satisfy any range.
  if (r.status === 416 && total) return Number(total[1]);
  const len = r.headers.get("content-length");
  if (r.status === 200 && len !== null && /^\d+$/.test(len)) return Number(len);
  throw httpFailure(ref, r);
}

async function httpRange(ref: HttpRef, obj: RemoteObject, start: number, end: number): Promise<ReadableStream<Uint8Array>> {
  const r = await httpGet(ref, obj, `bytes=${start}-${end - 1}`);
  if (r.status === 206 && r.body) return r.body;
  if (r.status === 200 && r.body) return skipAndCap(r.body, start, end - start);
  await r.body?.cancel();
  throw httpFailure(ref, r);
}

/** A server that ignores Range: its whole body, cut to [start, start+len). */
function skipAndCap(body: ReadableStream<Uint8Array>, start: number, len: number): ReadableStream<Uint8Array> {
  let skip = start;
  let left = len;
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const { done, value } = await reader.read();
        if (done || left === 0) {
          await reader.cancel();
          controller.close();
          return;
        }
        let v = value;
        if (skip > 0) {
          const s = Math.min(skip, v.length);
          skip -= s;
          v = v.subarray(s);
        }
        if (v.length === 0) continue;
        const take = v.subarray(0, Math.min(v.length, left));
        left -= take.length;
        controller.enqueue(take);
        return;
      }
    },
    cancel: () => reader.cancel(),
  });
}
