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
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentConfig, PermissionMode } from "../config.ts";
import { gitMarkerAbove } from "../worktree.ts";
import { answerSummary, failed, ok, type AgentResult, type ToolCall } from "../result.ts";
import { classifyFailure, jsonObjects, num, obj, providerMessage, retryAfterIn, str, ToolCalls, tryJson } from "./events.ts";

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
  return gitMarkerAbove(dir);
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
      if (completed && (it.status === "declined" || (it.exit_code !== 0 && sandboxRefused(str(it.aggregated_output) ?? "")))) tools.deny(id, "permission_denied");
      return;
    case "file_change":
      call("apply_patch", it.changes);
      if (completed) tools.finish(id, status, null);
      if (completed && it.status === "declined") tools.deny(id, "permission_denied");
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

/**
 * What a command's output shows when codex's sandbox refused it: a write
 * under `--sandbox read-only` (or outside the workspace) fails with EROFS.
 */
export function sandboxRefused(output: string): boolean {
  return /Read-only file system|\bEROFS\b|sandbox (?:denied|refused|blocked)/i.test(output);
}

/** The rollout codex wrote for a thread: `<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-…-<thread id>.jsonl`; null when absent. */
export function findCodexRollout(codexHome: string, threadId: string): string | null {
  const suffix = `-${threadId}.jsonl`;
  const sessions = join(codexHome, "sessions");
  // Newest days first: the attempt's rollout is from today (or yesterday, across midnight).
  const below = (dir: string): string[] => {
    try {
      return readdirSync(dir).sort().reverse();
    } catch {
      return [];
    }
  };
  for (const y of below(sessions).slice(0, 2))
    for (const m of below(join(sessions, y)).slice(0, 2))
      for (const d of below(join(sessions, y, m)).slice(0, 2)) {
        const hit = below(join(sessions, y, m, d)).find((f) => f.endsWith(suffix));
        if (hit) return join(sessions, y, m, d, hit);
      }
  return null;
}

/**
 * Tool calls codex's sandbox refused, read from the thread's rollout.
 * `codex exec --json` leaves a command the read-only sandbox refused out
 * of its stream altogether (no `command_execution` item: the model is told
 * "Read-only file system" and may claim success); the rollout has the call
 * and its output.
 */
export function codexRolloutRefusals(rollout: string): ToolCall[] {
  const tools = new ToolCalls();
  for (const o of jsonObjects(rollout)) {
    if (o.type !== "response_item") continue;
    const p = obj(o.payload);
    const id = str(p.call_id);
    if (p.type === "function_call" || p.type === "custom_tool_call") {
      const input = p.type === "function_call" ? (tryJson(str(p.arguments) ?? "") ?? p.arguments) : p.input;
      const name = str(p.name) ?? "?";
      // A shell call is named as the stream names its commands (`shell`), with the command as input.
      const shell = /^(?:exec_command|shell_command|shell|local_shell)$/.test(name);
      const a = obj(input);
      const command = a.cmd ?? a.command;
      tools.start(id, shell ? "shell" : name, shell && command !== undefined ? (Array.isArray(command) ? command.join(" ") : command) : input);
    } else if (p.type === "function_call_output" || p.type === "custom_tool_call_output") {
      const out = typeof p.output === "string" ? p.output : JSON.stringify(p.output ?? null);
      const failedExit = /Process exited with code [1-9]\d*/.test(out);
      tools.finish(id, failedExit ? "error" : "ok", out);
      if (sandboxRefused(out)) tools.deny(id, "permission_denied");
    }
  }
  return tools.list.filter((c) => c.status === "denied");
}

/** The codex home an attempt ran with: the generated one, else CODEX_HOME, else ~/.codex. */
export function codexHomeOf(env: Record<string, string | undefined>): string | null {
  return env.CODEX_HOME ?? (env.HOME ? join(env.HOME, ".codex") : null);
}

/**
 * A parsed codex result completed with the refusals its rollout shows and
 * its stream left out (none are added when the stream reported one).
 */
export function withRolloutRefusals(r: AgentResult, env: Record<string, string | undefined>): AgentResult {
  if (r.sessionId === null || r.toolCalls.some((c) => c.status === "denied")) return r;
  const home = codexHomeOf(env);
  const path = home ? findCodexRollout(home, r.sessionId) : null;
  if (!path) return r;
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return r;
  }
  const refused = codexRolloutRefusals(text);
  if (refused.length === 0) return r;
  // The final answer came after every call, the refused ones included: the transcript keeps it last.
  const total = r.toolCalls.length + refused.length;
  const messages = r.messages?.map((m, i, all) => (i === all.length - 1 && m.afterTools === r.toolCalls.length ? { ...m, afterTools: total } : m));
  return { ...r, toolCalls: [...r.toolCalls, ...refused], ...(messages ? { messages } : {}) };
}
