import { UsageError } from "../../../errors/index.ts";
import { replayArgs } from "./args.ts";
import { applyStorageFlags, STORAGE_FLAG_NAMES } from "../../storage-flags.ts";
import type { ReplayContext } from "./context.ts";

/**
 * `replay` declares the union of its verbs' flags; a verb that is given a
 * flag it does not use refuses it by name rather than ignoring it (a
 * `--seal` silently ignored would make a check look stronger than it was).
 */
type ReplayFlag = Exclude<keyof typeof replayArgs, "sdd-dir">;

/** Booleans that are only ever given negated (`--no-default-ignores`): false means given. */
const NEGATED_ONLY: ReadonlySet<string> = new Set(["default-ignores"]);

function isGiven(name: string, value: unknown): boolean {
  return value !== undefined && (value !== false || NEGATED_ONLY.has(name));
}

/** Replay flags present on the command line (`--sdd-dir` is always allowed). */
export function givenFlags(ctx: ReplayContext): ReplayFlag[] {
  const out: ReplayFlag[] = [];
  for (const name of Object.keys(replayArgs) as (keyof typeof replayArgs)[]) {
    if (name === "sdd-dir") continue;
    if (isGiven(name, (ctx.args as Record<string, unknown>)[name])) out.push(name);
  }
  return out;
}

export function refuseFlags(ctx: ReplayContext, allowed: readonly ReplayFlag[], where: string): void {
  const bad = givenFlags(ctx).filter((f) => !allowed.includes(f));
  if (bad.length === 0) return;
  const flags = bad.map((f) => (NEGATED_ONLY.has(f) ? `--no-${f}` : `--${f}`));
  throw new UsageError(`${flags.join(", ")} ${bad.length === 1 ? "does" : "do"} not apply to '${where}'`, "flag_not_applicable", { flags });
}

/** A non-negative integer flag value (Python `int()` spelling: sign, `_` between digits). */
export function parseCount(value: string, flag: string): number {
  const t = value.trim().replace(/(?<=\d)_(?=\d)/g, "");
  if (!/^\+?\d+$/.test(t)) throw new UsageError(`--${flag} needs a non-negative integer, got ${JSON.stringify(value)}`);
  const n = Number(t);
  if (!Number.isSafeInteger(n)) throw new UsageError(`--${flag} is too large: ${value}`);
  return n;
}

/** `--limit N`, or undefined when not given. */
export function limitOf(ctx: ReplayContext): number | undefined {
  const raw = ctx.args.limit;
  return raw === undefined ? undefined : parseCount(raw, "limit");
}

/** Exactly `n` positionals after the verb, or a usage error showing `usage`. */
export function expectPositionals(ctx: ReplayContext, n: number, usage: string): string[] {
  if (ctx.positionals.length !== n) throw new UsageError(`usage: ${usage}`);
  return ctx.positionals;
}

/** Replay flags that only some verbs accept; the rest are refused by name. */
const VERB_FLAGS = [
  "limit",
  "with-previous",
  "html",
  "lanes",
  "from",
  "to",
  "max-events",
  "max-bars",
  "follow",
  "verify",
  "from-step",
  "seal",
  "threads",
  "links-only",
  "head",
  "public-key",
  "sign",
  "redact",
  "force",
  "model",
  "extra-context",
  "timeout",
  "format",
  "junit",
  "stdin-name",
  "ignore",
  "default-ignores",
  "fork-from",
  "jump-to-failure",
  "full",
  "allow-empty",
  ...STORAGE_FLAG_NAMES,
] as const;

/**
 * `replay` declares the union of its verbs' flags; a flag given to a verb it
 * does not apply to is an error (exit 2, `flag_not_applicable`), never
 * silently ignored (a misplaced `--head` must not "verify" without a head).
 */
export function refuseInapplicableFlags(ctx: ReplayContext, verb: string, allowed: readonly string[]): void {
  const args = ctx.args as Record<string, unknown>;
  // The verbs that read or write s3:// take the endpoint and region flags.
  if (allowed.includes("s3-endpoint")) applyStorageFlags(ctx.args);
  for (const f of VERB_FLAGS) {
    if (allowed.includes(f)) continue;
    if (isGiven(f, args[f])) {
      const shown = f === "default-ignores" ? "no-default-ignores" : f;
      throw new UsageError(`--${shown} does not apply to 'bernstein replay ${verb}'`, "flag_not_applicable");
    }
  }
}

/** Python-style booleans in prose, as the reference prints them. */
export const pyBool = (b: boolean): string => (b ? "True" : "False");
