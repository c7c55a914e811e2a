import { createConsola, type ConsolaInstance, type ConsolaReporter, type LogObject } from "consola/core";
import { isTerminal } from "../render/terminal.ts";
import { writeStderr } from "./output.ts";

/**
 * Human diagnostics go to stderr, always; stdout is reserved for the
 * command's result (a table, prose or exactly one JSON document).
 *
 * consola's core (`consola/core`: `createConsola` without its default
 * reporters and without the environment probe of the full package, which
 * created `process.stdout` and so made stdout non-blocking; see
 * fd-write.ts) with our own reporter, which writes through fd-write.ts, and
 * our own level, decided only by `--debug` and BERNSTEIN_LOG_LEVEL (never
 * by NODE_ENV, TEST or CI). Throttling is off: every line is written at
 * once, none is collapsed on a timer. The line format is the one consola
 * printed on a plain terminal: `ℹ info`, `✔ success`, `⚙ debug`, and the
 * ` WARN ` / ` ERROR ` badges between blank lines.
 */

export const LOG_LEVELS = { silent: -1, error: 0, warn: 1, info: 3, debug: 4 } as const;
export type LogLevelName = keyof typeof LOG_LEVELS;

type Kind = "error" | "warn" | "info" | "success" | "debug";
const LEVEL_OF: Record<Kind, number> = { error: 0, warn: 1, info: 3, success: 3, debug: 4 };
const ICON: Partial<Record<Kind, string>> = { info: "ℹ", success: "✔", debug: "⚙" };
/** SGR colour of each kind's icon or badge (badges: background). */
const COLOUR: Record<Kind, number> = { error: 31, warn: 33, info: 36, success: 32, debug: 90 };

interface Config {
  level: number;
  colour: boolean;
  /** A warning about the configuration itself, printed once. */
  note: string | null;
}

/** argv before `--`. */
function flagGiven(name: string): boolean {
  for (const a of process.argv.slice(2)) {
    if (a === "--") return false;
    if (a === name) return true;
  }
  return false;
}

/** The level: `--debug` → debug; else BERNSTEIN_LOG_LEVEL (a name); else info. */
export function resolveLevel(debugFlag: boolean, env: string | undefined): { level: number; note: string | null } {
  if (debugFlag) return { level: LOG_LEVELS.debug, note: null };
  const raw = env?.trim().toLowerCase();
  if (raw === undefined || raw === "") return { level: LOG_LEVELS.info, note: null };
  if (Object.hasOwn(LOG_LEVELS, raw)) return { level: LOG_LEVELS[raw as LogLevelName], note: null };
  const names = Object.keys(LOG_LEVELS).join(", ");
  return { level: LOG_LEVELS.info, note: `BERNSTEIN_LOG_LEVEL=${JSON.stringify(env)} is not one of ${names}; using info` };
}

function configure(): Config {
  const { level, note } = resolveLevel(flagGiven("--debug"), process.env.BERNSTEIN_LOG_LEVEL);
  const noColour = flagGiven("--no-color") || (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== "");
  return { level, colour: !noColour && isTerminal(2), note };
}

/**
 * node:util's formatter, loaded when a line is first formatted: importing
 * it at start-up loads its inspect module, a millisecond or two of every
 * command's start in the compiled binary, most of which log nothing.
 */
let formatWithOptions: typeof import("node:util").formatWithOptions | null = null;

/** Never a stack trace: an Error argument is shown by its message (stacks are `--debug`'s, in command.ts). */
function text(args: unknown[]): string {
  const plain = args.map((a) => (a instanceof Error ? a.message : a));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  formatWithOptions ??= (require("node:util") as typeof import("node:util")).formatWithOptions;
  return formatWithOptions({ colors: false, depth: 4 }, ...plain);
}

/** One diagnostic as it appears on stderr. */
export function formatLine(kind: Kind, message: string, colour: boolean): string {
  const sgr = (code: number, s: string) => (colour ? `\x1b[${code}m${s}\x1b[0m` : s);
  if (kind === "error" || kind === "warn") {
    const badge = colour ? `\x1b[${COLOUR[kind] + 10}m\x1b[30m ${kind.toUpperCase()} \x1b[0m` : ` ${kind.toUpperCase()} `;
    return `\n${badge} ${message}\n\n`;
  }
  return `${sgr(COLOUR[kind], ICON[kind]!)} ${message}\n`;
}

/** Writes each log object as formatLine spells it, through fd-write (never process.stderr). */
function reporter(colour: boolean): ConsolaReporter {
  return {
    log(obj: LogObject) {
      const kind = (Object.hasOwn(LEVEL_OF, obj.type) ? obj.type : "info") as Kind;
      writeStderr(formatLine(kind, text(obj.args), colour));
    },
  };
}

let logger: ConsolaInstance | null = null;

function instance(): ConsolaInstance {
  if (logger !== null) return logger;
  const c = configure();
  logger = createConsola({ level: c.level, throttle: 0, reporters: [reporter(c.colour)] });
  if (c.note !== null) logger.warn(c.note);
  return logger;
}

type LogFn = (message: unknown, ...args: unknown[]) => void;

export const log: { info: LogFn; warn: LogFn; error: LogFn; success: LogFn; debug: LogFn } = {
  info: (m, ...a) => void instance().info(m, ...a),
  warn: (m, ...a) => void instance().warn(m, ...a),
  error: (m, ...a) => void instance().error(m, ...a),
  success: (m, ...a) => void instance().success(m, ...a),
  debug: (m, ...a) => void instance().debug(m, ...a),
};
