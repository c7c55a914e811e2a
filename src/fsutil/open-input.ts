/** Types only (importing this loads nothing): what every reader of an input, local or remote, holds. */

/** An open input: a regular file (random access, `size` from fstat) or standard input (a stream). */
export interface OpenInput {
  readonly path: string;
  readonly fd: number;
  readonly stream: boolean;
  /** Size at open for a regular file; null for a stream. */
  readonly size: number | null;
  /** Bytes returned by `read` so far. */
  bytesRead: number;
  /** Read up to `len` bytes into `buf[off…]`: at `pos` for a file, the next bytes for a stream. 0 at the end. */
  read(buf: Uint8Array, off: number, len: number, pos: number): number;
  /** As read, without blocking the thread while the bytes come (a remote input); absent: read is quick. */
  readAsync?(buf: Uint8Array, off: number, len: number, pos: number): Promise<number>;
  /** A hint that the input will be read in these ranges ([0, b1, …, end]), each from its start (a remote input maps them onto ranged GETs). */
  willRead?(bounds: readonly number[]): void;
  close(): void;
}
