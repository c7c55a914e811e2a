/**
 * What an agent produced, read from its stdout. The contract for script and
 * command agents (documented in docs/ and examples/demo/README):
 *
 *  1. a last non-empty line that is a JSON object with `result_summary`
 *     and/or `cost_usd`, e.g. `{"result_summary": "added tests", "cost_usd": 0.02}`;
 *  2. else the last line starting with `RESULT:` (the rest of the line);
 *  3. else the last non-empty line of stdout.
 * An agent with no output has no summary (null) and costs 0.
 */

export interface AgentResult {
  resultSummary: string | null;
  costUsd: number;
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

export function parseAgentOutput(stdout: string): AgentResult {
  const lines = nonEmptyLines(stdout);
  const last = lines.at(-1);
  if (last === undefined) return { resultSummary: null, costUsd: 0 };
  if (last.startsWith("{")) {
    try {
      const obj = JSON.parse(last) as unknown;
      if (obj && typeof obj === "object" && !Array.isArray(obj) && ("result_summary" in obj || "cost_usd" in obj)) {
        const o = obj as { result_summary?: unknown; cost_usd?: unknown };
        const summary = o.result_summary === undefined || o.result_summary === null ? null : bound(String(o.result_summary));
        return { resultSummary: summary, costUsd: validCost(o.cost_usd) ?? 0 };
      }
    } catch {
      /* not JSON: an ordinary last line */
    }
  }
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = /^RESULT:\s?(.*)$/.exec(lines[i]!);
    if (m) return { resultSummary: bound(m[1]!.trim()), costUsd: 0 };
  }
  return { resultSummary: bound(last), costUsd: 0 };
}

/**
 * `claude -p --output-format json`: one JSON object (the last JSON line)
 * with `result` and `total_cost_usd` (older CLIs: `cost_usd`).
 */
export function parseClaudeOutput(stdout: string): AgentResult {
  const lines = nonEmptyLines(stdout);
  for (let i = lines.length - 1; i >= 0; i--) {
    if (!lines[i]!.startsWith("{")) continue;
    try {
      const o = JSON.parse(lines[i]!) as { result?: unknown; total_cost_usd?: unknown; cost_usd?: unknown };
      if (o && typeof o === "object" && ("result" in o || "total_cost_usd" in o)) {
        const text = typeof o.result === "string" ? o.result.trim() : "";
        return { resultSummary: text ? bound(text) : null, costUsd: validCost(o.total_cost_usd) ?? validCost(o.cost_usd) ?? 0 };
      }
    } catch {
      /* keep looking */
    }
  }
  return parseAgentOutput(stdout);
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
  return { resultSummary: r.resultSummary, costUsd: r.costUsd || cost };
}
