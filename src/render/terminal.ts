import { fstatSync } from "node:fs";

/**
 * Terminal checks that cost nothing when the answer is "no".
 *
 * `process.stdout.isTTY` builds Node's stdout stream, and `node:tty` loads
 * the stream machinery: each is milliseconds of start-up in the compiled
 * binary, paid by every command even when its output goes to a pipe. A
 * terminal is always a character device, so an fstat answers "no" for pipes
 * and files; only character devices (a terminal, or /dev/null) take the
 * real `isatty` check.
 */
export function isTerminal(fd: 1 | 2): boolean {
  try {
    if (!fstatSync(fd).isCharacterDevice()) return false;
  } catch {
    return false;
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require("node:tty") as typeof import("node:tty")).isatty(fd);
}

/** Columns of the terminal on stdout, or undefined when stdout is not one. */
export function terminalColumns(): number | undefined {
  return isTerminal(1) ? process.stdout.columns : undefined;
}
