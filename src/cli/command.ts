import { defineCommand, type ArgsDef, type CommandDef, type CommandMeta, type ParsedArgs } from "citty";
import { BernsteinError, ExitCode, UsageError, errorMessage } from "../errors/index.ts";
import { setColorEnabled, shouldUseColor } from "../render/ansi.ts";
import { log } from "./log.ts";
import { flushStderr, flushStdout, outputAbandoned, outputFailure, printJson, writeStderr } from "./output.ts";
import { closest } from "./suggest.ts";
import { commonArgs } from "./args.ts";
import type { CommandDocs } from "../json-fields.ts";

export { commonArgs };

export interface CliContext<T extends ArgsDef> {
  args: ParsedArgs<T & typeof commonArgs>;
  /** `--as-json` / `--json` given. */
  json: boolean;
  rawArgs: string[];
  /** What `main` handed the command (absent when it is run on its own, as in tests). */
  data?: CommandData;
}

export interface CliCommandSpec<T extends ArgsDef> {
  meta: CommandMeta;
  args?: T;
  /**
   * Words that, as the first positional, name a verb of this command
   * (`replay diff`): errors then name `bernstein replay diff`.
   */
  verbs?: readonly string[];
  /** Its `--as-json` documents, exit meanings and examples, for docs/cli/ (scripts/gen-cli-docs.ts). */
  docs?: CommandDocs;
  /**
   * Runs the command. Return the exit code (0 when omitted). Throw a
   * `BernsteinError` for expected failures; the wrapper renders it as one
   * line on stderr or, under `--as-json`, one JSON document on stdout.
   */
  run(ctx: CliContext<T>): Promise<number | void> | number | void;
}

/** Names (and aliases) of the flags a command declares, for strict checking. */
function knownFlags(args: ArgsDef): { names: Set<string>; booleans: Set<string> } {
  const names = new Set<string>();
  const booleans = new Set<string>();
  for (const [name, def] of Object.entries(args)) {
    if (def.type === "positional") continue;
    const alias = (def as { alias?: string | string[] }).alias;
    const aliases = alias === undefined ? [] : Array.isArray(alias) ? alias : [alias];
    for (const n of [name, ...aliases]) {
      names.add(n);
      if (def.type === "boolean") booleans.add(n);
    }
  }
  return { names, booleans };
}

/**
 * citty accepts any flag silently; a verification tool must not (a typo in
 * `--seal` would otherwise verify without the seal and say "ok"). Unknown
 * flags and string flags without a value are usage errors (exit 2).
 */
export function checkFlags(rawArgs: string[], args: ArgsDef, commandName: string): void {
  const { names, booleans } = knownFlags(args);
  for (let i = 0; i < rawArgs.length; i++) {
    const tok = rawArgs[i]!;
    if (tok === "--") break;
    if (!tok.startsWith("-") || tok === "-" || /^-\d/.test(tok)) continue;
    const body = tok.replace(/^--?/, "");
    const eq = body.indexOf("=");
    const name = eq >= 0 ? body.slice(0, eq) : body;
    const isNegated = name.startsWith("no-") && booleans.has(name.slice(3));
    // One dash is a one-letter flag: `-json` is not `--json` (the parser would read it as -j -s -o -n).
    const singleDashWord = !tok.startsWith("--") && name.length !== 1;
    if (singleDashWord || (!names.has(name) && !isNegated)) {
      const hint = closest(name, [...names]);
      throw new UsageError(
        `unknown option '${tok.split("=")[0]}' for '${commandName}'${hint ? ` (did you mean '--${hint}'?)` : ""}`,
      );
    }
    if (!booleans.has(name) && !isNegated && eq < 0) {
      const next = rawArgs[i + 1];
      if (next === undefined || (next.startsWith("--") && next.length > 2)) {
        throw new UsageError(`option '--${name}' needs a value`);
      }
      i++;
    }
  }
}

/** What `main` hands every command: the words that selected it (`["journal", "verify"]`). */
export interface CommandData {
  path: string[];
  /** The command tree (for `completion`, which describes it; importing the registry from a command would be a cycle). */
  root?: CommandDef<any>;
}

/** A command whose help page depends on its first words (`replay diff --help`). */
export interface HelpHost {
  /** The page for these positional words, or undefined for the command's own page. */
  helpFor?: (words: string[]) => CommandDef<any> | undefined;
  /** The command's own page, when it differs from what its args declare. */
  helpOverview?: CommandDef<any>;
}

/** `bernstein <path…> [verb]`, as the user typed it, for error messages. */
function commandPath(data: unknown, fallback: string | undefined, verbs: readonly string[] | undefined, first: unknown): string {
  const path = (data as CommandData | undefined)?.path ?? (fallback ? [fallback] : []);
  const verb = verbs && typeof first === "string" && verbs.includes(first) ? [first] : [];
  return ["bernstein", ...path, ...verb].join(" ");
}

export function wantsJson(rawArgs: string[]): boolean {
  for (const a of rawArgs) {
    if (a === "--") break;
    if (a === "--as-json" || a === "--json") return true;
  }
  return false;
}

/** Render an error per the output contract and return its exit code. */
export async function reportError(err: unknown, json: boolean, debug: boolean): Promise<number> {
  // stdout failed (ENOSPC, EIO, EBADF): whatever the error in hand, the
  // caller did not get the result. Nothing more goes to stdout.
  const failed = outputFailure();
  if (failed !== null) {
    log.error(failed.message);
    return failed.exitCode;
  }
  if (err instanceof BernsteinError) {
    if (json) {
      await printJson({ ok: false, error: err.code, detail: err.message, ...err.facts });
    } else {
      log.error(err.message);
    }
    return err.exitCode;
  }
  const message = errorMessage(err).split("\n")[0];
  if (json) {
    await printJson({ ok: false, error: "internal_error", detail: message });
  }
  if (debug && err instanceof Error && err.stack) {
    writeStderr(err.stack + "\n");
  } else {
    log.error(`internal error: ${message} (rerun with --debug for details)`);
  }
  return ExitCode.INTERNAL;
}

/** A command definition that carries its docs (`CliCommandSpec.docs`) for the generator. */
export interface DocsHost {
  docs?: CommandDocs;
  /** A command whose forms are not subcommands (`replay`): each form's docs, by verb or target name (`RUN_ID`). */
  formDocs?: (form: string) => Promise<CommandDocs | undefined>;
}

export function defineCliCommand<T extends ArgsDef = {}>(spec: CliCommandSpec<T>): CommandDef<T & typeof commonArgs> {
  const args = { ...(spec.args ?? ({} as T)), ...commonArgs } as T & typeof commonArgs;
  const command = defineCommand({
    meta: spec.meta,
    args,
    async run(ctx) {
      const json = wantsJson(ctx.rawArgs);
      const debug = ctx.rawArgs.includes("--debug");
      setColorEnabled(!json && shouldUseColor(ctx.rawArgs.includes("--no-color")));
      try {
        checkFlags(ctx.rawArgs, args, commandPath(ctx.data, spec.meta.name, spec.verbs, ctx.args._[0]));
        const code = await spec.run({ args: ctx.args as CliContext<T>["args"], json, rawArgs: ctx.rawArgs, data: ctx.data as CommandData | undefined });
        process.exitCode = code ?? 0;
      } catch (err) {
        process.exitCode = await reportError(err, json, debug);
      }
      await flushStdout().catch(() => {});
      // A write to stdout failed but the command went on (it caught the error): still exit 70.
      if (outputFailure() !== null && process.exitCode !== outputFailure()!.exitCode) process.exitCode = await reportError(null, json, debug);
      await flushStderr().catch(() => {});
      // a write(2) given up on still waits on the reader, and the runtime would wait for it
      if (outputAbandoned()) process.exit(process.exitCode);
    },
  }) as CommandDef<T & typeof commonArgs> & DocsHost;
  if (spec.docs) command.docs = spec.docs;
  return command;
}
