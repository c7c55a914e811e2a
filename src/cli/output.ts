import { renderJson } from "../render/json.ts";

/**
 * Write to stdout and wait until the bytes are handed to the OS. Commands
 * never call `process.exit()`: they set `process.exitCode` and return, so
 * piped stdout is never truncated.
 */
export async function writeStdout(text: string): Promise<void> {
  if (text.length === 0) return;
  const flushed = process.stdout.write(text);
  if (!flushed) {
    await new Promise<void>((resolve) => process.stdout.once("drain", () => resolve()));
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
