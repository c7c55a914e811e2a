import { BernsteinError, ExitCode } from "../errors/index.ts";
import { renderJson } from "../render/json.ts";
import { nonBlockingTwin, writeAll, writeAllSync, writeAllWaiting, writeAvailable, writesMayWait } from "./fd-write.ts";
import { OrderedOutput } from "./ordered-output.ts";
import { openAnonymousFile } from "../fsutil/anonymous-file.ts";
import { widenPipe, widens } from "./pipe-buffer.ts";
import { nextTurn, TurnPacer } from "../fsutil/turn.ts";

/**
 * stdout and stderr of every command, written by our own loop over fd 1
 * and fd 2 (fd-write.ts): every byte exactly once, whatever the reader's
 * speed and whether or not the fd is non-blocking. `process.stdout` is not
 * used: its Node stream adds start-up time to every command.
 *
 * A reader that goes away (`bernstein replay X | head`) is not an error of
 * ours: on EPIPE further output is dropped quietly and streaming commands
 * can stop early (`stdoutClosed()`). Any other failure to write stdout
 * (ENOSPC on `> /dev/full`, EIO, EBADF on a closed fd) means the result did
 * not reach the caller: OutputFailedError, exit 70, one line on stderr.
 */
let stdoutGone = false;
let failure: OutputFailedError | null = null;
let written = 0;
let begun = false;

/** stdout could not be written (not EPIPE): the result never reached the caller. */
export class OutputFailedError extends BernsteinError {
  constructor(message: string, facts: Record<string, unknown> = {}) {
    super("output_failed", message, ExitCode.INTERNAL, facts);
    this.name = "OutputFailedError";
  }
}

/** True once the reader of stdout has gone away (EPIPE). */
export function stdoutClosed(): boolean {
  return stdoutGone;
}

/** The failure of stdout, once a write to it failed (other than EPIPE). */
export function outputFailure(): OutputFailedError | null {
  return failure;
}

/**
 * True once any write to stdout was attempted: from then on part of a
 * document may be in the pipe, and another document must not follow it.
 */
export function stdoutBegun(): boolean {
  return begun;
}

/** "ENOSPC: no space left on device, write" → "no space left on device (ENOSPC)". */
function describe(err: NodeJS.ErrnoException): string {
  const code = err.code ?? "EIO";
  const text = String(err.message ?? "")
    .replace(new RegExp(`^${code}:\\s*`), "")
    .replace(/,\s*write$/, "")
    .trim();
  return text && text !== code ? `${text} (${code})` : code;
}

/** EPIPE → quiet; any other error → recorded once and thrown as OutputFailedError. */
function onStdoutError(err: unknown, pending: number): void {
  const e = err as NodeJS.ErrnoException;
  if (e.code === "EPIPE") {
    stdoutGone = true;
    return;
  }
  failure ??= new OutputFailedError(`cannot write to stdout: ${describe(e)}; the output is incomplete`, {
    errno_code: e.code ?? null,
    bytes_written: written,
    bytes_pending: pending,
  });
  throw failure;
}

function encode(text: string): Uint8Array {
  return Buffer.from(text, "utf8");
}

/** Write `bytes` to stdout now (never blocking this thread on a stdout that may wait); a failure is recorded and thrown once. */
async function put(bytes: Uint8Array, mayWait: boolean): Promise<void> {
  if (stdoutGone || failure) return;
  if (widens(written, bytes.length)) widenPipe(1);
  try {
    if (mayWait) await writeAllWaiting(1, (twin ??= nonBlockingTwin(1)), bytes);
    else await writeAll(1, bytes);
    written += bytes.length;
  } catch (err) {
    onStdoutError(err, bytes.length);
  }
}

function putSync(bytes: Uint8Array): void {
  if (stdoutGone || failure) return;
  if (widens(written, bytes.length)) widenPipe(1);
  try {
    writeAllSync(1, bytes);
    written += bytes.length;
  } catch (err) {
    onStdoutError(err, bytes.length);
  }
}

/*
 * A stdout that may wait on its reader (a pipe, a socket, a terminal) is
 * written through an OrderedOutput (ordered-output.ts), in the order asked
 * for, by writeAllWaiting (fd-write.ts): what the pipe takes at once from
 * this thread, the rest by the runtime's thread pool, so a reader who
 * stopped reading never blocks this thread and SIGINT/SIGTERM
 * (interrupt.ts) still end the command. A file or /dev/null is written
 * from this thread, as it never waits.
 */
let waits: boolean | undefined;
let twin: number | null | undefined;
const stdoutMayWait = (): boolean => (waits ??= writesMayWait(1));
let queue: OrderedOutput | undefined;
const ordered = (): OrderedOutput => (queue ??= new OrderedOutput((bytes) => put(bytes, true), undefined, undefined, putNow));

/** What a stdout pipe takes of `bytes` at once, from this thread (0 with no non-blocking twin: all of it waits its turn). */
function putNow(bytes: Uint8Array): number {
  if (stdoutGone || failure) return bytes.length;
  const fd = (twin ??= nonBlockingTwin(1));
  if (fd === null) return 0;
  if (widens(written, bytes.length)) widenPipe(1);
  try {
    const n = writeAvailable(fd, bytes);
    written += n;
    return n;
  } catch (err) {
    onStdoutError(err, bytes.length);
    return bytes.length; // EPIPE: the reader is gone, nothing more goes out
  }
}

/**
 * Write to stdout and wait until every byte is handed to the OS. Commands
 * never call `process.exit()`: they set `process.exitCode` and return.
 * After a failure further output is dropped (the failure was raised once).
 */
export async function writeStdout(text: string): Promise<void> {
  if (text.length === 0 || stdoutGone || failure) return;
  await writeStdoutBytes(encode(text));
}

/** writeStdout of bytes already encoded (a streaming command's output buffer; a view is fine: it is written before this returns). */
export async function writeStdoutBytes(bytes: Uint8Array): Promise<void> {
  if (bytes.length === 0 || stdoutGone || failure) return;
  begun = true;
  if (stdoutMayWait()) await ordered().write(bytes);
  else await put(bytes, false);
  // a stdout that takes every write at once never makes the writer wait: a signal's handler gets its turn here
  if (stdoutTurns.due()) await nextTurn();
}

const stdoutTurns = new TurnPacer();

/** writeStdoutBytes without yielding to the event loop (to a stdout that may wait, the bytes are handed over, copied). */
export function writeStdoutBytesSync(bytes: Uint8Array): void {
  if (bytes.length === 0 || stdoutGone || failure) return;
  begun = true;
  if (stdoutMayWait()) ordered().hold(bytes);
  else putSync(bytes);
}

/** writeStdout without yielding to the event loop. */
export function writeStdoutSync(text: string): void {
  if (text.length === 0 || stdoutGone || failure) return;
  writeStdoutBytesSync(encode(text));
}

/** Wait until everything written to stdout so far is handed to the OS (a command's end). */
export async function flushStdout(): Promise<void> {
  await queue?.flush();
}

let abandoned = false;
/** How long stdout is given after a signal: the process must end within 2 s of one. */
const GRACE_AFTER_SIGNAL_MS = 1000;

/**
 * After SIGINT/SIGTERM, a command that answers the signal itself (a
 * follow, a watch, a run) still writes its last words; a reader who
 * stopped reading must not hold the process past the signal. If stdout
 * has not taken everything `ms` from now, it is given up: the output is
 * recorded as failed (exit 70) and nothing more is written to it.
 */
export function giveUpStdoutAfter(ms = GRACE_AFTER_SIGNAL_MS): void {
  stderrAfterSignal();
  setTimeout(() => {
    if (!queue?.busy()) return;
    failure ??= new OutputFailedError(`stdout's reader took nothing more in the ${ms / 1000} s after the signal; the output is incomplete`, {
      errno_code: null,
      bytes_written: written,
    });
    abandoned = true;
    queue.abandon();
  }, ms).unref();
}

/**
 * A document written at once from this thread, for an exit path (a
 * signal's handler) when nothing was written to stdout before: nothing is
 * held or under way that it could overtake. A pipe someone else filled
 * gets EXIT_PATIENCE_MS, then the document is given up (the exit code
 * still says what happened): the process must end within 2 s of a signal.
 */
export function writeStdoutBeforeExit(text: string): void {
  if (text.length === 0 || stdoutGone || failure) return;
  begun = true;
  const fd = stdoutMayWait() ? (twin ??= nonBlockingTwin(1)) : null;
  if (fd === null) return putSync(encode(text));
  const bytes = encode(text);
  try {
    writeAllSync(fd, bytes, EXIT_PATIENCE_MS);
    written += bytes.length;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ETIMEDOUT") onStdoutError(err, bytes.length);
  }
}

/** How long an exit path's document may wait for a full stdout pipe's reader. */
const EXIT_PATIENCE_MS = 500;

/*
 * stderr on a pipe is written as stdout is: what the pipe takes at once
 * goes out from this thread, the rest is held in order and written by the
 * thread pool (OrderedOutput), so a diagnostic to a reader who stopped
 * reading never blocks this thread and a signal still ends the command. A
 * command's end waits for what is held (flushStderr), as a blocking write
 * did. A terminal is written from this thread: its progress line and its
 * clearing must land where the output around them does.
 */
let stderrTwin: number | null | undefined;
let stderrWaits: boolean | undefined;
let stderrQueue: OrderedOutput | undefined;
/** How long stderr's reader may take nothing before a diagnostic is dropped: for ever, until a signal. */
let stderrPatienceMs = Infinity;

const stderrFd = (): number | null => (stderrTwin ??= nonBlockingTwin(2));

function heldStderr(): OrderedOutput {
  return (stderrQueue ??= new OrderedOutput(
    async (bytes) => {
      try {
        await writeAllWaiting(2, stderrFd(), bytes);
      } catch {
        /* stderr closed: diagnostics are lost, the result is not */
      }
    },
    undefined,
    () => openAnonymousFile("stderr"),
    (bytes) => {
      const fd = stderrFd();
      if (fd === null) return 0;
      try {
        return writeAvailable(fd, bytes);
      } catch {
        return bytes.length; // closed: nothing more goes out
      }
    },
  ));
}

/**
 * A signal arrived: from now on a stderr pipe whose reader stopped reading
 * (`2>&1 |` a reader that stalled) gets half a second per diagnostic, never
 * the process, which must end within 2 s; what was held for it is dropped.
 * Before a signal a diagnostic waits for the reader, as the output does
 * (`2>&1 | less` shows it in order).
 */
export function stderrAfterSignal(): void {
  stderrPatienceMs = 500;
  if (!stderrQueue?.busy()) return;
  stderrQueue.abandon();
  stderrGivenUp = true;
}

let stderrGivenUp = false;

/** Write to stderr, in order. A stderr that cannot be written is ignored: there is nowhere left to report it. */
export function writeStderr(text: string): void {
  if (text.length === 0) return;
  try {
    if (stderrPatienceMs !== Infinity) {
      // after a signal: at once, half a second at most (the process is about to end)
      const fd = stderrFd();
      if (fd !== null) writeAllSync(fd, encode(text), stderrPatienceMs);
      else writeAllSync(2, encode(text));
    } else if ((stderrWaits ??= writesMayWait(2) && stderrFd() !== null)) heldStderr().hold(encode(text));
    else writeAllSync(2, encode(text));
  } catch {
    /* stderr closed or full: diagnostics are lost, the result is not */
  }
}

/** Wait until every diagnostic written so far is handed to the OS (a command's end; a signal still ends the wait). */
export async function flushStderr(): Promise<void> {
  await stderrQueue?.flush();
}

/**
 * True once stdout or stderr was given up with a write(2) still waiting on
 * its reader: the runtime would wait for that write before exiting, so the
 * command's end exits the process itself.
 */
export function outputAbandoned(): boolean {
  return abandoned || stderrGivenUp;
}

/**
 * BERNSTEIN_VERIFY_STATS=1: one `verify stats: …` line on stderr saying how
 * a verify's rows were taken (by the WebAssembly kernels or not). A
 * diagnostic for benchmarks and the e2e tests; never part of a verdict.
 */
export async function writeVerifyStats(text: string): Promise<void> {
  if (process.env.BERNSTEIN_VERIFY_STATS === "1") writeStderr(`verify stats: ${text}\n`);
}

/** Print lines of human output on stdout. */
export async function printLines(...lines: string[]): Promise<void> {
  await writeStdout(lines.map((l) => l + "\n").join(""));
}

/**
 * Print exactly one JSON document on stdout (indent 2, raw UTF-8, trailing
 * newline). Accepts plain values and parsed py-json values (numbers keep
 * their recorded spelling).
 */
export async function printJson(value: unknown): Promise<void> {
  await writeStdout(renderJson(value, 2) + "\n");
}
