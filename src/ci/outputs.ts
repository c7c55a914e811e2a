import type { CiOutcome } from "./outcome.ts";
import { worstStatus } from "./outcome.ts";
import { stopToken } from "./annotations.ts";

/**
 * The `$GITHUB_OUTPUT` lines of a verify: `verdict` (verified, failed or
 * error: the worst over the inputs), `head` and `count` (one line per
 * input, in input order; empty for an input that could not be read). A
 * multi-line value uses the heredoc form `name<<DELIM`, with a random
 * delimiter that the value cannot contain.
 */
export function githubOutputText(outcomes: readonly CiOutcome[]): string {
  const values: [string, string][] = [
    ["verdict", worstStatus(outcomes)],
    ["head", outcomes.map((o) => o.head ?? "").join("\n")],
    ["count", outcomes.map((o) => (o.count === null ? "" : String(o.count))).join("\n")],
  ];
  return values.map(([name, value]) => outputLine(name, value)).join("");
}

/** One output: `name=value\n`, or the heredoc form when the value has a line break. */
export function outputLine(name: string, value: string): string {
  if (!/[\r\n]/.test(value)) return `${name}=${value}\n`;
  let delim = `ghadelimiter_${stopToken()}`;
  while (value.includes(delim)) delim = `ghadelimiter_${stopToken()}`;
  return `${name}<<${delim}\n${value}\n${delim}\n`;
}
