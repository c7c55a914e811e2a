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

export interface AgentResult {
  resultSummary: string | null;
  costUsd: number;
  /** Why this output is not a success although the agent exited 0 (a failed signal), or null. */
  failure: string | null;
  /** One line explaining `failure`. */
  failureDetail: string | null;
}

/** Result summaries are stored on the task; keep them bounded. */
export const MAX_SUMMARY_CHARS = 4000;

function bound(s: string): string {
  return s.length > MAX_SUMMARY_CHARS ? s.slice(0, MAX_SUMMARY_CHARS - 1) + "…" : s;
}

function nonEmptyLines(text: string): string[] {
  return text
    .split(/\r\n|\r|\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
}

function validCost(x: unknown): number | null {
  return typeof x === "number" && Number.isFinite(x) && x >= 0 ? x : null;
}

function ok(resultSummary: string | null, costUsd: number): AgentResult {
  return { resultSummary, costUsd, failure: null, failureDetail: null };
}

function failed(resultSummary: string | null, failure: string, failureDetail: string): AgentResult {
  return { resultSummary, costUsd: 0, failure, failureDetail };
}

/** A cost field as reported: absent/null is 0, a valid number is itself, anything else is refused. */
function reportedCost(summary: string | null, field: string, x: unknown): AgentResult {
  if (x === undefined || x === null) return ok(summary, 0);
  const c = validCost(x);
  if (c !== null) return ok(summary, c);
  const shown = typeof x === "number" ? (Number.isNaN(x) ? "NaN" : x === Infinity ? "Infinity (e.g. 1e400)" : x === -Infinity ? "-Infinity" : String(x)) : JSON.stringify(x);
  return failed(summary, "invalid_cost", `the agent reported ${field} = ${shown}; a cost must be a finite number >= 0`);
}

export function parseAgentOutput(stdout: string): AgentResult {
  const lines = nonEmptyLines(stdout);
  const last = lines.at(-1);
  if (last === undefined) return ok(null, 0);
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
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = /^RESULT:\s?(.*)$/.exec(lines[i]!);
    if (m) return ok(bound(m[1]!.trim()), 0);
  }
  return ok(bound(last), 0);
}

interface ClaudeResult {
  result?: unknown;
  total_cost_usd?: unknown;
  cost_usd?: unknown;
  is_error?: unknown;
  subtype?: unknown;
  permission_denials?: unknown;
}

function deniedTools(denials: unknown[]): string {
  const names = denials.map((d) => (d && typeof d === "object" && typeof (d as { tool_name?: unknown }).tool_name === "string" ? (d as { tool_name: string }).tool_name : "?"));
  return [...new Set(names)].join(", ");
}

/** What a claude result object says about the attempt, before its cost is looked at. */
function claudeVerdict(o: ClaudeResult, summary: string | null): AgentResult | null {
  if (Array.isArray(o.permission_denials) && o.permission_denials.length > 0) {
    const n = o.permission_denials.length;
    return failed(summary, "permission_denied", `the agent was denied ${n} tool use(s) (${deniedTools(o.permission_denials)}); allow them (agent.args, e.g. --permission-mode or --allowedTools) or the task cannot be done`);
  }
  if (o.is_error === true) {
    return failed(summary, "agent_error", `the agent reported an error${typeof o.subtype === "string" ? ` (${o.subtype})` : ""}${summary ? `: ${summary}` : ""}`);
  }
  if (typeof o.result !== "string") return failed(summary, "no_result", "the agent's JSON result has no 'result' text");
  return null;
}

/**
 * `claude -p --output-format json`: one JSON object (the last JSON line)
 * with `result` and `total_cost_usd` (older CLIs: `cost_usd`). A result with
 * `permission_denials`, `is_error: true` or no `result` is a failure.
 */
export function parseClaudeOutput(stdout: string): AgentResult {
  const lines = nonEmptyLines(stdout);
  for (let i = lines.length - 1; i >= 0; i--) {
    if (!lines[i]!.startsWith("{")) continue;
    let o: ClaudeResult;
    try {
      o = JSON.parse(lines[i]!) as ClaudeResult;
    } catch {
      continue;
    }
    if (!o || typeof o !== "object" || Array.isArray(o)) continue;
    if (!("result" in o || "total_cost_usd" in o || "is_error" in o || "permission_denials" in o)) continue;
    const text = typeof o.result === "string" ? o.result.trim() : "";
    const summary = text ? bound(text) : null;
    const field = o.total_cost_usd !== undefined ? "total_cost_usd" : "cost_usd";
    const cost = reportedCost(summary, field, o.total_cost_usd ?? o.cost_usd);
    const verdict = claudeVerdict(o, summary);
    // A refused cost is reported first: the budget must never read it as 0.
    if (cost.failure) return cost;
    return verdict ? { ...verdict, costUsd: cost.costUsd } : cost;
  }
  const generic = parseAgentOutput(stdout);
  // claude asked for JSON output and printed none: it produced no result.
  return generic.failure ? generic : failed(generic.resultSummary, "no_result", "the agent printed no JSON result (claude -p --output-format json)");
}

/** aider prints `Cost: $0.0123 message, $0.0456 session.`; the session total of the last such line is the cost. */
export function parseAiderOutput(stdout: string): AgentResult {
  let cost = 0;
  const kept: string[] = [];
  for (const line of nonEmptyLines(stdout)) {
    const m = /Cost:\s*\$([0-9.]+)\s*message,\s*\$([0-9.]+)\s*session/i.exec(line);
    if (m) {
      cost = Number(m[2]) || 0;
      continue;
    }
    if (/^Tokens:/i.test(line)) continue;
    kept.push(line);
  }
  const r = parseAgentOutput(kept.join("\n"));
  return r.failure ? r : { ...r, costUsd: r.costUsd || cost };
}
