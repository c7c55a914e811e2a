import { InvariantViolation } from "./types.ts";

/**
 * A crash signature groups failures that are the same bug: the invariant
 * (or error class), the message with its variable parts (numbers, hashes,
 * quoted text, paths) blanked, and the innermost stack frame inside our
 * sources. Distinct signatures are what "distinct crashes" counts.
 */
export function crashSignature(err: unknown): string {
  if (err instanceof InvariantViolation) return `invariant:${err.invariant}`;
  if (!(err instanceof Error)) return `thrown:${typeof err}`;
  const msg = normalizeMessage(err.message);
  return `${err.name}:${msg}@${topFrame(err.stack ?? "")}`;
}

export function normalizeMessage(msg: string): string {
  return msg
    .split("\n")[0]!
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, "<str>")
    .replace(/\/[\w.\-/]+/g, "<path>")
    .replace(/[0-9a-f]{16,}/gi, "<hex>")
    .replace(/\d+/g, "N")
    .slice(0, 160);
}

function topFrame(stack: string): string {
  for (const line of stack.split("\n")) {
    const m = /\/src\/([\w/.-]+\.ts):\d+/.exec(line);
    if (m && !m[1]!.startsWith("fuzz/")) return m[1]!;
  }
  return "?";
}
