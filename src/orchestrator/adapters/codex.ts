/**
 * codex: `codex exec --json [--sandbox …] [--skip-git-repo-check] -`,
 * prompt on stdin. JSON lines: `thread.started{thread_id}`,
 * `item.completed{item}` (agent_message, command_execution, file_change,
 * mcp_tool_call, web_search, error = a warning), `turn.completed{usage}`,
 * `turn.failed{error}`, `error{message}`. No cost: tokens only, priced
 * from `models.prices`.
 *
 * codex has no environment variable for the endpoint: with `agent.base_url`
 * the adapter writes a CODEX_HOME with a config.toml naming a custom
 * provider (Responses API, no retries, no analytics or plugin lookups).
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { AgentConfig, PermissionMode } from "../config.ts";
import { answerSummary, failed, ok, type AgentResult } from "../result.ts";
import { classifyFailure, jsonObjects, num, obj, providerMessage, retryAfterIn, str, ToolCalls } from "./events.ts";

export const CODEX_SANDBOX: Record<PermissionMode, string[]> = {
  edits: ["--sandbox", "workspace-write"],
  read_only: ["--sandbox", "read-only"],
  full: ["--sandbox", "danger-full-access"],
  cli: [],
};

/** `codex exec resume` takes no --sandbox flag: the same modes as config overrides. */
export const CODEX_RESUME_SANDBOX: Record<PermissionMode, string[]> = {
  edits: ["-c", 'sandbox_mode="workspace-write"'],
  read_only: ["-c", 'sandbox_mode="read-only"'],
  full: ["-c", 'sandbox_mode="danger-full-access"'],
  cli: [],
};

/** codex refuses a directory outside a git work tree unless told; bernstein does not require git. */
export function insideGitRepo(dir: string): boolean {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, ".git"))) return true;
    if (dirname(d) === d) return false;
  }
}

const toml = (s: string): string => JSON.stringify(s);

/** The generated CODEX_HOME for a provider endpoint; returns its path. */
export function writeCodexHome(dir: string, cfg: AgentConfig): string {
  const home = join(dir, "codex-home");
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const base = cfg.base_url!.replace(/\/+$/, "");
  const lines = [
    "# Written by bernstein for one agent attempt (agent.base_url in bernstein.yaml).",
    'model_provider = "bernstein"',
    "",
    "[model_providers.bernstein]",
    'name = "bernstein (agent.base_url)"',
    `base_url = ${toml(/\/v1$/.test(base) ? base : `${base}/v1`)}`,
    `env_key = ${toml(cfg.api_key_env ?? "OPENAI_API_KEY")}`,
    'wire_api = "responses"',
    "request_max_retries = 0",
    "stream_max_retries = 0",
    "",
    "[analytics]",
    "enabled = false",
    "",
    "[features]",
    "plugins = false",
    "",
  ];
  writeFileSync(join(home, "config.toml"), lines.join("\n"), { mode: 0o600 });
  return home;
}

export function parseCodexOutput(stdout: string): AgentResult {
  const tools = new ToolCalls();
  let sessionId: string | null = null;
  const got = { answer: null as string | null };
  let turns = 0;
  let failure: string | null = null;
  let lastError: string | null = null;
  const tokens = { input: 0, output: 0, cached: 0 };
  for (const o of jsonObjects(stdout)) {
    if (o.type === "thread.started") sessionId = str(o.thread_id) ?? sessionId;
    else if (o.type === "turn.completed") {
      turns++;
      const u = obj(o.usage);
      tokens.input += num(u.input_tokens);
      tokens.cached += num(u.cached_input_tokens);
      tokens.output += num(u.output_tokens);
    } else if (o.type === "turn.failed") failure = str(obj(o.error).message) ?? JSON.stringify(o.error);
    else if (o.type === "error") lastError = str(o.message) ?? "";
    else if (o.type === "item.started" || o.type === "item.completed") item(tools, obj(o.item), o.type === "item.completed", (text) => {
        got.answer = text;
        tools.say(text);
      });
  }
  const answer = got.answer;
  const failureText = failure ?? "";
  const facts = { tokens: turns > 0 || failure ? tokens : null, sessionId, answerText: answer, toolCalls: tools.list, messages: tools.messages };
  if (failure !== null) return { ...failed(null, "agent_error", `codex: ${providerMessage(failureText)}`), ...facts, ...provider(failureText) };
  if (answer === null) {
    return { ...failed(null, "no_result", lastError ? `codex: ${providerMessage(lastError)}` : "codex printed no final message (codex exec --json)"), ...facts, ...(lastError ? provider(lastError) : {}) };
  }
  return { ...ok(answerSummary(answer), 0, "unknown"), ...facts };
}

/** The class and wait codex's raw error text shows ("unexpected status 401 Unauthorized: …", a 400's JSON body, "last status: 429"). */
function provider(text: string): Pick<AgentResult, "errorClass" | "retryAfterS"> {
  return { errorClass: classifyFailure(text), retryAfterS: retryAfterIn(text) };
}

/** One item event: tool calls begin at `item.started` (or at completion, for items that only complete). */
function item(tools: ToolCalls, it: Record<string, unknown>, completed: boolean, onAnswer: (text: string) => void): void {
  const id = str(it.id);
  const call = (name: string, input: unknown): void => {
    if (!tools.has(id)) tools.start(id, name, input);
  };
  const status = it.status === "completed" ? "ok" : "error";
  switch (it.type) {
    case "agent_message":
      if (completed && typeof it.text === "string") onAnswer(it.text);
      return;
    case "command_execution":
      call("shell", it.command);
      if (completed) tools.finish(id, it.exit_code === 0 ? "ok" : `error (exit ${String(it.exit_code ?? "?")})`, it.aggregated_output);
      return;
    case "file_change":
      call("apply_patch", it.changes);
      if (completed) tools.finish(id, status, null);
      return;
    case "mcp_tool_call":
      call(`${str(it.server) ?? "mcp"}.${str(it.tool) ?? "?"}`, it.arguments);
      if (completed) tools.finish(id, status, it.result ?? it.error);
      return;
    case "web_search":
      call("web_search", it.query);
      if (completed) tools.finish(id, "ok", null);
  }
}
