import { closeSync, constants, fstatSync, mkdtempSync, openSync, readSync, rmSync, statfsSync, statSync, writeSync, type Stats } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InputError, isErrorCode, type ErrorCode } from "../errors/index.ts";
import { openRemoteInput, remoteSize, remoteSizeAsync } from "../storage/input.ts";
import { isRemotePath } from "../storage/ref.ts";
import { trackTemp, untrackTemp } from "./temp-files.ts";

/**
 * The one place where a journal or receipt named on the command line (or
 * found under a run directory) is checked and opened. Every reader goes
 * through here, so no reader can hang on a FIFO, read a device as an empty
 * journal, or mistake `-` for a run id:
 *
 *  - `-` and `/dev/stdin` are standard input, read as a stream to its end;
 *  - anything else is `stat`ed BEFORE it is opened (opening a FIFO for
 *    reading blocks until a writer appears), and must be a regular file on
 *    a real filesystem; a FIFO, socket, character or block device, a
 *    directory, or a file of a pseudo filesystem (/proc, /sys: they report
 *    size 0 or 4096 whatever they hold) is refused with
 *    `input_not_regular_file` (exit 3);
 *  - the open itself is O_NONBLOCK and the descriptor is `fstat`ed again, so
 *    a path swapped for a FIFO between the two checks is refused too, never
 *    waited on;
 *  - `s3://bucket/key` and `http(s)://…` are objects in storage, read in
 *    place with ranged GETs (src/storage/): a missing one is
 *    `s3_not_found`, never an empty input.
 */

/** The words that mean standard input. */
export function isStdinPath(path: string): boolean {
  return path === "-" || path === "/dev/stdin";
}

/**
 * The longest row (physical line, without its terminator) any reader but a
 * journal's (JOURNAL_MAX_ROW_BYTES) accepts. Longer rows are refused up front with `row_too_large` (exit 3)
 * instead of being parsed: the exact JSON path builds a value tree that
 * costs dozens of times the row's bytes for a dense numeric row. 16 MiB is
 * far above any row the orchestrators write (an event or a step with a tool
 * result inlined is kilobytes, rarely a megabyte) and keeps that worst case
 * bounded.
 */
export const MAX_ROW_BYTES = 16 * 1024 * 1024;
/**
 * The longest row of a journal (a run's, or an agent's steps) its readers
 * and its writer take by default: every verify (`journal verify`, replay
 * --verify, seal, CI) hashes a row from its bytes, about twice its size in
 * memory, not a tree of values (`--max-row-bytes`); `journal record` keeps
 * it for the rows it reads when it resumes and for the rows it writes,
 * `replay repair` for the rows it reads; the replay verbs of a run (the
 * display, `--as-json`, `--from-step`, `--follow`, the page) keep a huge
 * row's large values as bytes, within 64 MB + 3x the row; `verify run`
 * embeds such a row in a run receipt and `verify receipt` reads it back; a
 * step journal's writer refuses a longer row and its readers (the agent
 * view, debug, export, publish, a receipt's verify) take it. So whatever a
 * writer wrote, every verb reads.
 */
export const JOURNAL_MAX_ROW_BYTES = 256 * 1024 * 1024;

/** A row limit for messages: "16 MiB", "1.5 MiB", "4 KiB", "1000 bytes". */
export function rowLimitText(limit: number): string {
  for (const [unit, size] of [["GiB", 1024 ** 3], ["MiB", 1024 ** 2], ["KiB", 1024]] as const) {
    if (limit >= size) return `${Math.round((limit / size) * 100) / 100} ${unit}`;
  }
  return `${limit} bytes`;
}

/** `row_too_large` for the 1-based line `line` of `path`. */
export function rowTooLarge(path: string, line: number, limit = MAX_ROW_BYTES): InputError {
  return new InputError(
    "row_too_large",
    `line ${line} of ${path} is longer than the row limit of ${limit} bytes (${rowLimitText(limit)}); refusing to read it`,
    { path, line, limit_bytes: limit },
  );
}

// Pseudo filesystems whose "regular files" are not files of bytes with a size.
const PSEUDO_FS = new Set([
  0x9fa0, // proc
  0x62656572, // sysfs
  0x64626720, // debugfs
  0x74726163, // tracefs
  0x73636673, // securityfs
  0x63677270, // cgroup2
  0x27e0eb, // cgroup
  0x62656570, // configfs
  0xcafe4a11, // bpf
  0xde5e81e4, // efivarfs
]);

/** What a non-regular file is, for messages ("a FIFO (named pipe)", "a character device", …). */
export function kindOf(st: Stats): string {
  if (st.isFIFO()) return "a FIFO (named pipe)";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  if (st.isSocket()) return "a socket";
  if (st.isDirectory()) return "a directory";
  if (st.isSymbolicLink()) return "a symbolic link";
  return "not a regular file";
}

function notRegular(what: string, path: string, kind: string): InputError {
  return new InputError(
    "input_not_regular_file",
    `${what} ${path} is ${kind}, not a regular file; refusing to read it (use - to read standard input)`,
    { path, kind },
  );
}

/** True when `path` is on a pseudo filesystem (/proc, /sys, …) whose files are not files of bytes. */
export function onPseudoFs(path: string): boolean {
  try {
    return PSEUDO_FS.has(Number(statfsSync(path).type));
  } catch {
    return false; // statfs unsupported here: the stat check stands alone
  }
}

export interface InputOptions {
  /** What the input is, for messages: "journal", "receipt". */
  what?: string;
  /** Error code for an input that exists but cannot be opened or read (default `<what>_unreadable`). */
  unreadableCode?: ErrorCode;
}

function unreadableCode(o: InputOptions): ErrorCode {
  if (o.unreadableCode) return o.unreadableCode;
  const code = `${o.what ?? "input"}_unreadable`;
  return isErrorCode(code) ? code : "input_unreadable";
}

/** An `InputError` for a failed open/read of `path` (errno in the message). */
export function unreadableInput(path: string, err: unknown, o: InputOptions = {}): InputError {
  const code = (err as NodeJS.ErrnoException).code ?? "EIO";
  const why = code === "EISDIR" ? "it is a directory" : code === "EACCES" ? "permission denied" : code;
  return new InputError(unreadableCode(o), `cannot read ${o.what ?? "input"} ${path}: ${why}`, { path });
}

/** The warning for a file a tolerant reader skips because it cannot be read: `<path>: unreadable (<errno>)`. */
export function unreadableWarning(path: string, err: unknown): string {
  return `${path}: unreadable (${(err as NodeJS.ErrnoException).code ?? String(err)})`;
}

/**
 * Check a named input without opening it: "missing" (ENOENT), "stdin"
 * (`-`, `/dev/stdin`), or "regular"; anything else throws
 * `input_not_regular_file`, or `<what>_unreadable` when it cannot be stat'ed.
 */
export function checkInput(path: string, o: InputOptions = {}): "missing" | "stdin" | "regular" {
  if (isStdinPath(path)) return "stdin";
  if (isRemotePath(path)) {
    remoteSize(path);
    return "regular";
  }
  let st: Stats;
  try {
    st = statSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT" || (err as NodeJS.ErrnoException).code === "ENOTDIR") return "missing";
    throw unreadableInput(path, err, o);
  }
  if (!st.isFile()) throw notRegular(o.what ?? "input", path, kindOf(st));
  if (onPseudoFs(path)) throw notRegular(o.what ?? "input", path, "a file of a pseudo filesystem (/proc, /sys)");
  return "regular";
}

import type { OpenInput } from "./open-input.ts";
export type { OpenInput } from "./open-input.ts";

/**
 * Open a named input (see the module comment). Returns null for a missing
 * file (the caller decides what absence means); throws
 * `input_not_regular_file` or `<what>_unreadable`.
 */
export function openInput(path: string, o: InputOptions = {}): OpenInput | null {
  if (isRemotePath(path)) return openRemoteInput(path);
  const kind = checkInput(path, o);
  if (kind === "missing") return null;
  if (kind === "stdin") return new StreamInput(path, 0, o);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw unreadableInput(path, err, o);
  }
  let st: Stats;
  try {
    st = fstatSync(fd);
  } catch (err) {
    closeSync(fd);
    throw unreadableInput(path, err, o);
  }
  if (!st.isFile()) {
    closeSync(fd);
    throw notRegular(o.what ?? "input", path, kindOf(st));
  }
  return new FileInput(path, fd, st.size, o);
}

/** The smallest read buffer readBufferSize gives. */
const MIN_READ_BUFFER = 4096;

/**
 * A read buffer for `input` from `from` on, at most `max` bytes: no larger
 * than what is left of a file when it was opened, and one byte more (the
 * read that finds the end). Every reader allocates its own; a 1 MiB buffer
 * for a journal of a few KB is memory the engine counts towards its next
 * full collection in a long-lived process that reads many small journals.
 */
export function readBufferSize(input: OpenInput | null, max: number, from = 0): number {
  if (input === null || input.size === null) return max;
  return Math.min(max, Math.max(MIN_READ_BUFFER, input.size - from + 1));
}

class FileInput implements OpenInput {
  readonly stream = false;
  bytesRead = 0;
  constructor(
    readonly path: string,
    readonly fd: number,
    readonly size: number,
    private readonly o: InputOptions,
  ) {}
  read(buf: Uint8Array, off: number, len: number, pos: number): number {
    let n: number;
    try {
      n = readSync(this.fd, buf, off, len, pos);
    } catch (err) {
      throw unreadableInput(this.path, err, this.o);
    }
    this.bytesRead += n;
    return n;
  }
  close(): void {
    closeSync(this.fd);
  }
}

const sleepCell = new Int32Array(new SharedArrayBuffer(4));

/**
 * Standard input as a stream. Reads are sequential; `pos` is accepted for
 * the file interface and may step back up to BACK bytes: the last bytes
 * read are kept for that (a reader that peeked at the byte after a CR, or
 * the fast verifier re-reading a line that outgrew its 256 KiB read area). fd 0 may
 * have been made non-blocking by whoever shares it (EAGAIN): then the read
 * waits a millisecond and tries again, rather than taking "no data yet" for
 * the end of the input.
 */
class StreamInput implements OpenInput {
  readonly stream = true;
  readonly size = null;
  bytesRead = 0;
  private readonly back = new Uint8Array(BACK);
  private backLen = 0;
  constructor(
    readonly path: string,
    readonly fd: number,
    private readonly o: InputOptions,
  ) {}

  read(buf: Uint8Array, off: number, len: number, pos: number): number {
    if (len <= 0) return 0;
    const behind = this.bytesRead - pos;
    if (behind > 0) {
      if (behind > this.backLen) throw new Error(`stream input re-read ${behind} bytes back (kept ${this.backLen})`);
      const n = Math.min(len, behind);
      buf.set(this.back.subarray(this.backLen - behind, this.backLen - behind + n), off);
      return n;
    }
    const n = this.readFresh(buf, off, len);
    this.keep(buf.subarray(off, off + n));
    this.bytesRead += n;
    return n;
  }

  private readFresh(buf: Uint8Array, off: number, len: number): number {
    for (;;) {
      try {
        return readSync(this.fd, buf, off, len, null);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === "EAGAIN" || code === "EWOULDBLOCK") {
          Atomics.wait(sleepCell, 0, 0, 1);
          continue;
        }
        if (code === "EOF") return 0;
        throw unreadableInput(this.path, err, this.o);
      }
    }
  }

  private keep(bytes: Uint8Array): void {
    if (bytes.length >= BACK) {
      this.back.set(bytes.subarray(bytes.length - BACK));
      this.backLen = BACK;
      return;
    }
    const keepOld = Math.min(this.backLen, BACK - bytes.length);
    this.back.copyWithin(0, this.backLen - keepOld, this.backLen);
    this.back.set(bytes, keepOld);
    this.backLen = keepOld + bytes.length;
  }

  close(): void {
    // fd 0 stays open: it is the process's, not this reader's.
  }
}
/** Bytes of a stream kept for re-reading: more than the fast verifier's read area (256 KiB) plus one read. */
const BACK = 1 << 20;

/**
 * Standard input copied to a private temporary file (0600 in a 0700
 * directory), for readers that need a file: the receipt walker reads an
 * archive in more than one pass. Constant memory (1 MiB at a time); the
 * copy is removed by `cleanup`. `bytes` is how many bytes were received.
 */
export function spoolStdin(o: InputOptions = {}): Promise<{ path: string; bytes: number; cleanup: () => void }> {
  return spoolInput(new StreamInput("-", 0, o));
}

/**
 * Copy an open input (standard input, a remote object) to a private
 * temporary file (see spoolStdin), awaiting each read an input can do
 * asynchronously: a remote object is copied while this thread's event loop
 * keeps running (a SIGINT/SIGTERM handler can run; a thread blocked on a
 * slow server never sees a signal).
 */
async function spoolInput(input: OpenInput): Promise<{ path: string; bytes: number; cleanup: () => void }> {
  const spool = newSpool();
  try {
    for (;;) {
      const n = input.readAsync ? await input.readAsync(spool.buf, 0, spool.buf.length, input.bytesRead) : input.read(spool.buf, 0, spool.buf.length, input.bytesRead);
      if (n === 0) break;
      spool.write(n);
    }
    return spool.done(input);
  } catch (err) {
    spool.fail(input);
    throw err;
  }
}

/** A private temporary file (0600 in a 0700 directory) being filled 1 MiB at a time from `buf`. */
function newSpool() {
  const dir = mkdtempSync(join(tmpdir(), "bernstein-stdin-"));
  // Tracked: a SIGINT/SIGTERM (which ends the process without unwinding) removes the copy too.
  trackTemp(dir);
  const cleanup = () => {
    untrackTemp(dir);
    rmSync(dir, { recursive: true, force: true });
  };
  const path = join(dir, "stdin");
  let out: number;
  try {
    out = openSync(path, "wx", 0o600);
  } catch (err) {
    cleanup();
    throw err;
  }
  const buf = new Uint8Array(1 << 20);
  return {
    buf,
    write(n: number): void {
      let w = 0;
      while (w < n) w += writeSync(out, buf, w, n - w);
    },
    done(input: OpenInput): { path: string; bytes: number; cleanup: () => void } {
      closeSync(out);
      input.close();
      return { path, bytes: input.bytesRead, cleanup };
    },
    fail(input: OpenInput): void {
      try {
        closeSync(out);
      } catch {
        /* closed by done() */
      }
      input.close();
      cleanup();
    },
  };
}

/**
 * A named input as a local file for readers that need a descriptor (the
 * receipt walker): the file itself, or for standard input and a remote
 * object a private copy (remove it with `cleanup`). Null for a missing file.
 */
export async function inputAsFile(path: string, o: InputOptions = {}): Promise<{ path: string; bytes: number; cleanup?: () => void } | null> {
  if (isStdinPath(path)) return spoolStdin(o);
  // its size first, awaited: openRemoteInput then finds it known
  if (isRemotePath(path)) return (await remoteSizeAsync(path), spoolInput(openRemoteInput(path)));
  return checkInput(path, o) === "regular" ? { path, bytes: statSync(path).size } : null;
}

/**
 * The size of a named input: null when it does not exist, -1 when it
 * cannot be stat'ed (a remote object that is missing or refused throws).
 */
export function inputSize(path: string): number | null {
  if (isRemotePath(path)) return remoteSize(path);
  try {
    return statSync(path).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    return -1;
  }
}

/**
 * The bytes of a named input, in chunks of up to `chunk` bytes read into one
 * reused buffer (each chunk is valid until the next is requested); `chunk`
 * may be that buffer itself (a chain walker's read area, where the step
 * kernel scans rows without their being copied there first). A missing
 * file yields nothing; see `openInput` for what is refused.
 */
export function* readChunks(path: string, o: InputOptions = {}, chunk: number | Uint8Array = 1 << 20): Generator<Uint8Array> {
  const input = openInput(path, o);
  if (input === null) return;
  const buf = typeof chunk === "number" ? new Uint8Array(chunk) : chunk;
  try {
    for (;;) {
      const n = input.read(buf, 0, buf.length, input.bytesRead);
      if (n === 0) return;
      yield buf.subarray(0, n);
    }
  } finally {
    input.close();
  }
}

/**
 * Run `fn` on a file holding the input `path`: the file itself, or for `-`
 * and `/dev/stdin` a spooled copy of standard input (removed afterwards).
 * `bytes` is the size read (for a file: its size when checked).
 */
export async function withInputFile<T>(path: string, o: InputOptions, fn: (file: string, bytes: number | null) => Promise<T>): Promise<T> {
  if (!isStdinPath(path) && !isRemotePath(path)) {
    const kind = checkInput(path, o);
    return fn(path, kind === "regular" ? statSync(path).size : null);
  }
  const spool = (await inputAsFile(path, o))!;
  try {
    return await fn(spool.path, spool.bytes);
  } finally {
    spool.cleanup?.();
  }
}
