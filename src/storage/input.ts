import type { OpenInput } from "../fsutil/input.ts";
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

  read(buf: Uint8Array, off: number, len: number, pos: number): number {
    if (len <= 0 || pos >= this.size) return 0;
    const n = threadBridge().read(this.path, buf, off, Math.min(len, this.size - pos), pos);
    this.bytesRead += n;
    return n;
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

export function openRemoteInput(path: string): RemoteInput {
  return new RemoteInput(path, remoteSize(path));
}
