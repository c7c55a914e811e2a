/**
 * What an agent produced, read from its stdout. The contract for script and
 * command agents (documented in docs/ and examples/demo/README):
 *
 *  1. a last non-empty line that is a JSON object with `result_summary`
 *     and/or `cost_usd`, e.g. `{"result_summary": "added tests", "cost_usd": 0.02}`;
 *  2. else the last line starting with `RESULT:` (the rest of the line);
 *  3. else the last non-empty line of stdout.
 * An agent with no output has no summary (null) and costs 0.
 *
 * A reported cost that is not a finite, non-negative number (`1e400`,
 * `-1000`, `"0.5"`) is never read as 0: the result carries the failure
 * `invalid_cost` and the attempt fails. Adapters whose CLI reports its own
 * failure (claude's `is_error`, `permission_denials`, a missing `result`)
 * set `failure` likewise, so an agent that exited 0 without doing anything
 * is not a success.
 */

/** Where a cost came from: the agent itself, tokens x `models.prices`, or nowhere (recorded as such, never as a silent 0). */
export type CostSource = "cli" | "price_table" | "unknown";

/** Tokens of one attempt; `input` includes `cached` (OpenAI/Gemini semantics). */
export interface TokenUsage {
  input: number;
  output: number;
  cached: number;
}

/** One tool call the CLI reported (claude stream-json, codex --json items, gemini stream-json). */
export interface ToolCall {
  name: string;
  /** The call's input as JSON text, bounded. */
  input: string;
  /**
   * "ok", "error", "denied" (the CLI refused it: its permission mode or
   * sandbox, or the tool is not offered), or null when the CLI never
   * reported the result.
   */
  status: string | null;
  /** First part of the tool's output, when reported. */
  output: string | null;
  /** Why a `denied` call was refused: the permission mode or sandbox, or no tool able to write was offered. */
  refused?: Refusal;
}

/** Why the CLI refused a tool call (see ToolCall.refused and src/orchestrator/outcome.ts). */
export type Refusal = "permission_denied" | "no_write_tool";

/** A text message of the assistant's, placed after the first `afterTools` tool calls (bounded). */
export interface AssistantMessage {
  afterTools: number;
  text: string;
}

/**
 * What kind of provider failure an agent reported, as its CLI shows it:
 * `auth` (401/403, an invalid key) and `invalid_request` (400) fail the task
 * at once (a retry gets the same answer); `rate_limited` (429),
 * `server_error` (5xx, overloaded) and `network` (no connection) are
 * transient and retried with back-off.
 */
export const FAILURE_CLASSES = ["auth", "invalid_request", "rate_limited", "server_error", "network"] as const;
export type FailureClass = (typeof FAILURE_CLASSES)[number];
export const PERMANENT_FAILURES: readonly FailureClass[] = ["auth", "invalid_request"];

/** What an agent's output says of its work: what an adapter reads (AgentResult) and an attempt keeps (AttemptResult). */
export interface AgentReport {
  resultSummary: string | null;
  costUsd: number;
  costSource: CostSource;
  tokens: TokenUsage | null;
  /** The CLI's session (thread) id, when it reports one. */
  sessionId: string | null;
  /** The model the CLI says it used, when it says. */
  reportedModel: string | null;
  toolCalls: ToolCall[];
  /** How long the provider asked to wait before a retry (Retry-After, "retry in 2s"), in seconds, when shown. */
  retryAfterS: number | null;
}

export interface AgentResult extends AgentReport {
  /** The whole final answer (unbounded): the manager's plan is read from it. Null = read stdout. */
  answerText: string | null;
  /** The assistant's text messages, in order, when the adapter reads them (claude, codex). */
  messages?: AssistantMessage[];
  /** Why this output is not a success although the agent exited 0 (a failed signal), or null. */
  failure: string | null;
  /** One line explaining `failure`; for a CLI that failed, its own message. */
  failureDetail: string | null;
  /** The provider failure behind `failure`, when the CLI's output says which (see FailureClass). */
  errorClass: FailureClass | null;
}

/** Result summaries are stored on the task; keep them bounded. */
export const MAX_SUMMARY_CHARS = 4000;

export function bound(s: string): string {
  return s.length > MAX_SUMMARY_CHARS ? s.slice(0, MAX_SUMMARY_CHARS - 1) + "…" : s;
}

export function nonEmptyLines(text: string): string[] {
  return text
    .split(/\r\n|\r|\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
}

export function validCost(x: unknown): number | null {
  return typeof x === "number" && Number.isFinite(x) && x >= 0 ? x : null;
}

const EMPTY = { tokens: null, sessionId: null, reportedModel: null, answerText: null, toolCalls: [] as ToolCall[], errorClass: null, retryAfterS: null };

export function ok(resultSummary: string | null, costUsd: number, costSource: CostSource = "cli"): AgentResult {
  return { ...EMPTY, resultSummary, costUsd, costSource, failure: null, failureDetail: null };
}

export function failed(resultSummary: string | null, failure: string, failureDetail: string): AgentResult {
  return { ...EMPTY, resultSummary, costUsd: 0, costSource: "unknown", failure, failureDetail };
}

/** A cost field as reported: absent/null is unknown, a valid number is itself, anything else is refused. */
export function reportedCost(summary: string | null, field: string, x: unknown): AgentResult {
  if (x === undefined || x === null) return ok(summary, 0, "unknown");
  const c = validCost(x);
  if (c !== null) return ok(summary, c);
  const shown = typeof x === "number" ? (Number.isNaN(x) ? "NaN" : x === Infinity ? "Infinity (e.g. 1e400)" : x === -Infinity ? "-Infinity" : String(x)) : JSON.stringify(x);
  return failed(summary, "invalid_cost", `the agent reported ${field} = ${shown}; a cost must be a finite number >= 0`);
}

export function parseAgentOutput(stdout: string): AgentResult {
  const lines = nonEmptyLines(stdout);
  const last = lines.at(-1);
  if (last === undefined) return ok(null, 0, "unknown");
  if (last.startsWith("{")) {
    try {
      const obj = JSON.parse(last) as unknown;
      if (obj && typeof obj === "object" && !Array.isArray(obj) && ("result_summary" in obj || "cost_usd" in obj)) {
        const o = obj as { result_summary?: unknown; cost_usd?: unknown };
        const summary = o.result_summary === undefined || o.result_summary === null ? null : bound(String(o.result_summary));
        return reportedCost(summary, "cost_usd", o.cost_usd);
      }
    } catch {
      /* not JSON: an ordinary last line */
    }
  }
  return ok(summaryOf(lines), 0, "unknown");
}

/** The last `RESULT:` line's text, else the last non-empty line (bounded), of an answer. */
export function summaryOf(lines: string[]): string | null {
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = /^RESULT:\s?(.*)$/.exec(lines[i]!);
    if (m) return bound(m[1]!.trim());
  }
  const last = lines.at(-1);
  return last === undefined ? null : bound(last);
}

/** The summary of a CLI's final answer text: its `RESULT:` line, else the whole text (bounded). */
export function answerSummary(text: string): string | null {
  const lines = nonEmptyLines(text);
  if (lines.some((l) => l.startsWith("RESULT:"))) return summaryOf(lines);
  const t = text.trim();
  return t ? bound(t) : null;
}

/** aider prints `Cost: $0.0123 message, $0.0456 session.`; the session total of the last such line is the cost. */
export function parseAiderOutput(stdout: string): AgentResult {
  let cost = 0;
  let sawCost = false;
  const kept: string[] = [];
  for (const line of nonEmptyLines(stdout)) {
    const m = /Cost:\s*\$([0-9.]+)\s*message,\s*\$([0-9.]+)\s*session/i.exec(line);
    if (m) {
      cost = Number(m[2]) || 0;
      sawCost = true;
      continue;
    }
    if (/^Tokens:/i.test(line)) continue;
    kept.push(line);
  }
  const r = parseAgentOutput(kept.join("\n"));
  if (r.failure || r.costSource === "cli" || !sawCost) return r;
  return { ...r, costUsd: cost, costSource: "cli" };
}

/** USD per million tokens of one model (bernstein.yaml `models.prices`). */
export interface Price {
  input_usd_per_mtok: number;
  output_usd_per_mtok: number;
  cached_input_usd_per_mtok?: number;
}

/**
 * The cost of a result whose agent reported tokens but no cost: tokens x
 * the price of the requested model (else the model the CLI said it used).
 * Without tokens or a price the cost stays `unknown`.
 */
export function priced(r: AgentResult, model: string | null, prices: Record<string, Price>): AgentResult {
  if (r.costSource === "cli" || r.tokens === null) return r;
  const price = (model !== null ? prices[model] : undefined) ?? (r.reportedModel !== null ? prices[r.reportedModel] : undefined);
  if (!price) return { ...r, costSource: "unknown" };
  const cached = Math.min(r.tokens.cached, r.tokens.input);
  const usd =
    ((r.tokens.input - cached) * price.input_usd_per_mtok + cached * (price.cached_input_usd_per_mtok ?? price.input_usd_per_mtok) + r.tokens.output * price.output_usd_per_mtok) / 1e6;
  return { ...r, costUsd: usd, costSource: "price_table" };
}
