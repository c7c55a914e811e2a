/**
 * Agent adapters: how one task becomes one agent subprocess, and how its
 * output becomes a result summary, tokens, a cost and tool calls. All
 * adapters share the same environment contract (BERNSTEIN_* variables, set
 * by the orchestrator); they differ in argv, endpoint wiring and output
 * parsing. The prompt goes on stdin (or in a 0600 file, BERNSTEIN_PROMPT_FILE),
 * never whole in argv, so a prompt of any size reaches the agent.
 *
 *  claude  `claude -p --output-format stream-json --verbose [--permission-mode …] [--model M] [--effort E] [args]`
 *  codex   `codex exec --json [--sandbox …] [--skip-git-repo-check] [--model M] [-c model_reasoning_effort=E] [args] -`
 *  gemini  `gemini [--model M] [--skip-trust --approval-mode …] --output-format stream-json [args]`
 *  resumed (a stopped attempt's own CLI session continued, prompt = a short continuation):
 *    claude `claude -p --resume <id> …`, codex `codex exec resume --json [-c sandbox_mode=…] … <id> -`,
 *    gemini `gemini --resume <id> …`; aider, command and script cannot resume (a fresh attempt).
 *  aider   `aider --yes-always --no-pretty --no-stream [--model M] [--reasoning-effort E] [args] --message-file <file>` (aider's Cost: line)
 *  command `agent.command` template; placeholders {prompt} {prompt_file} {model} {effort} {task_id} {agent_id} {title} {workdir}
 *  script  `agent.script [args]`, prompt on stdin; `.ts/.js` scripts run on the bundled Bun runtime
 *
 * Each CLI's own request retries are turned off (claude CLAUDE_CODE_MAX_RETRIES=0,
 * codex request/stream_max_retries = 0 with agent.base_url, gemini general.maxAttempts = 1):
 * bernstein retries by failure class instead (fails at once on auth/invalid_request).
 *
 * `agent.permission_mode` (edits | read_only | full | cli) maps to each
 * CLI's own flags; `agent.base_url` / `agent.api_key_env` to its endpoint
 * mechanism (environment, a generated CODEX_HOME, a per-attempt HOME).
 */
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { InputError, RefusalError } from "../errors/index.ts";
import type { AdapterName, AgentConfig } from "./config.ts";
import { parseAgentOutput, parseAiderOutput, type AgentResult } from "./result.ts";
import { CLAUDE_PERMISSION, parseClaudeOutput } from "./adapters/claude.ts";
import { CODEX_RESUME_SANDBOX, CODEX_SANDBOX, insideGitRepo, parseCodexOutput, withRolloutRefusals, writeCodexHome } from "./adapters/codex.ts";
import { GEMINI_APPROVAL, geminiRetryDefaults, parseGeminiOutput, writeGeminiHome } from "./adapters/gemini.ts";

export interface InvocationRequest {
  prompt: string;
  /** The prompt in a 0600 file (BERNSTEIN_PROMPT_FILE). */
  promptFile: string;
  model: string | null;
  effort: string | null;
  taskId: string;
  agentId: string;
  title: string;
  workdir: string;
  /** A private (0700) directory of this attempt: generated homes and configs go here. */
  attemptDir: string;
  /** Continue this CLI session (its id, as the CLI reported it) instead of starting one; only for an adapter with `canResume`. */
  resumeSessionId?: string | null;
}

export interface AgentInvocation {
  argv: string[];
  /** Text written to the agent's stdin (then closed); null = no stdin. */
  stdin: string | null;
  /** Extra environment for this adapter (on top of the BERNSTEIN_* contract). */
  env: Record<string, string>;
  /** The argv as recorded in the step journal: the prompt shown as `{prompt}`, its file as `{prompt_file}`. */
  recordedArgv: string[];
  /** Send stdout to this file rather than a pipe (see SpawnSpec.stdoutPath). */
  stdoutPath?: string;
}

export interface AgentAdapter {
  readonly name: AdapterName;
  /** Whether invocation() can continue a CLI session (InvocationRequest.resumeSessionId). */
  readonly canResume: boolean;
  /** Refuse early (before planning) when the adapter cannot run here. */
  check(workdir: string): void;
  invocation(req: InvocationRequest): AgentInvocation;
  parseOutput(stdout: string): AgentResult;
  /** Complete a parsed result with what the CLI recorded outside its stream (codex's rollout: the refused calls), given the agent's environment. */
  complete?(result: AgentResult, env: Record<string, string | undefined>): AgentResult;
}

const SCRIPT_RUNTIME_EXTENSIONS = /\.(ts|tsx|js|mjs|cjs|jsx)$/;

function missingCli(adapter: string, binary: string): RefusalError {
  return new RefusalError(
    "agent_cli_missing",
    `agent adapter '${adapter}' needs the '${binary}' CLI, which is not on PATH; install it, or set 'agent.binary' or change 'agent.adapter' in bernstein.yaml`,
    { adapter, binary, config_key: "agent.adapter" },
  );
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The API key named by `agent.api_key_env`, from agent.env or the environment; undefined when not configured. */
function apiKey(cfg: AgentConfig): string | undefined {
  if (!cfg.api_key_env) return undefined;
  return cfg.env[cfg.api_key_env] ?? process.env[cfg.api_key_env];
}

interface CliShape {
  /** argv after the binary; `prompt` is only for CLIs that take it as an argument. */
  args(req: InvocationRequest): string[];
  env(req: InvocationRequest): Record<string, string>;
  /** Whether the prompt goes on stdin (else the args name the prompt file). */
  stdin: boolean;
  /** argv after the binary that continues session `id` (the prompt still on stdin); absent when the CLI cannot. */
  resumeArgs?(req: InvocationRequest, id: string): string[];
  parse(stdout: string): AgentResult;
  complete?: AgentAdapter["complete"];
}

/** A CLI adapter: the CLI's argv, endpoint environment and output parser around one binary. */
function cliAdapter(name: AdapterName, defaultBinary: string, cfg: AgentConfig, shape: CliShape): AgentAdapter {
  const bin = cfg.binary ?? defaultBinary;
  return {
    name,
    canResume: shape.resumeArgs !== undefined,
    check() {
      if (isAbsolute(bin) || bin.includes("/")) {
        if (!isExecutable(bin)) throw missingCli(name, bin);
      } else if (!Bun.which(bin)) throw missingCli(name, bin);
      if (cfg.api_key_env && apiKey(cfg) === undefined) {
        throw new RefusalError(
          "agent_api_key_missing",
          `agent.api_key_env names ${cfg.api_key_env}, which is not set (in the environment or agent.env); set it to the provider's API key`,
          { adapter: name, config_key: "agent.api_key_env", variable: cfg.api_key_env },
        );
      }
    },
    invocation(req) {
      const resume = req.resumeSessionId && shape.resumeArgs ? req.resumeSessionId : null;
      const argv = [bin, ...(resume !== null ? shape.resumeArgs!(req, resume) : shape.args(req))];
      const recordedArgv = argv.map((a) => (a === req.prompt ? "{prompt}" : a === req.promptFile ? "{prompt_file}" : a));
      // The CLIs' JSON streams go to a file: a node CLI may exit before a pipe is drained.
      return { argv, stdin: shape.stdin ? req.prompt : null, env: shape.env(req), recordedArgv, stdoutPath: join(req.attemptDir, "stdout.jsonl") };
    },
    parseOutput: shape.parse,
    ...(shape.complete ? { complete: shape.complete } : {}),
  };
}

const withModel = (model: string | null, flag = "--model") => (model ? [flag, model] : []);

function claudeShape(cfg: AgentConfig): CliShape {
  const rest = (req: InvocationRequest) => ["--output-format", "stream-json", "--verbose", ...CLAUDE_PERMISSION[cfg.permission_mode], ...withModel(req.model), ...withModel(req.effort, "--effort"), ...cfg.args];
  return {
    args: (req) => ["-p", ...rest(req)],
    resumeArgs: (req, id) => ["-p", "--resume", id, ...rest(req)],
    env() {
      const env: Record<string, string> = {};
      const key = apiKey(cfg);
      if (key !== undefined) env.ANTHROPIC_API_KEY = key;
      // claude retries a failed request itself (10 times by default, a 401 included: minutes of
      // back-off, then seen as a timeout). No retries inside: bernstein retries by failure class.
      if (cfg.env.CLAUDE_CODE_MAX_RETRIES === undefined) env.CLAUDE_CODE_MAX_RETRIES = "0";
      if (cfg.base_url) {
        env.ANTHROPIC_BASE_URL = cfg.base_url.replace(/\/+$/, "").replace(/\/v1$/, "");
        // A gateway run talks to the gateway only (no update checks, telemetry, error reports).
        env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC = "1";
      }
      return env;
    },
    stdin: true,
    parse: parseClaudeOutput,
  };
}

function codexShape(cfg: AgentConfig): CliShape {
  return {
    args: (req) => [
      "exec",
      "--json",
      ...CODEX_SANDBOX[cfg.permission_mode],
      ...(insideGitRepo(req.workdir) ? [] : ["--skip-git-repo-check"]),
      ...withModel(req.model),
      ...(req.effort ? ["-c", `model_reasoning_effort=${req.effort}`] : []),
      ...cfg.args,
      "-",
    ],
    // `exec resume` has no --sandbox: the same mode as a config override.
    resumeArgs: (req, id) => [
      "exec",
      "resume",
      "--json",
      ...CODEX_RESUME_SANDBOX[cfg.permission_mode],
      ...(insideGitRepo(req.workdir) ? [] : ["--skip-git-repo-check"]),
      ...withModel(req.model),
      ...(req.effort ? ["-c", `model_reasoning_effort=${req.effort}`] : []),
      ...cfg.args,
      id,
      "-",
    ],
    env: (req): Record<string, string> => (cfg.base_url ? { CODEX_HOME: writeCodexHome(req.attemptDir, cfg) } : {}),
    stdin: true,
    parse: parseCodexOutput,
    complete: withRolloutRefusals,
  };
}

function geminiShape(cfg: AgentConfig): CliShape {
  return {
    args: (req) => [...withModel(req.model), ...GEMINI_APPROVAL[cfg.permission_mode], "--output-format", "stream-json", ...cfg.args],
    // gemini 0.61 resumes a session by its id (or "latest", or an index) headless too.
    resumeArgs: (req, id) => ["--resume", id, ...withModel(req.model), ...GEMINI_APPROVAL[cfg.permission_mode], "--output-format", "stream-json", ...cfg.args],
    env(req) {
      // No relaunch of itself in a child node process: that costs most of a second per attempt.
      const env: Record<string, string> = { GEMINI_CLI_NO_RELAUNCH: "true" };
      const key = apiKey(cfg);
      if (key !== undefined) env.GEMINI_API_KEY = key;
      if (cfg.base_url) env.GOOGLE_GEMINI_BASE_URL = cfg.base_url.replace(/\/+$/, "");
      if (cfg.base_url || cfg.api_key_env) env.HOME = writeGeminiHome(req.attemptDir);
      else Object.assign(env, geminiRetryDefaults(req.attemptDir, { ...process.env, ...cfg.env }));
      return env;
    },
    stdin: true,
    parse: parseGeminiOutput,
  };
}

function aiderShape(cfg: AgentConfig): CliShape {
  return {
    args: (req) => ["--yes-always", "--no-pretty", "--no-stream", ...withModel(req.model), ...withModel(req.effort, "--reasoning-effort"), ...cfg.args, "--message-file", req.promptFile],
    env() {
      const env: Record<string, string> = {};
      if (cfg.base_url) env.OPENAI_API_BASE = cfg.base_url;
      const key = apiKey(cfg);
      if (key !== undefined) env.OPENAI_API_KEY = key;
      return env;
    },
    stdin: false,
    parse: parseAiderOutput,
  };
}

function substitute(template: string, req: InvocationRequest): string {
  const values: Record<string, string> = {
    prompt: req.prompt,
    model: req.model ?? "",
    effort: req.effort ?? "",
    prompt_file: req.promptFile,
    task_id: req.taskId,
    agent_id: req.agentId,
    title: req.title,
    workdir: req.workdir,
  };
  return template.replace(/\{(prompt|prompt_file|model|effort|task_id|agent_id|title|workdir)\}/g, (_, k: string) => values[k]!);
}

export function createAdapter(cfg: AgentConfig, workdir: string): AgentAdapter {
  switch (cfg.adapter) {
    case "claude":
      return cliAdapter("claude", "claude", cfg, claudeShape(cfg));
    case "codex":
      return cliAdapter("codex", "codex", cfg, codexShape(cfg));
    case "gemini":
      return cliAdapter("gemini", "gemini", cfg, geminiShape(cfg));
    case "aider":
      return cliAdapter("aider", "aider", cfg, aiderShape(cfg));
    case "command": {
      const template = cfg.command!;
      return {
        name: "command",
        canResume: false,
        check() {
          const bin = template[0]!;
          if (bin.includes("{")) return;
          if (bin.includes("/")) {
            if (!isExecutable(resolve(workdir, bin))) throw missingCli("command", bin);
          } else if (!Bun.which(bin)) throw missingCli("command", bin);
        },
        invocation(req) {
          const argv = template.map((t) => substitute(t, req));
          if (argv[0]!.includes("/")) argv[0] = resolve(req.workdir, argv[0]!);
          return { argv, stdin: null, env: {}, recordedArgv: [...template] };
        },
        parseOutput: parseAgentOutput,
      };
    }
    case "script": {
      const script = resolve(workdir, cfg.script!);
      const viaRuntime = SCRIPT_RUNTIME_EXTENSIONS.test(script);
      return {
        name: "script",
        canResume: false,
        check() {
          if (!existsSync(script)) {
            throw new InputError("agent_script_missing", `agent script not found: ${cfg.script} (set 'agent.script' in bernstein.yaml)`, {
              adapter: "script",
              script,
              config_key: "agent.script",
            });
          }
          if (!viaRuntime && !isExecutable(script) && !script.endsWith(".sh")) {
            throw new RefusalError("agent_script_not_executable", `agent script is not executable: ${cfg.script} (chmod +x it, or use a .sh/.ts script)`, {
              adapter: "script",
              script,
              config_key: "agent.script",
            });
          }
        },
        invocation(req) {
          // .ts/.js agents run on the Bun runtime inside this very binary
          // (BUN_BE_BUN), so the demo needs nothing installed.
          const argv = viaRuntime
            ? [process.execPath, script, ...cfg.args]
            : isExecutable(script)
              ? [script, ...cfg.args]
              : ["sh", script, ...cfg.args];
          const env: Record<string, string> = viaRuntime ? { BUN_BE_BUN: "1" } : {};
          return { argv, stdin: req.prompt, env, recordedArgv: [...argv] };
        },
        parseOutput: parseAgentOutput,
      };
    }
  }
}
