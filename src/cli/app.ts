import { renderUsage, runCommand, type CommandDef } from "citty";
import { UsageError } from "../errors/index.ts";
import { reportError, wantsJson, type CommandData, type HelpHost } from "./command.ts";
import { flushStderr, printJson, writeStdout } from "./output.ts";
import { VERSION, versionDocument } from "../version.ts";
import { isTerminal } from "../render/terminal.ts";
import { stripAnsi } from "../render/ansi.ts";
import { rootCommand } from "./registry.ts";
import { closest } from "./suggest.ts";
import { helpWidth, wrapHelp } from "./help-wrap.ts";

type AnyCommand = CommandDef<any>;

async function resolve<T>(v: T | (() => T | Promise<T>) | Promise<T>): Promise<T> {
  return typeof v === "function" ? await (v as () => T | Promise<T>)() : await v;
}

async function loadCommand(v: unknown): Promise<AnyCommand> {
  const mod = await resolve(v as AnyCommand);
  return ((mod as { default?: AnyCommand }).default ?? mod) as AnyCommand;
}

/**
 * Walk the command tree along the positional words of argv. Unknown
 * commands are usage errors naming the closest command.
 */
async function resolveChain(argv: string[]): Promise<{ cmd: AnyCommand; parent?: AnyCommand; rest: string[]; path: string[] }> {
  let cmd: AnyCommand = rootCommand;
  let parent: AnyCommand | undefined;
  let i = 0;
  const path: string[] = [];
  for (;;) {
    const subs = await resolve(cmd.subCommands);
    if (!subs || Object.keys(subs).length === 0) break;
    while (i < argv.length && argv[i]!.startsWith("-")) i++;
    const word = argv[i];
    if (word === undefined) break;
    if (!(word in subs)) {
      const hint = closest(word, Object.keys(subs));
      const where = path.length ? `bernstein ${path.join(" ")}` : "bernstein";
      throw new UsageError(`unknown command '${word}' for '${where}'${hint ? ` (did you mean '${hint}'?)` : ""}`);
    }
    parent = cmd;
    cmd = await loadCommand(subs[word]);
    path.push(word);
    argv = [...argv.slice(0, i), ...argv.slice(i + 1)];
  }
  return { cmd, parent, rest: argv, path };
}

/**
 * The help page for `path` (+ the words after it). citty names a command
 * after its direct parent only, so nested commands get their full path
 * ("bernstein journal verify"); a command with forms of its own (`replay
 * diff`, `replay RUN_ID`) renders the page of the form its first word names.
 */
async function helpPage(cmd: AnyCommand, parent: AnyCommand | undefined, path: string[], rest: string[]): Promise<string> {
  const form = (cmd as HelpHost).helpFor?.(rest.filter((a) => !a.startsWith("-")));
  if (form) return renderUsage(await withoutWordAliases(form), { meta: { name: ["bernstein", ...path].join(" "), version: VERSION } });
  const parentMeta = parent ? await resolve(parent.meta) : undefined;
  const named = parent ? { ...parent, meta: { ...parentMeta, name: ["bernstein", ...path.slice(0, -1)].join(" ") } } : undefined;
  return renderUsage(await withoutWordAliases((cmd as HelpHost).helpOverview ?? cmd), named);
}

/** Flags that may stand beside `--version` (main.ts answers a lone `--version` before loading this module). */
const VERSION_FLAGS = new Set(["--version", "-v"]);
const GLOBAL_FLAGS = new Set(["--as-json", "--json", "--no-color", "--debug"]);
/** What a command group (no command of its own) accepts: help, the version at the root, and the global flags. */
const GROUP_FLAGS = ["--help", "-h", ...VERSION_FLAGS, ...GLOBAL_FLAGS];

function asksVersion(argv: string[]): boolean {
  return argv.some((a) => VERSION_FLAGS.has(a)) && argv.every((a) => VERSION_FLAGS.has(a) || GLOBAL_FLAGS.has(a));
}

export async function main(argv: string[]): Promise<void> {
  const json = wantsJson(argv);
  // `bernstein help [COMMAND...]` is `bernstein [COMMAND...] --help`.
  if (argv[0] === "help") argv = [...argv.slice(1), "--help"];
  try {
    if (asksVersion(argv)) {
      if (json) await printJson(versionDocument());
      else await writeStdout(VERSION + "\n");
      process.exitCode = 0;
      return;
    }
    const helpIdx = argv.findIndex((a) => a === "--help" || a === "-h");
    const before = helpIdx >= 0 ? argv.slice(0, helpIdx) : argv;
    const { cmd, parent, rest, path } = await resolveChain(before);
    if (helpIdx >= 0 || argv.length === 0) {
      await writeStdout(fitted(stripAnsiIfNeeded(await helpPage(cmd, parent, path, rest))) + "\n");
      process.exitCode = 0;
      return;
    }
    const subs = await resolve(cmd.subCommands);
    if (subs && Object.keys(subs).length > 0 && !cmd.run) {
      const where = path.length ? `bernstein ${path.join(" ")}` : "bernstein";
      const unknown = rest.find((a) => a.startsWith("-") && !GROUP_FLAGS.includes(a.split("=")[0]!));
      if (unknown !== undefined) {
        const name = unknown.split("=")[0]!;
        const hint = closest(name, GROUP_FLAGS);
        throw new UsageError(`unknown option '${name}' for '${where}'${hint ? ` (did you mean '${hint}'?)` : ""}`);
      }
      throw new UsageError(`missing command: one of ${Object.keys(subs).join(", ")}`);
    }
    await runCommand(cmd, { rawArgs: rest, data: { path, root: rootCommand } satisfies CommandData });
  } catch (err) {
    // citty's own argument errors (missing positional, bad enum) are usage errors.
    const e = err instanceof Error && err.name === "CLIError" ? new UsageError(stripAnsi(err.message)) : err;
    process.exitCode = await reportError(e, json, argv.includes("--debug"));
  }
  // a diagnostic held for a stderr that may wait (output.ts) goes out before the process ends
  await flushStderr().catch(() => {});
}

/**
 * citty prints every alias with one dash (`-json, --as-json`), but a word
 * alias is spelled with two (`--json`) and `-json` is refused as unknown:
 * help lists only the one-letter aliases beside the flag; word aliases are
 * named in the description ("also --json").
 */
async function withoutWordAliases(cmd: AnyCommand): Promise<AnyCommand> {
  const args = await resolve(cmd.args);
  if (!args) return cmd;
  const shown: Record<string, unknown> = {};
  for (const [name, def] of Object.entries(args)) {
    const alias = (def as { alias?: string | string[] }).alias;
    const list = alias === undefined ? [] : Array.isArray(alias) ? alias : [alias];
    shown[name] = { ...(def as object), alias: list.filter((a) => a.length === 1) };
  }
  return { ...cmd, args: shown as AnyCommand["args"] };
}

/** The page as it is when every line fits the width; otherwise wrapped (without colour, whose codes would be counted as columns). */
function fitted(page: string): string {
  const width = helpWidth();
  const plain = stripAnsi(page);
  return plain.split("\n").some((l) => [...l.trimEnd()].length > width) ? wrapHelp(plain, width) : page;
}

function stripAnsiIfNeeded(s: string): string {
  return isTerminal(1) && !process.env.NO_COLOR ? s : stripAnsi(s);
}
