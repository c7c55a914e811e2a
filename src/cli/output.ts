import { renderJson } from "../render/json.ts";

/**
 * A reader that goes away (`bernstein replay X | head`) is not an error of
 * ours: on EPIPE further output is dropped quietly instead of crashing with
 * a stack trace, and streaming commands can stop early (`stdoutClosed()`).
 */
let stdoutGone = false;
const drainWaiters = new Set<() => void>();
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code !== "EPIPE") throw err;
  stdoutGone = true;
  for (const wake of drainWaiters) wake();
  drainWaiters.clear();
});

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
  const flushed = process.stdout.write(text);
  if (!flushed && !stdoutGone) {
    await new Promise<void>((resolve) => {
      const wake = (): void => {
        drainWaiters.delete(wake);
        resolve();
      };
      drainWaiters.add(wake);
      process.stdout.once("drain", wake);
    });
  }
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
