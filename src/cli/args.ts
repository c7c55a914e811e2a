import type { ArgsDef } from "citty";

/**
 * Flags shared by several commands, declared once (nuxt/cli's `_shared.ts`
 * style): a command spreads the group it takes into its `args`. Pure
 * declarations, so importing this loads nothing else. The verify flags live
 * beside their parsers: `ciArgs` (cli/ci-flags.ts), `keyArgs`/`signArgs`
 * (cli/tlog-flags.ts).
 */

/** Flags every command accepts (cli/command.ts adds them). */
export const commonArgs = {
  "as-json": { type: "boolean", alias: ["json"], description: "Print exactly one JSON document on stdout (also --json)" },
  "no-color": { type: "boolean", description: "Never colour output (also: NO_COLOR)" },
  debug: { type: "boolean", description: "Print stack traces of unexpected errors" },
} as const satisfies ArgsDef;

/** RUN_ID of the commands that address one run under `<sdd-dir>/runs`. */
export const runIdArgs = {
  run_id: { type: "positional", required: true, description: "Run id under <sdd-dir>/runs" },
} as const satisfies ArgsDef;

/** The same, optional to citty: the `journal` commands say themselves what is missing (usage, exit 2). */
export const optionalRunIdArgs = {
  run_id: { ...runIdArgs.run_id, required: false },
} as const satisfies ArgsDef;

/** `--sdd-dir` of the session, server and replay commands (default `.sdd`). */
export const sddDirArgs = {
  "sdd-dir": { type: "string", default: ".sdd", description: "State directory" },
} as const satisfies ArgsDef;

/** `--sdd-dir` of the `journal` commands, whose targets are run ids under `<sdd-dir>/runs` (unset: `.sdd`). */
export const runsDirArgs = {
  "sdd-dir": { type: "string", description: "State directory holding runs/ (default .sdd)" },
} as const satisfies ArgsDef;

/**
 * `--allow-empty` of every verb that reads a journal: an empty input (0 bytes
 * or blank lines only) is `input_empty` (exit 3) unless it is given; with it
 * the verdict on an empty journal is the old one (ok, 0 events).
 */
export const allowEmptyArgs = {
  "allow-empty": { type: "boolean", description: "Accept an empty journal (0 bytes or blank lines only) as 0 events instead of refusing it (input_empty)" },
} as const satisfies ArgsDef;
