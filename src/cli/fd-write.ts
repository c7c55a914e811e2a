import { constants, fstatSync, openSync, write, writeSync } from "node:fs";

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
 * the reader gets the first 64 KiB twice, and a document arrives longer
 * than it was written. We cannot make the fd blocking again portably, and
 * a parent may hand us a non-blocking pipe anyway, so this loop works
 * either way:
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
    if (tookNothing(err)) return 0;
    throw err;
  }
}

/** A write that failed without taking anything and is to be tried again: the fd is full (EAGAIN) or a signal came first. */
function tookNothing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === "EAGAIN" || code === "EWOULDBLOCK" || code === "EINTR";
}

interface Cursor {
  off: number;
  /** The pause before the next attempt (ms); 0 after progress. */
  wait: number;
}

/** Advance by the `n` bytes an attempt took; returns how long to wait before the next one (0: go on at once). */
function advance(c: Cursor, n: number): number {
  c.off += n;
  c.wait = n > 0 ? 0 : Math.min(MAX_WAIT_MS, c.wait === 0 ? 1 : c.wait * 2);
  return c.wait;
}

/**
 * Write all of `data` to `fd`, blocking the thread while the reader is
 * slow. On a non-blocking fd, `patienceMs`: give up (an ETIMEDOUT error)
 * once the reader took nothing for that long.
 */
export function writeAllSync(fd: number, data: Uint8Array, patienceMs = Infinity): void {
  const c: Cursor = { off: 0, wait: 0 };
  let waited = 0;
  while (c.off < data.length) {
    const wait = advance(c, writeOnce(fd, data, c.off));
    if (wait === 0) {
      waited = 0;
      continue;
    }
    if ((waited += wait) > patienceMs) throw Object.assign(new Error("the reader took nothing"), { code: "ETIMEDOUT" });
    Bun.sleepSync(wait);
  }
}

/** Whether a character device is one of the memory devices (/dev/null, /dev/zero, /dev/full), which take every write at once: its major number, 1 on Linux, 3 on macOS. */
function isMemoryDevice(rdev: number): boolean {
  if (process.platform === "darwin") return Math.floor(rdev / 2 ** 24) % 256 === 3;
  return Math.floor(rdev / 256) % 4096 === 1;
}

/**
 * Whether a write to `fd` can wait on its reader: a pipe, a socket or a
 * terminal. A file or /dev/null takes every write at once.
 */
export function writesMayWait(fd: number): boolean {
  try {
    const st = fstatSync(fd);
    // a character device is taken for a terminal unless it is a memory device
    return st.isFIFO() || st.isSocket() || (st.isCharacterDevice() && !isMemoryDevice(st.rdev));
  } catch {
    return false;
  }
}

/**
 * writeOnce by a thread of the runtime's pool: a write(2) that waits on a
 * reader who stopped reading holds that thread, not this one, so a
 * SIGINT/SIGTERM handler still runs (the kernel restarts a blocked write
 * after a signal; it never returns to let the handler in).
 */
function writeOnceOffThread(fd: number, data: Uint8Array, off: number): Promise<number> {
  return new Promise((resolve, reject) =>
    write(fd, data, off, data.length - off, null, (err, n) => {
      if (!err) resolve(n);
      else if (tookNothing(err)) resolve(0);
      else reject(err);
    }),
  );
}

/** Linux's O_CLOEXEC (the runtime's `constants` lacks it): an agent a command spawns does not inherit the twin. */
const O_CLOEXEC = 0o2000000;

/**
 * A second, non-blocking open file description of the pipe on `fd`
 * (Linux: opening /proc/self/fd/N opens the pipe anew), or null when `fd`
 * is no pipe or cannot be opened so. Setting O_NONBLOCK on `fd` itself
 * would change it for every process that shares the description (the
 * shell, a `2>&1` stderr); this one is ours alone. A write to it takes
 * what fits and never waits, so writes to a pipe with room stay on this
 * thread and only a full pipe costs a trip to the pool.
 */
export function nonBlockingTwin(fd: number): number | null {
  try {
    if (process.platform !== "linux" || !fstatSync(fd).isFIFO()) return null;
    return openSync(`/proc/self/fd/${fd}`, constants.O_WRONLY | constants.O_NONBLOCK | constants.O_NOCTTY | O_CLOEXEC);
  } catch {
    // no /proc, or the reader is already gone (ENXIO): fd alone, every write by the pool
    return null;
  }
}

/** What a non-blocking `fd` takes of `data` now, without waiting (0 when it is full). */
export function writeAvailable(fd: number, data: Uint8Array): number {
  let off = 0;
  for (let n = 1; off < data.length && n > 0; off += n) n = writeOnce(fd, data, off);
  return off;
}

/**
 * Write all of `data` to `fd`, whose writes may wait on its reader,
 * without ever blocking this thread: what the pipe takes now goes through
 * its non-blocking `twin`, and the rest, once it is full, by the pool
 * (writeOnceOffThread), while this thread awaits.
 */
export async function writeAllWaiting(fd: number, twin: number | null, data: Uint8Array): Promise<void> {
  const c: Cursor = { off: 0, wait: 0 };
  while (c.off < data.length) {
    if (twin !== null) {
      const n = writeOnce(twin, data, c.off);
      if (n > 0) {
        advance(c, n);
        continue;
      }
    }
    const wait = advance(c, await writeOnceOffThread(fd, data, c.off));
    // fd itself is non-blocking (a parent made it so): no thread waits for the reader, so this one does
    if (wait > 0) await Bun.sleep(wait);
  }
}

/**
 * Write all of `data` to `fd` (a file, or an fd that is non-blocking);
 * while the reader is slow, wait on the event loop (so a SIGINT/SIGTERM
 * handler can still run).
 */
export async function writeAll(fd: number, data: Uint8Array): Promise<void> {
  const c: Cursor = { off: 0, wait: 0 };
  while (c.off < data.length) {
    const wait = advance(c, writeOnce(fd, data, c.off));
    if (wait > 0) await Bun.sleep(wait);
  }
}
