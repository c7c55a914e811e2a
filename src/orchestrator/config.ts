/**
 * `bernstein.yaml`: the seed configuration of a run. Parsed with Bun's
 * built-in YAML, validated with valibot: a wrong type is refused with the
 * key path (`agent.timeout_s: expected a positive number, got "x"`), an
 * unknown key is only warned about (a newer config must not break an older
 * binary).
 */
import { existsSync, readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import * as v from "valibot";
import { InputError } from "../errors/index.ts";

export const ADAPTER_NAMES = ["claude", "codex", "gemini", "aider", "command", "script"] as const;
export type AdapterName = (typeof ADAPTER_NAMES)[number];
export const PERMISSION_MODES = ["edits", "read_only", "full", "cli"] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];
/** What verifies a task besides its gates: `changed` (the work tree must change) or `none` (see outcome.ts). */
export const VERIFY_MODES = ["changed", "none"] as const;
export type VerifyMode = (typeof VERIFY_MODES)[number];

const positiveInt = (what: string) => v.pipe(v.number(`expected ${what}`), v.integer(`expected ${what}`), v.minValue(1, `expected ${what}`));
const nonNegativeInt = (what: string) => v.pipe(v.number(`expected ${what}`), v.integer(`expected ${what}`), v.minValue(0, `expected ${what}`));
const stringMap = v.record(v.string(), v.string("expected a string"));
const usdPerMtok = v.pipe(v.number("expected a number of USD per million tokens"), v.minValue(0, "expected a non-negative number of USD per million tokens"));

/** USD per million tokens of one model; cached input defaults to the input price. */
const PriceSchema = v.object(
  { input_usd_per_mtok: usdPerMtok, output_usd_per_mtok: usdPerMtok, cached_input_usd_per_mtok: v.optional(usdPerMtok) },
  "expected a mapping with input_usd_per_mtok and output_usd_per_mtok",
);
export type ModelPrice = v.InferOutput<typeof PriceSchema>;

/** `models:` — `default` and per-role model names, plus `prices:` (model name -> price) for CLIs that report tokens but no cost. */
const ModelsSchema = v.pipe(
  v.objectWithRest({ prices: v.optional(v.record(v.string(), PriceSchema)) }, v.string("expected a string")),
  v.transform(({ prices, ...roles }) => ({ roles: roles as Record<string, string>, prices: prices ?? {} })),
);

const GateSchema = v.union(
  [
    v.pipe(v.string(), v.minLength(1, "expected a non-empty shell command")),
    v.object({
      name: v.optional(v.pipe(v.string("expected a string"), v.minLength(1))),
      run: v.pipe(v.string("expected a shell command string"), v.minLength(1, "expected a non-empty shell command")),
      timeout_s: v.optional(v.pipe(v.number("expected a positive number of seconds"), v.minValue(0.001, "expected a positive number of seconds"))),
    }),
  ],
  "expected a shell command string or {name, run, timeout_s}",
);

const AgentSchema = v.object({
  adapter: v.optional(v.picklist(ADAPTER_NAMES, `expected one of ${ADAPTER_NAMES.join(", ")}`), "claude"),
  /** script adapter: path of the script (relative to the project directory). */
  script: v.optional(v.pipe(v.string("expected a path string"), v.minLength(1))),
  /** command adapter: argv template with {prompt} {model} {effort} {task_id} {agent_id} {title} {workdir}. */
  command: v.optional(v.pipe(v.array(v.string("expected a string")), v.minLength(1, "expected a non-empty argv list"))),
  /** Extra arguments appended to the adapter's invocation. */
  args: v.optional(v.array(v.string("expected a string")), () => []),
  /** Extra environment for the agent process. */
  env: v.optional(stringMap, () => ({})),
  /** Kill an agent that runs longer than this (seconds). */
  timeout_s: v.optional(v.pipe(v.number("expected a positive number of seconds"), v.minValue(0.001, "expected a positive number of seconds")), 1800),
  /** Override the executable of a CLI adapter (e.g. a wrapper around `claude`). */
  binary: v.optional(v.pipe(v.string("expected a string"), v.minLength(1))),
  /**
   * What a CLI agent may do without a human (docs/orchestrator.md, "Agent adapters"):
   * `edits` (default: edit files in the workdir), `read_only`, `full` (any
   * command, no sandbox), `cli` (pass nothing: the CLI's own settings decide).
   */
  permission_mode: v.optional(v.picklist(PERMISSION_MODES, `expected one of ${PERMISSION_MODES.join(", ")}`), "edits"),
  /** Provider endpoint (a proxy or gateway) the CLI talks to, e.g. `http://127.0.0.1:8080`. */
  base_url: v.optional(v.pipe(v.string("expected a URL string"), v.regex(/^https?:\/\/[^\s]+$/, "expected an http(s) URL"))),
  /** Name of the environment variable holding the provider API key (its value is never stored). */
  api_key_env: v.optional(v.pipe(v.string("expected an environment variable name"), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "expected an environment variable name"))),
});

/** Seconds a stopped run's agents get between SIGTERM and SIGKILL unless `--grace` or `stop_grace_s` says otherwise. */
export const DEFAULT_STOP_GRACE_S = 5;

const SessionSchema = v.object(
  {
    resume: v.optional(v.boolean("expected a bool (true/false)"), true),
    stale_after_minutes: v.optional(positiveInt("a positive integer"), 30),
  },
  "expected a mapping",
);

export const ConfigSchema = v.object(
  {
    goal: v.optional(v.string("expected a string")),
    agent: v.optional(AgentSchema, () => ({})),
    /** `default` plus per-role model names. */
    models: v.optional(ModelsSchema, () => ({})),
    max_agents: v.optional(positiveInt("a positive integer"), 3),
    max_retries: v.optional(nonNegativeInt("a non-negative integer"), 2),
    budget_usd: v.optional(v.nullable(v.pipe(v.number("expected a number of USD"), v.minValue(0, "expected a non-negative number of USD"))), null),
    /**
     * Gate commands, and/or the word `changed` (the work tree must change);
     * or the scalar `changed` / `none`. Absent: `changed` in a git work tree
     * (see src/orchestrator/outcome.ts).
     */
    verify: v.optional(v.array(GateSchema)),
    session: v.optional(SessionSchema, () => ({})),
    /**
     * Seconds between SIGTERM and SIGKILL to the agents' process groups when
     * the run is stopped (SIGTERM to `bernstein run`, `bernstein stop`); the
     * default keeps the whole stop inside a container's 10 s kill budget.
     */
    stop_grace_s: v.optional(
      v.pipe(v.number("expected a number of seconds"), v.minValue(0, "expected 0 to 86400 seconds"), v.maxValue(86_400, "expected 0 to 86400 seconds")),
      DEFAULT_STOP_GRACE_S,
    ),
  },
  "expected a mapping at the top level",
);

export type BernsteinConfig = v.InferOutput<typeof ConfigSchema>;
export type AgentConfig = BernsteinConfig["agent"];
export type GateSpec = { name: string; run: string; timeout_s: number };

/** Keys each mapping knows; anything else is warned about. */
const KNOWN_KEYS: Record<string, readonly string[]> = {
  "": ["goal", "agent", "models", "max_agents", "max_retries", "budget_usd", "verify", "session", "stop_grace_s"],
  agent: ["adapter", "script", "command", "args", "env", "timeout_s", "binary", "permission_mode", "base_url", "api_key_env"],
  session: ["resume", "stale_after_minutes"],
};

export interface LoadedConfig {
  config: BernsteinConfig;
  /** Resolved file path, or null when no file exists (defaults). */
  path: string | null;
  /** SHA-256 hex of the file bytes, "" without a file. */
  hash: string;
  warnings: string[];
}

export const DEFAULT_CONFIG_FILE = "bernstein.yaml";

function describeValue(x: unknown): string {
  if (typeof x === "string") return JSON.stringify(x.length > 40 ? x.slice(0, 40) + "…" : x);
  if (x === null || x === undefined) return String(x);
  if (Array.isArray(x)) return "a list";
  if (typeof x === "object") return "a mapping";
  return String(x);
}

/** Validate a parsed YAML document (exported for tests and for `--config -`). */
export function validateConfig(doc: unknown, source: string): { config: BernsteinConfig; warnings: string[] } {
  if (doc === null || doc === undefined) doc = {};
  const warnings: string[] = [];
  if (typeof doc === "object" && !Array.isArray(doc)) {
    for (const [section, keys] of Object.entries(KNOWN_KEYS)) {
      const obj = section === "" ? doc : (doc as Record<string, unknown>)[section];
      if (obj === null || typeof obj !== "object" || Array.isArray(obj)) continue;
      for (const k of Object.keys(obj)) {
        if (!keys.includes(k)) warnings.push(`${source}: unknown key '${section ? `${section}.` : ""}${k}' (ignored)`);
      }
    }
  }
  // valibot's object() accepts arrays; a mapping must be a mapping.
  const isMapping = (x: unknown) => x !== null && typeof x === "object" && !Array.isArray(x);
  if (!isMapping(doc)) {
    throw new InputError("config_invalid", `${source}: expected a mapping at the top level, got ${describeValue(doc)}`, { path: source, key: null });
  }
  for (const key of ["agent", "models", "session"]) {
    const x = (doc as Record<string, unknown>)[key];
    if (x !== undefined && !isMapping(x)) {
      throw new InputError("config_invalid", `${source}: ${key}: expected a mapping, got ${describeValue(x)}`, { path: source, key });
    }
  }
  // `verify: changed` / `verify: none` are the lists [changed] / [] (the work-tree check alone, or nothing).
  const verify = (doc as Record<string, unknown>).verify;
  if (typeof verify === "string") {
    if (!(VERIFY_MODES as readonly string[]).includes(verify)) {
      throw new InputError("config_invalid", `${source}: verify: expected a list of gate commands, or one of ${VERIFY_MODES.join(", ")}, got ${describeValue(verify)}`, { path: source, key: "verify" });
    }
    doc = { ...(doc as Record<string, unknown>), verify: verify === "changed" ? ["changed"] : [] };
  }
  const r = v.safeParse(ConfigSchema, doc);
  if (!r.success) {
    const issue = r.issues[0];
    const path = v.getDotPath(issue) ?? "";
    throw new InputError(
      "config_invalid",
      `${source}: ${path ? `${path}: ` : ""}${issue.message}, got ${describeValue(issue.input)}`,
      { path: source, key: path || null },
    );
  }
  const cfg = r.output;
  if (cfg.agent.adapter === "script" && !cfg.agent.script) {
    throw new InputError("config_invalid", `${source}: agent.script: the 'script' adapter needs agent.script (path of the agent script)`, { path: source, key: "agent.script" });
  }
  if (cfg.agent.adapter === "command" && !cfg.agent.command) {
    throw new InputError("config_invalid", `${source}: agent.command: the 'command' adapter needs agent.command (an argv template)`, { path: source, key: "agent.command" });
  }
  return { config: cfg, warnings };
}

/** Load `path` (default `bernstein.yaml` in the project dir); no file means defaults. */
export function loadConfig(path: string | null, explicit: boolean): LoadedConfig {
  const file = path ?? DEFAULT_CONFIG_FILE;
  if (!existsSync(file)) {
    if (explicit) throw new InputError("config_not_found", `config file not found: ${file}`, { path: file });
    return { ...validateConfig({}, file), path: null, hash: "" };
  }
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    throw new InputError("config_unreadable", `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { path: file });
  }
  let doc: unknown;
  try {
    doc = Bun.YAML.parse(bytes.toString("utf8"));
  } catch (err) {
    throw new InputError("config_invalid", `${file}: not valid YAML: ${(err as Error).message.split("\n")[0]}`, { path: file });
  }
  const { config, warnings } = validateConfig(doc, file);
  return { config, path: file, hash: createHash("sha256").update(bytes).digest("hex"), warnings };
}

/** The `verify` entry that names the work-tree check rather than a gate command. */
const CHANGED: VerifyMode = "changed";

/** The work-tree check `verify` configures: `changed`/`none` as said (listing `changed` among gates is `changed`), null when not configured. */
export function verifyModeOf(config: BernsteinConfig): VerifyMode | null {
  if (config.verify === undefined) return null;
  return config.verify.includes(CHANGED) ? "changed" : "none";
}

/** The verification gates with names filled in (`gate-1`, ...). */
export function gatesOf(config: BernsteinConfig): GateSpec[] {
  const list = (config.verify ?? []).filter((g) => g !== CHANGED);
  return list.map((g, i) =>
    typeof g === "string"
      ? { name: `gate-${i + 1}`, run: g, timeout_s: 600 }
      : { name: g.name ?? `gate-${i + 1}`, run: g.run, timeout_s: g.timeout_s ?? 600 },
  );
}
