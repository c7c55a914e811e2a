import { fstatSync, readFileSync } from "node:fs";

/**
 * A larger pipe for a large document (Linux): `bernstein replay X --as-json |
 * jq` writes tens of megabytes in pieces of a megabyte or so, and a pipe
 * holds 64 KiB by default. A write larger than the pipe stops mid-way until
 * the reader has read, again and again, so the two take turns on their
 * cores instead of running side by side, which costs wall and CPU time
 * (docs/platforms.md says what users see). The reader sees the same
 * bytes; only the kernel's buffer between the two grows.
 *
 * Asked once per fd, at the first write of LARGE_WRITE bytes or more once
 * the output has reached LARGE_OUTPUT. Below that it does not pay: loading
 * the library call maps more of this binary's pages into the process, and
 * the prose displays write pieces a default pipe takes whole. Anything
 * that is not a pipe (a file, a terminal, a socket), a refusal (a user
 * over their pipe-buffer allowance gets EPERM), or a system without fcntl
 * through libc leaves the fd as it was: this is a speed-up, never a
 * failure.
 */

/** Linux's fcntl commands (fcntl.h): F_SETPIPE_SZ, F_GETPIPE_SZ. */
const F_SETPIPE_SZ = 1031;
const F_GETPIPE_SZ = 1032;
/** What is asked for: Linux's default ceiling for an unprivileged process (/proc/sys/fs/pipe-max-size). */
const WANTED = 1 << 20;
/** A write is "large" from four default pipes' worth: it would stop mid-way at least four times. */
export const LARGE_WRITE = 1 << 18;
/** An output is "large" from this many bytes. */
export const LARGE_OUTPUT = 8 << 20;

/** Whether a write of `n` bytes, after `written` bytes of output, asks for a wider pipe. */
export function widens(written: number, n: number): boolean {
  return n >= LARGE_WRITE && written + n >= LARGE_OUTPUT;
}

type Fcntl = (fd: number, cmd: number, arg: number) => number;

let fcntl: Fcntl | null | undefined;
const asked = new Set<number>();

/** libc's fcntl, or null where it cannot be had (not Linux, no glibc). */
function libcFcntl(): Fcntl | null {
  if (fcntl !== undefined) return fcntl;
  fcntl = null;
  if (process.platform !== "linux") return null;
  try {
    // bun:ffi is loaded only here: commands that never write a large output never load it
    const { dlopen, FFIType } = require("bun:ffi") as typeof import("bun:ffi");
    const lib = dlopen("libc.so.6", { fcntl: { args: [FFIType.i32, FFIType.i32, FFIType.i32], returns: FFIType.i32 } });
    fcntl = (fd, cmd, arg) => lib.symbols.fcntl(fd, cmd, arg);
  } catch {
    fcntl = null;
  }
  return fcntl;
}

/** The most a pipe may be given here (pipe-max-size), at most WANTED. */
function ceiling(): number {
  try {
    const n = Number(readFileSync("/proc/sys/fs/pipe-max-size", "utf8").trim());
    return Number.isSafeInteger(n) && n > 0 ? Math.min(n, WANTED) : WANTED;
  } catch {
    return WANTED;
  }
}

/**
 * Grow the pipe on `fd` to WANTED bytes (or pipe-max-size) if it is a pipe
 * and smaller; once per fd. Returns the pipe's size after, or null when
 * `fd` is no pipe or its size could not be read.
 */
export function widenPipe(fd: number): number | null {
  if (asked.has(fd)) return null;
  asked.add(fd);
  try {
    if (!fstatSync(fd).isFIFO()) return null;
  } catch {
    return null;
  }
  const f = libcFcntl();
  if (f === null) return null;
  const size = f(fd, F_GETPIPE_SZ, 0);
  if (size < 0) return null;
  const want = ceiling();
  if (size >= want) return size;
  const after = f(fd, F_SETPIPE_SZ, want);
  return after < 0 ? size : after;
}
