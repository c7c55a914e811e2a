/**
 * claude: `claude -p --output-format stream-json --verbose`, prompt on stdin.
 * The stream is JSON lines: `system/init` (session id), `assistant`
 * messages (tool_use blocks), `user` messages (tool_result blocks), and
 * one final `result` object with `result`, `is_error`, `total_cost_usd`,
 * `usage`, `permission_denials`, `errors`. (`--output-format json` prints
 * only that last object; it parses the same.)
 */
import type { PermissionMode } from "../config.ts";
import { answerSummary, failed, parseAgentOutput, reportedCost, type AgentResult, type TokenUsage } from "../result.ts";
import { classifyFailure, clip, jsonObjects, MAX_REASON_CHARS, num, obj, providerMessage, retryAfterIn, str, ToolCalls, type JsonObject } from "./events.ts";

export const CLAUDE_PERMISSION: Record<PermissionMode, string[]> = {
  edits: ["--permission-mode", "acceptEdits"],
  read_only: ["--permission-mode", "default"],
  full: ["--permission-mode", "bypassPermissions"],
  cli: [],
};

function deniedTools(denials: unknown[]): string {
  const names = denials.map((d) => str(obj(d).tool_name) ?? "?");
  return [...new Set(names)].join(", ");
}

function isResult(o: JsonObject): boolean {
  return o.type === "result" || "total_cost_usd" in o || "permission_denials" in o || ("result" in o && "is_error" in o);
}

/** What a result object says about the attempt, before its cost is looked at. */
function verdict(o: JsonObject, summary: string | null): AgentResult | null {
  const denials = Array.isArray(o.permission_denials) ? o.permission_denials : [];
  if (denials.length > 0) {
    return failed(summary, "permission_denied", `the agent was denied ${denials.length} tool use(s) (${deniedTools(denials)}); allow them (agent.permission_mode, or agent.args such as --allowedTools) or the task cannot be done`);
  }
  const errors = Array.isArray(o.errors) ? o.errors.map((e) => (typeof e === "string" ? e : str(obj(e).message) ?? JSON.stringify(e))) : [];
  if (o.is_error === true || typeof o.result !== "string") {
    const said = (typeof o.result === "string" && o.result.trim()) || errors[0] || "";
    const status = typeof o.api_error_status === "number" ? ` (HTTP ${o.api_error_status})` : typeof o.subtype === "string" && o.subtype !== "success" ? ` (${o.subtype})` : "";
    if (!said && o.is_error !== true) return failed(summary, "no_result", "the agent's JSON result has no 'result' text");
    const r = failed(summary, "agent_error", clip(`claude reported an error${status}${said ? `: ${providerMessage(said.replace(/^API Error: \d+ /, ""))}` : ""}`, MAX_REASON_CHARS));
    // claude names the provider's status (api_error_status) and error type; the text is the fallback.
    const httpStatus = typeof o.api_error_status === "number" ? o.api_error_status : null;
    const text = [said, str(o.api_error_type) ?? "", ...errors].join("\n");
    return { ...r, errorClass: classifyFailure(text, httpStatus), retryAfterS: retryAfterIn(text) };
  }
  return null;
}

/** Tokens of a claude `usage` object: input counts cache reads and cache writes. */
function tokensOf(usage: JsonObject): TokenUsage {
  const cached = num(usage.cache_read_input_tokens);
  return { input: num(usage.input_tokens) + cached + num(usage.cache_creation_input_tokens), output: num(usage.output_tokens), cached };
}

export function parseClaudeOutput(stdout: string): AgentResult {
  const tools = new ToolCalls();
  let sessionId: string | null = null;
  let final: JsonObject | null = null;
  /** The model named by `system/init` or an assistant message (the result's `modelUsage` wins). */
  let streamModel: string | null = null;
  /** Each assistant message's usage (one event per content block repeats it: keyed by message id). */
  const usages = new Map<string, JsonObject>();
  for (const o of jsonObjects(stdout)) {
    sessionId = str(o.session_id) ?? sessionId;
    if (o.type === "system") streamModel = str(o.model) ?? streamModel;
    // claude 2.x reports each refusal as it happens (`system/permission_denied`), before the tool's error result.
    if (o.type === "system" && o.subtype === "permission_denied") tools.deny(str(o.tool_use_id), "permission_denied", o.message);
    const content = Array.isArray(obj(o.message).content) ? (obj(o.message).content as unknown[]) : [];
    if (o.type === "assistant") {
      const m = obj(o.message);
      streamModel = str(m.model) ?? streamModel;
      if ("usage" in m) usages.set(str(m.id) ?? `#${usages.size}`, obj(m.usage));
      for (const c of content.map(obj)) {
        if (c.type === "tool_use") tools.start(str(c.id), str(c.name) ?? "?", c.input);
        else if (c.type === "text" && typeof c.text === "string") tools.say(c.text);
      }
    } else if (o.type === "user") {
      for (const c of content.map(obj)) if (c.type === "tool_result") tools.finish(str(c.tool_use_id), c.is_error === true ? "error" : "ok", c.content);
      // A result the permission check rejected (not executed) says so in its metadata.
      for (const m of (Array.isArray(o.tool_result_meta) ? o.tool_result_meta : []).map(obj)) {
        if (m.non_execution_kind === "user-rejected" || obj(m.permission_decision).decision === "reject") tools.deny(str(m.id), "permission_denied");
      }
    } else if (isResult(o)) final = o;
  }
  if (final === null) {
    // No result (a stopped or killed attempt, say): the tokens its messages reported so far are kept.
    let tokens: TokenUsage | null = null;
    for (const u of usages.values()) {
      const t = tokensOf(u);
      tokens = tokens === null ? t : { input: tokens.input + t.input, output: tokens.output + t.output, cached: tokens.cached + t.cached };
    }
    const generic = parseAgentOutput(stdout);
    // claude was asked for JSON output and printed none: it produced no result.
    if (generic.failure) return { ...generic, tokens, reportedModel: streamModel };
    return { ...failed(generic.resultSummary, "no_result", "the agent printed no JSON result (claude -p --output-format stream-json)"), toolCalls: tools.list, messages: tools.messages, sessionId, tokens, reportedModel: streamModel };
  }
  // The result lists every denied call (older CLIs report denials only here).
  for (const d of (Array.isArray(final.permission_denials) ? final.permission_denials : []).map(obj)) tools.deny(str(d.tool_use_id), "permission_denied");
  const text = typeof final.result === "string" ? final.result : "";
  const summary = answerSummary(text);
  const field = final.total_cost_usd !== undefined ? "total_cost_usd" : "cost_usd";
  const cost = reportedCost(summary, field, final.total_cost_usd ?? final.cost_usd);
  const tokens = "usage" in final ? tokensOf(obj(final.usage)) : null;
  const models = Object.keys(obj(final.modelUsage));
  const facts = { tokens, sessionId, reportedModel: models[0] ?? streamModel, answerText: text || null, toolCalls: tools.list, messages: tools.messages };
  // A refused cost is reported first: the budget must never read it as 0.
  if (cost.failure) return { ...cost, ...facts };
  const v = verdict(final, summary);
  return v ? { ...v, ...facts, costUsd: cost.costUsd, costSource: cost.costSource } : { ...cost, ...facts };
}

