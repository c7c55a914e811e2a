import { describe, expect, test } from "bun:test";
import { classifyFailure, retryAfterIn, statusClass } from "../../../src/orchestrator/adapters/events.ts";

describe("classifyFailure: a provider failure as each CLI reports it", () => {
  test("by the HTTP status it names", () => {
    expect(statusClass(401)).toBe("auth");
    expect(statusClass(403)).toBe("auth");
    expect(statusClass(400)).toBe("invalid_request");
    expect(statusClass(429)).toBe("rate_limited");
    expect(statusClass(408)).toBe("network");
    expect(statusClass(529)).toBe("server_error");
    expect(statusClass(200)).toBeNull();
    expect(classifyFailure("anything", 401)).toBe("auth");
  });

  test("codex's texts", () => {
    expect(classifyFailure("unexpected status 401 Unauthorized: bad key, url: http://127.0.0.1:1/v1/responses")).toBe("auth");
    expect(classifyFailure('{"error":{"message":"max_tokens is too large","type":"invalid_request_error","param":null,"code":null}}')).toBe("invalid_request");
    expect(classifyFailure("exceeded retry limit, last status: 429 Too Many Requests")).toBe("rate_limited");
    expect(classifyFailure("We’re currently experiencing high demand, which may cause temporary errors.")).toBe("server_error");
    expect(classifyFailure("stream disconnected before completion: error sending request for url")).toBe("network");
  });

  test("gemini's and claude's texts", () => {
    expect(classifyFailure('[API Error: {"error":{"code":401,"message":"bad key","status":"UNAUTHENTICATED"}}]')).toBe("auth");
    expect(classifyFailure('[API Error: {"error":{"code":400,"message":"no","status":"INVALID_ARGUMENT"}}]')).toBe("invalid_request");
    expect(classifyFailure("[API Error: quota. Please retry in 2s.\nSuggested retry after 2s.]\nPlease wait and try again later. rate limit")).toBe("rate_limited");
    expect(classifyFailure('[API Error: {"error":{"code":500,"message":"boom","status":"INTERNAL"}}]')).toBe("server_error");
    expect(classifyFailure("Invalid API key · Fix external API key")).toBe("auth");
    expect(classifyFailure("API Error: 400 max_tokens is too large")).toBe("invalid_request");
    expect(classifyFailure("connect ECONNREFUSED 127.0.0.1:9")).toBe("network");
  });

  test("a failure that names no provider error has no class", () => {
    expect(classifyFailure("the agent printed no JSON result")).toBeNull();
    expect(classifyFailure("exit code 143")).toBeNull();
    expect(classifyFailure("")).toBeNull();
  });
});

describe("retryAfterIn: the wait a CLI's text shows", () => {
  test("seconds, milliseconds, RetryInfo, a header", () => {
    expect(retryAfterIn("Please retry in 2s.")).toBe(2);
    expect(retryAfterIn("Rate limit reached. Please try again in 1.5s.")).toBe(1.5);
    expect(retryAfterIn("Retrying after 5306ms...")).toBeCloseTo(5.306, 6);
    expect(retryAfterIn('"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"7s"}]')).toBe(7);
    expect(retryAfterIn("retry-after: 12")).toBe(12);
    expect(retryAfterIn("rate limited")).toBeNull();
  });
});

describe("the adapters' parsers carry the class and the wait", () => {
  test("claude: api_error_status decides; codex: its raw text; gemini: its error message", async () => {
    const { parseClaudeOutput } = await import("../../../src/orchestrator/adapters/claude.ts");
    const { parseCodexOutput } = await import("../../../src/orchestrator/adapters/codex.ts");
    const { parseGeminiOutput } = await import("../../../src/orchestrator/adapters/gemini.ts");
    const claude = parseClaudeOutput(JSON.stringify({ type: "result", is_error: true, api_error_status: 429, result: "API Error: Request rejected (429) · slow down", total_cost_usd: 0 }));
    expect(claude).toMatchObject({ failure: "agent_error", errorClass: "rate_limited", retryAfterS: null });
    const ok = parseClaudeOutput(JSON.stringify({ type: "result", is_error: false, result: "the 401 page is fixed", total_cost_usd: 0 }));
    expect(ok).toMatchObject({ failure: null, errorClass: null });
    const codex = parseCodexOutput(JSON.stringify({ type: "turn.failed", error: { message: "unexpected status 401 Unauthorized: bad key" } }));
    expect(codex).toMatchObject({ failure: "agent_error", failureDetail: "codex: unexpected status 401 Unauthorized: bad key", errorClass: "auth" });
    const gemini = parseGeminiOutput(JSON.stringify({ type: "result", status: "error", error: { message: "[API Error: rate limit. Please retry in 4s.]" } }));
    expect(gemini).toMatchObject({ failure: "agent_error", errorClass: "rate_limited", retryAfterS: 4 });
  });
});
