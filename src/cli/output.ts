import { renderJson } from "../render/json.ts";

/**
 * stdout of every command. Written with `Bun.write(Bun.stdout, …)`, which
 * writes everything (partial writes and a slow reader included) before its
 * promise settles; `process.stdout` would cost ~20 ms of start-up for its
 * Node stream, on every command.
 *
 * A reader that goes away (`bernstein replay X | head`) is not an error of
 * ours: on EPIPE further output is dropped quietly instead of crashing with
 * a stack trace, and streaming commands can stop early (`stdoutClosed()`).
 */
let stdoutGone = false;

/** True once the reader of stdout has gone away (EPIPE). */
export function stdoutClosed(): boolean {
  return stdoutGone;
}

/**
 * Write to stdout and wait until the bytes are handed to the OS. Commands
 * never call `process.exit()`: they set `process.exitCode` and return, so
 * piped stdout is never truncated.
 */
export async function writeStdout(text: string): Promise<void> {
  if (text.length === 0 || stdoutGone) return;
  try {
    await Bun.write(Bun.stdout, text);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPIPE") throw err;
    stdoutGone = true;
  }
}

/**
 * BERNSTEIN_VERIFY_STATS=1: one `verify stats: …` line on stderr saying how
 * a verify's rows were taken (by the WebAssembly kernels or not). A
 * diagnostic for benchmarks and the e2e tests; never part of a verdict.
 */
export async function writeVerifyStats(text: string): Promise<void> {
  if (process.env.BERNSTEIN_VERIFY_STATS === "1") await Bun.write(Bun.stderr, `verify stats: ${text}\n`);
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
