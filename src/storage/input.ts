import type { OpenInput } from "../fsutil/open-input.ts";
import { threadBridge } from "./bridge.ts";
import { parseRemote } from "./ref.ts";

/**
 * A remote object as an open input: random access, its size known (asked
 * once per thread), bytes read synchronously through this thread's
 * fetcher. Never copied to disk. A missing object, refused credentials or
 * an endpoint that does not answer throw s3_not_found, s3_access_denied,
 * s3_unreachable (exit 3).
 */
export class RemoteInput implements OpenInput {
  /** No descriptor: readers of a remote input use `read` and `size` only. */
  readonly fd = -1;
  readonly stream = false;
  bytesRead = 0;
  constructor(
    readonly path: string,
    readonly size: number,
  ) {}

  /** As a file's pread: all `len` bytes unless the object ends first (a reader may rely on a full header read). */
  read(buf: Uint8Array, off: number, len: number, pos: number): number {
    const want = Math.max(0, Math.min(len, this.size - pos));
    let n = 0;
    while (n < want) n += threadBridge().read(this.path, buf, off + n, want - n, pos + n);
    this.bytesRead += n;
    return n;
  }

  /** As read, awaiting the fetcher instead of blocking this thread (the main thread stays responsive to signals). */
  async readAsync(buf: Uint8Array, off: number, len: number, pos: number): Promise<number> {
    const want = Math.max(0, Math.min(len, this.size - pos));
    let n = 0;
    while (n < want) n += await threadBridge().readAsync(this.path, buf, off + n, want - n, pos + n);
    this.bytesRead += n;
    return n;
  }

  /** The reader will read these ranges ([0, b1, …, end]), each from its start: one ranged GET stream per range. */
  willRead(bounds: readonly number[]): void {
    threadBridge().plan(this.path, bounds);
  }

  close(): void {
    // The fetcher keeps its readahead for the next range of the same object.
  }
}

/** The size of a remote object (throws the typed storage errors). */
export function remoteSize(path: string): number {
  parseRemote(path);
  return threadBridge().size(path);
}

/** The size of a remote object, asked without blocking this thread (later sync asks get it from the cache). */
export function remoteSizeAsync(path: string): Promise<number> {
  parseRemote(path);
  return threadBridge().sizeAsync(path);
}

export function openRemoteInput(path: string): RemoteInput {
  return new RemoteInput(path, remoteSize(path));
}
