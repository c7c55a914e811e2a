import { writeSync } from "node:fs";

/**
 * Writing every byte of a buffer to stdout or stderr, exactly once.
 *
 * Why not `Bun.write(Bun.stdout, …)` or `process.stdout`: creating Bun's
 * `process.stdout`/`process.stderr` streams (consola's environment probe
 * did, on the first diagnostic) dups the fd and sets O_NONBLOCK on the dup,
 * and a dup shares its open file description with fd 1 — so stdout itself
 * becomes non-blocking. A slow reader then fills the pipe: `write()` takes
 * 65,536 of a 66,024-byte chunk, the next write fails with EAGAIN, and
 * Bun.write's fallback writes the whole chunk again from its first byte;
 * the reader gets the first 64 KiB twice (a 1.1 MB document arrived as
 * 1.5–2.1 MB). We cannot make the fd blocking again portably, and a parent
 * may hand us a non-blocking pipe anyway, so this loop works either way:
 * it advances by what each write() returned, and on EAGAIN waits and
 * retries from the first unwritten byte.
 */

/** Longest pause between retries while the reader is not reading (ms). */
const MAX_WAIT_MS = 16;

/**
 * One write() attempt at `off`: the bytes taken, or 0 when the fd cannot
 * take any now (EAGAIN, or a signal interrupted the call). Other errors
 * (EPIPE, ENOSPC, EIO, EBADF…) are thrown with their code.
 */
function writeOnce(fd: number, data: Uint8Array, off: number): number {
  try {
    return writeSync(fd, data, off, data.length - off);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EAGAIN" || code === "EWOULDBLOCK" || code === "EINTR") return 0;
    throw err;
  }
}

interface Cursor {
  off: number;
  /** The pause before the next attempt (ms); 0 after progress. */
  wait: number;
}

/** One attempt; returns how long to wait before the next one (0: go on at once). */
function step(fd: number, data: Uint8Array, c: Cursor): number {
  const n = writeOnce(fd, data, c.off);
  c.off += n;
  c.wait = n > 0 ? 0 : Math.min(MAX_WAIT_MS, c.wait === 0 ? 1 : c.wait * 2);
  return c.wait;
}

/** Write all of `data` to `fd`, blocking the thread while the reader is slow. */
export function writeAllSync(fd: number, data: Uint8Array): void {
  const c: Cursor = { off: 0, wait: 0 };
  while (c.off < data.length) {
    const wait = step(fd, data, c);
    if (wait > 0) Bun.sleepSync(wait);
  }
}

/**
 * Write all of `data` to `fd`; while the reader is slow on a non-blocking
 * fd, wait on the event loop (so a SIGINT/SIGTERM handler can still run).
 */
export async function writeAll(fd: number, data: Uint8Array): Promise<void> {
  const c: Cursor = { off: 0, wait: 0 };
  while (c.off < data.length) {
    const wait = step(fd, data, c);
    if (wait > 0) await Bun.sleep(wait);
  }
}
