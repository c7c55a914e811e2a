import type { ArgsDef, CommandDef } from "citty";
import { commonArgs } from "../../command.ts";
import { replayArgs } from "./args.ts";
import { STORAGE_FLAG_NAMES } from "../../storage-flags.ts";

/**
 * What each form of `bernstein replay` takes, for help pages, completions and
 * the "unknown target" message. `replay` parses as one command (the Python
 * CLI's shape: the first word selects the verb), so these are descriptions,
 * not dispatch: the handlers still refuse flags that do not apply to them.
 */
type ReplayFlag = Exclude<keyof typeof replayArgs, "sdd-dir">;

export interface ReplayForm {
  description: string;
  /** Positional words after the verb (or the target itself for the target forms). */
  positionals: { name: string; description: string; required: boolean }[];
  /** Flags of this form, besides `--sdd-dir` and the common flags. */
  flags: ReplayFlag[];
  /** Flag descriptions worded for this form (the shared ones name the form they apply to). */
  flagText?: Partial<Record<ReplayFlag, string>>;
}

/** Every flag some operation on a run takes (each handler refuses the ones its operation does not). */
const RUN_FLAGS: ReplayFlag[] = ["limit", "with-previous", "verify", "from-step", "html", "lanes", "from", "to", "max-events", "max-bars", "force", "seal", "threads", "links-only", "format", "junit", "allow-empty"];
const RUN_TEXT: ReplayForm["flagText"] = {
  limit: "Show at most N events (only those are read)",
  "with-previous": "Also show the runs this resumed run continues (oldest first, each under a header line)",
  verify: "Verify the journal's chain, coverage and seal (exit 1 on divergence)",
  "from-step": "Project the state through step N: {events, head_hash, step_count}",
  seal: "Seal file {head, event_count} to check against (default <run_dir>/seal.json)",
  html: "Verify, then write the timeline page to OUT (default <run_dir>/timeline.html)",
  force: "--html: replace an existing OUT file",
};
const RUN_OUT = { name: "out", description: "--html: the page's file (default <run_dir>/timeline.html; - for stdout)", required: false };

/** The verbs: words that are never taken as a run, agent or task id. */
export const REPLAY_VERBS: Record<string, ReplayForm> = {
  list: {
    description: "List the runs with a journal, newest first (by start time)",
    positionals: [],
    flags: ["limit"],
    flagText: { limit: "Show at most N runs (the newest)" },
  },
  agents: {
    description: "List a run's agents (default: latest): task, role, adapter, outcome, steps",
    positionals: [{ name: "run_id", description: "Run id (or latest, the default)", required: false }],
    flags: [],
  },
  latest: {
    description: "The run that started last: show it, or --verify / --from-step N / --html it",
    positionals: [RUN_OUT],
    flags: RUN_FLAGS,
    flagText: RUN_TEXT,
  },
  diff: {
    description: "First event where two runs' journals diverge (exit 1 when they do)",
    positionals: [
      { name: "run_a", description: "Run id (or latest)", required: true },
      { name: "run_b", description: "Run id (or latest)", required: true },
    ],
    flags: ["ignore", "default-ignores", "allow-empty"],
    flagText: {
      ignore: "Leave this field out of the comparison: a name or a dotted path into nested objects (repeatable)",
      "default-ignores": "Leave identity fields (run_id, git_sha, …) out, agent ids by order of appearance; --no-default-ignores compares all",
    },
  },
  repair: {
    description: "Cut a torn trailing fragment of a run journal (nothing else), so the run can resume",
    positionals: [{ name: "run_id", description: "Run id (or latest)", required: true }],
    flags: ["seal"],
    flagText: { seal: "Seal file {head, event_count} the surviving journal must agree with (default <run_dir>/seal.json)" },
  },
  export: {
    description: "Write an offline-verifiable receipt (tar) of an agent's step journal",
    positionals: [
      { name: "agent_id", description: "Agent id under <sdd-dir>/runtime/journal", required: true },
      { name: "out", description: "Output file, s3://BUCKET/KEY or - for stdout (default <sdd-dir>/runtime/receipts/<AGENT_ID>.tar)", required: false },
    ],
    flags: ["sign", "force", ...STORAGE_FLAG_NAMES],
  },
  publish: {
    description: "Write a redacted receipt meant to leave the machine (needs --yes-i-want-to-publish)",
    positionals: [
      { name: "agent_id", description: "Agent id under <sdd-dir>/runtime/journal", required: true },
      { name: "out", description: "Output file, s3://BUCKET/KEY or - for stdout (default <sdd-dir>/runtime/receipts/<AGENT_ID>.published.tar)", required: false },
    ],
    flags: ["yes-i-want-to-publish", "redact", "sign", "force", ...STORAGE_FLAG_NAMES],
  },
  verify: {
    description: "Verify a receipt offline (exit 1 when its chain or signature does not verify)",
    positionals: [{ name: "receipt", description: "Receipt tar (plain or gzip): a file, -, s3://BUCKET/KEY or an https:// URL", required: true }],
    flags: ["head", "public-key", "format", "junit", "stdin-name", "allow-empty", ...STORAGE_FLAG_NAMES],
  },
  "diff-journal": {
    description: "First step where two agent step journals diverge (exit 1 when they do)",
    positionals: [
      { name: "left", description: "Agent id, step journal file or receipt (a path, s3:// or https:// URL)", required: true },
      { name: "right", description: "Agent id, step journal file or receipt (a path, s3:// or https:// URL)", required: true },
    ],
    flags: ["allow-empty", ...STORAGE_FLAG_NAMES],
  },
  debug: {
    description: "Debug one agent step journal (verify, receipt, steps, --fork-from N) or compare two",
    positionals: [
      { name: "run", description: "Agent id under <sdd-dir>/runtime/journal", required: true },
      { name: "right", description: "A second agent id to compare with", required: false },
    ],
    flags: ["fork-from", "jump-to-failure", "full", "limit", "sign", "allow-empty"],
    flagText: { limit: "Show at most N steps (default 200)", sign: "Sign the debug receipt with this Ed25519 private key" },
  },
};

/** The target forms: `replay <ID>` where ID names a run, an agent or a traced task. */
export const REPLAY_TARGETS: Record<string, ReplayForm> = {
  RUN_ID: {
    description: "Show a run's events; --verify checks it, --from-step N projects it, --html [OUT] draws it",
    positionals: [RUN_OUT],
    flags: RUN_FLAGS,
    flagText: RUN_TEXT,
  },
  AGENT_ID: {
    description: "Show an agent's step journal after verifying its chain",
    positionals: [],
    flags: ["limit", "allow-empty"],
    flagText: { limit: "Show at most N entries" },
  },
  TASK_ID: {
    description: "Re-run a traced task on the running task server and diff the result",
    positionals: [],
    flags: ["model", "extra-context", "timeout"],
  },
};

/** Every word `replay` understands as a verb, in help order. */
export const VERB_NAMES = Object.keys(REPLAY_VERBS);

function pick(flags: readonly ReplayFlag[], text: ReplayForm["flagText"] = {}): ArgsDef {
  const out: ArgsDef = { "sdd-dir": replayArgs["sdd-dir"] };
  for (const f of flags) {
    out[f] = text[f] ? { ...replayArgs[f], description: text[f] } : replayArgs[f];
    // Shown as the default it is, so the page lists --no-default-ignores.
    if (f === "default-ignores") out[f] = { ...out[f], default: true } as ArgsDef[string];
  }
  return { ...out, ...commonArgs };
}

function formCommand(name: string, form: ReplayForm): CommandDef<any> {
  const args: ArgsDef = {};
  for (const p of form.positionals) args[p.name] = { type: "positional", required: p.required, description: p.description };
  return { meta: { name, description: form.description }, args: { ...args, ...pick(form.flags, form.flagText) } };
}

/**
 * The help page `bernstein replay <word> --help` shows: a verb's own page,
 * a target form's page (`RUN_ID`, `AGENT_ID`, `TASK_ID`), or undefined for
 * the overview.
 */
export function replayFormHelp(word: string | undefined): CommandDef<any> | undefined {
  if (word === undefined) return undefined;
  const verb = REPLAY_VERBS[word];
  if (verb) return formCommand(word, verb);
  const target = REPLAY_TARGETS[word];
  if (target) return formCommand(`<${word}>`, target);
  return undefined;
}

/** The `bernstein replay --help` overview: the verbs and target forms as commands, only the shared flags. */
export function replayOverviewHelp(description: string): CommandDef<any> {
  const subCommands: Record<string, CommandDef<any>> = {};
  for (const [name, form] of Object.entries({ ...REPLAY_VERBS, ...REPLAY_TARGETS })) subCommands[name] = formCommand(name, form);
  return { meta: { name: "replay", description }, args: pick([]), subCommands };
}
