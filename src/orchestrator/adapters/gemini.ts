/**
 * gemini: `gemini [--model M] --skip-trust --approval-mode … --output-format stream-json`,
 * prompt on stdin. JSON lines: `init{session_id, model}`, `message`
 * (assistant text in deltas), `tool_use{tool_name, tool_id, parameters}`,
 * `tool_result{tool_id, status}`, and a final `result{status, error?,
 * stats}`. No cost: tokens only, priced from `models.prices`.
 *
 * With `agent.base_url` or `agent.api_key_env` the agent gets a per-attempt
 * HOME whose ~/.gemini/settings.json selects API-key auth (the
 * environment alone is refused: "Invalid auth method selected.").
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { platform } from "node:os";
import { dirname, join } from "node:path";
import type { PermissionMode } from "../config.ts";
import { answerSummary, failed, ok, type AgentResult, type Refusal } from "../result.ts";
import { classifyFailure, jsonObjects, num, obj, providerMessage, retryAfterIn, str, ToolCalls } from "./events.ts";

export const GEMINI_APPROVAL: Record<PermissionMode, string[]> = {
  edits: ["--skip-trust", "--approval-mode", "auto_edit"],
  read_only: ["--skip-trust", "--approval-mode", "default"],
  full: ["--skip-trust", "--approval-mode", "yolo"],
  cli: [],
};

/**
 * gemini retries a failed model request itself, up to `general.maxAttempts`
 * (default 10) times with back-off — a rejected key included. One attempt
 * each: bernstein retries by failure class (see attempt.ts retryDelayS).
 */
export const GEMINI_MAX_ATTEMPTS = 1;

/** The per-attempt HOME with API-key auth, no usage statistics and no retries inside the CLI; returns its path. */
export function writeGeminiHome(dir: string): string {
  const home = join(dir, "home");
  mkdirSync(join(home, ".gemini"), { recursive: true, mode: 0o700 });
  const settings = {
    security: { auth: { selectedType: "gemini-api-key" } },
    privacy: { usageStatisticsEnabled: false },
    general: { disableAutoUpdate: true, disableUpdateNag: true, maxAttempts: GEMINI_MAX_ATTEMPTS },
  };
  writeFileSync(join(home, ".gemini", "settings.json"), JSON.stringify(settings, null, 2) + "\n", { mode: 0o600 });
  return home;
}

/**
 * Without a generated HOME (the user's own login), the retry limit goes in
 * a system-defaults file (GEMINI_CLI_SYSTEM_DEFAULTS_PATH), the lowest
 * precedence: the user's own settings still win. Not when one is already
 * named or installed. Returns the variables to set.
 */
export function geminiRetryDefaults(dir: string, env: Record<string, string | undefined>): Record<string, string> {
  if (env.GEMINI_CLI_SYSTEM_DEFAULTS_PATH) return {};
  const systemSettings = env.GEMINI_CLI_SYSTEM_SETTINGS_PATH ?? (platform() === "darwin" ? "/Library/Application Support/GeminiCli/settings.json" : "/etc/gemini-cli/settings.json");
  if (existsSync(join(dirname(systemSettings), "system-defaults.json"))) return {};
  const path = join(dir, "gemini-system-defaults.json");
  writeFileSync(path, JSON.stringify({ general: { maxAttempts: GEMINI_MAX_ATTEMPTS } }, null, 2) + "\n", { mode: 0o600 });
  return { GEMINI_CLI_SYSTEM_DEFAULTS_PATH: path };
}

export function parseGeminiOutput(stdout: string): AgentResult {
  const tools = new ToolCalls();
  let sessionId: string | null = null;
  let model: string | null = null;
  // The answer is the assistant text after the last tool call.
  let segment = "";
  let answer = "";
  let result: Record<string, unknown> | null = null;
  for (const o of jsonObjects(stdout)) {
    if (o.type === "init") {
      sessionId = str(o.session_id) ?? sessionId;
      model = str(o.model) ?? model;
    } else if (o.type === "message" && o.role === "assistant") {
      segment += str(o.content) ?? "";
      if (segment.trim()) answer = segment;
    } else if (o.type === "tool_use") {
      tools.start(str(o.tool_id), str(o.tool_name) ?? "?", o.parameters);
      segment = "";
    } else if (o.type === "tool_result") {
      tools.finish(str(o.tool_id), o.status === "success" ? "ok" : "error", o.output ?? o.error);
      const refused = geminiRefusal(str(obj(o.error).type), tools.get(str(o.tool_id))?.name ?? "");
      if (o.status !== "success" && refused) tools.deny(str(o.tool_id), refused);
    } else if (o.type === "result") result = o;
  }
  const stats = obj(result?.stats);
  const tokens = result ? { input: num(stats.input_tokens), output: num(stats.output_tokens), cached: num(stats.cached) } : null;
  const facts = { tokens, sessionId, reportedModel: Object.keys(obj(stats.models))[0] ?? model, answerText: answer || null, toolCalls: tools.list };
  if (result === null) return { ...failed(null, "no_result", "gemini printed no result (gemini --output-format stream-json)"), ...facts };
  if (result.status !== "success") {
    const e = obj(result.error);
    const text = str(e.message) ?? JSON.stringify(result.error ?? result.status);
    const r = failed(null, "agent_error", `gemini: ${providerMessage(text)}`);
    return { ...r, ...facts, errorClass: classifyFailure(text), retryAfterS: retryAfterIn(text) };
  }
  return { ...ok(answerSummary(answer), 0, "unknown"), ...facts };
}

/** gemini's tools that change the work tree (its read-only approval mode does not offer them). */
export const GEMINI_WRITE_TOOL = /^(?:write_file|replace|edit|run_shell_command|shell|apply_patch|create_file|delete_file|move_file)$/;

/**
 * Why gemini refused a tool call, from its result's `error.type`: a tool
 * the session does not offer (`tool_not_registered`; under
 * `--approval-mode default` the write tools are not registered) is
 * `no_write_tool` when it was a tool that writes; a call its policy
 * refused is `permission_denied`. Null for an ordinary tool error.
 */
export function geminiRefusal(errorType: string | null, toolName: string): Refusal | null {
  if (!errorType) return null;
  if (errorType === "tool_not_registered") return GEMINI_WRITE_TOOL.test(toolName) ? "no_write_tool" : null;
  return /denied|polic|permission|not_allowed|rejected/i.test(errorType) ? "permission_denied" : null;
}
