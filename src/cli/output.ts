import { BernsteinError, ExitCode } from "../errors/index.ts";
import { renderJson } from "../render/json.ts";
import { writeAll, writeAllSync } from "./fd-write.ts";
import { widenPipe, widens } from "./pipe-buffer.ts";
import { nextTurn, TurnPacer } from "../fsutil/turn.ts";

/**
 * stdout and stderr of every command, written by our own loop over fd 1
 * and fd 2 (fd-write.ts): every byte exactly once, whatever the reader's
 * speed and whether or not the fd is non-blocking. `process.stdout` is not
 * used: its Node stream costs ~20 ms of start-up on every command.
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
  if (widens(written, bytes.length)) widenPipe(1);
  try {
    await writeAll(1, bytes);
    written += bytes.length;
  } catch (err) {
    onStdoutError(err, bytes.length);
  }
  // a stdout that takes every write at once never makes the writer wait: a signal's handler gets its turn here
  if (stdoutTurns.due()) await nextTurn();
}

const stdoutTurns = new TurnPacer();

/** writeStdoutBytes without yielding to the event loop. */
export function writeStdoutBytesSync(bytes: Uint8Array): void {
  if (bytes.length === 0 || stdoutGone || failure) return;
  begun = true;
  if (widens(written, bytes.length)) widenPipe(1);
  try {
    writeAllSync(1, bytes);
    written += bytes.length;
  } catch (err) {
    onStdoutError(err, bytes.length);
  }
}

/** writeStdout without yielding to the event loop (signal handlers, exit paths). */
export function writeStdoutSync(text: string): void {
  if (text.length === 0 || stdoutGone || failure) return;
  writeStdoutBytesSync(encode(text));
}

/**
 * Write to stderr, synchronously and completely. A stderr that cannot be
 * written is ignored: there is nowhere left to report it.
 */
export function writeStderr(text: string): void {
  if (text.length === 0) return;
  try {
    writeAllSync(2, encode(text));
  } catch {
    /* stderr closed or full: diagnostics are lost, the result is not */
  }
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
