/**
 * Agent adapters: how one task becomes one agent subprocess, and how its
 * output becomes a result summary and a cost. All adapters share the same
 * environment contract (BERNSTEIN_* variables, below); they differ in argv
 * and output parsing.
 *
 *  claude  `claude -p <prompt> --output-format json [--model M] [args]`  (result + total_cost_usd)
 *  codex   `codex exec [--model M] [args] <prompt>`                       (generic output rule)
 *  gemini  `gemini [--model M] [args] --prompt <prompt>`                   (generic output rule)
 *  aider   `aider --yes-always --no-pretty --no-stream [--model M] [args] --message <prompt>` (aider's Cost: line)
 *  command `agent.command` template; placeholders {prompt} {model} {effort} {task_id} {agent_id} {title} {workdir}
 *  script  `agent.script [args]`, prompt on stdin; `.ts/.js` scripts run on the bundled Bun runtime
 */
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { InputError, RefusalError } from "../errors.ts";
import type { AdapterName, AgentConfig } from "./config.ts";
import { parseAgentOutput, parseAiderOutput, parseClaudeOutput, type AgentResult } from "./result.ts";

export interface InvocationRequest {
  prompt: string;
  model: string | null;
  effort: string | null;
  taskId: string;
  agentId: string;
  title: string;
  workdir: string;
}

export interface AgentInvocation {
  argv: string[];
  /** Text written to the agent's stdin (then closed); null = no stdin. */
  stdin: string | null;
  /** Extra environment for this adapter (on top of the BERNSTEIN_* contract). */
  env: Record<string, string>;
  /** The argv as recorded in the step journal: the prompt argument shown as `{prompt}`. */
  recordedArgv: string[];
}

export interface AgentAdapter {
  readonly name: AdapterName;
  /** Refuse early (before planning) when the adapter cannot run here. */
  check(workdir: string): void;
  invocation(req: InvocationRequest): AgentInvocation;
  parseOutput(stdout: string): AgentResult;
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

/** A CLI adapter: fixed argv shape around the prompt and model. */
function cliAdapter(
  name: AdapterName,
  defaultBinary: string,
  cfg: AgentConfig,
  build: (bin: string, prompt: string, model: string | null, extra: string[]) => string[],
  parse: (stdout: string) => AgentResult,
): AgentAdapter {
  const bin = cfg.binary ?? defaultBinary;
  return {
    name,
    check() {
      if (isAbsolute(bin) || bin.includes("/")) {
        if (!isExecutable(bin)) throw missingCli(name, bin);
      } else if (!Bun.which(bin)) throw missingCli(name, bin);
    },
    invocation(req) {
      const argv = build(bin, req.prompt, req.model, cfg.args);
      return { argv, stdin: null, env: {}, recordedArgv: argv.map((a) => (a === req.prompt ? "{prompt}" : a)) };
    },
    parseOutput: parse,
  };
}

function substitute(template: string, req: InvocationRequest): string {
  const values: Record<string, string> = {
    prompt: req.prompt,
    model: req.model ?? "",
    effort: req.effort ?? "",
    task_id: req.taskId,
    agent_id: req.agentId,
    title: req.title,
    workdir: req.workdir,
  };
  return template.replace(/\{(prompt|model|effort|task_id|agent_id|title|workdir)\}/g, (_, k: string) => values[k]!);
}

export function createAdapter(cfg: AgentConfig, workdir: string): AgentAdapter {
  const withModel = (model: string | null, flag = "--model") => (model ? [flag, model] : []);
  switch (cfg.adapter) {
    case "claude":
      return cliAdapter("claude", "claude", cfg, (bin, p, m, extra) => [bin, "-p", p, "--output-format", "json", ...withModel(m), ...extra], parseClaudeOutput);
    case "codex":
      return cliAdapter("codex", "codex", cfg, (bin, p, m, extra) => [bin, "exec", ...withModel(m), ...extra, p], parseAgentOutput);
    case "gemini":
      return cliAdapter("gemini", "gemini", cfg, (bin, p, m, extra) => [bin, ...withModel(m), ...extra, "--prompt", p], parseAgentOutput);
    case "aider":
      return cliAdapter(
        "aider",
        "aider",
        cfg,
        (bin, p, m, extra) => [bin, "--yes-always", "--no-pretty", "--no-stream", ...withModel(m), ...extra, "--message", p],
        parseAiderOutput,
      );
    case "command": {
      const template = cfg.command!;
      return {
        name: "command",
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
