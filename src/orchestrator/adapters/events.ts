/**
 * Shared pieces of the CLI adapters' output parsing: JSON-lines streams,
 * bounded text, a provider's error message dug out of the JSON a CLI
 * wraps it in, and the tool-call list.
 */
import type { AssistantMessage, FailureClass, Refusal, ToolCall } from "../result.ts";

/** A tool's input/output as recorded in the step journal: bounded, so a 1 MB file write is not copied whole. */
export const MAX_TOOL_TEXT = 2000;
/** A failure reason is one line of at most this many characters. */
export const MAX_REASON_CHARS = 500;

export function clip(text: string, max: number): string {
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
}

export type JsonObject = Record<string, unknown>;

/** Every line of `text` that is a JSON object, in order (other lines, e.g. a torn first line, are skipped). */
export function jsonObjects(text: string): JsonObject[] {
  const out: JsonObject[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line.startsWith("{")) continue;
    try {
      const o = JSON.parse(line) as unknown;
      if (o && typeof o === "object" && !Array.isArray(o)) out.push(o as JsonObject);
    } catch {
      /* not a JSON line */
    }
  }
  return out;
}

export const str = (x: unknown): string | null => (typeof x === "string" ? x : null);
export const num = (x: unknown): number => (typeof x === "number" && Number.isFinite(x) && x >= 0 ? x : 0);
export const obj = (x: unknown): JsonObject => (x && typeof x === "object" && !Array.isArray(x) ? (x as JsonObject) : {});

/** The JSON value of `text`, or undefined when it is not JSON. */
export function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The provider's own message in a CLI's error text: CLIs pass the HTTP
 * body on as JSON (`{"error":{"message":…}}`), sometimes inside a string
 * (`[API Error: {…}]`, a JSON string of JSON). First line, bounded.
 */
export function providerMessage(text: string, depth = 0): string {
  const t = text.trim();
  const first = t.indexOf("{");
  const last = t.lastIndexOf("}");
  const doc = first >= 0 && last > first ? tryJson(t.slice(first, last + 1)) : undefined;
  if (doc && typeof doc === "object" && depth < 4) {
    const o = doc as JsonObject;
    const inner = str(obj(o.error).message) ?? str(o.message);
    if (inner) return providerMessage(inner, depth + 1);
  }
  const line = t.split("\n").find((l) => l.trim() !== "") ?? "";
  return clip(line.trim(), MAX_REASON_CHARS);
}

/** The class of an HTTP status a provider answered with; null for one that says nothing about retrying. */
export function statusClass(status: number): FailureClass | null {
  if (status === 401 || status === 403) return "auth";
  if (status === 400 || status === 404 || status === 413 || status === 422) return "invalid_request";
  if (status === 429) return "rate_limited";
  if (status === 408) return "network";
  if (status >= 500 && status <= 599) return "server_error";
  return null;
}

/** `status 401`, `"code":401`, `HTTP 429`, `API Error: 400`: an HTTP status named in a CLI's error text. */
const STATUS_IN_TEXT = /(?:\bstatus(?:\s+code)?|"code"|\bcode|\bHTTP(?:\/\d(?:\.\d)?)?|\bAPI Error)\W{0,3}([1-5]\d\d)\b/i;

/** What each CLI prints for each class when it names no status (first match wins, in this order). */
const CLASS_WORDS: [FailureClass, RegExp][] = [
  ["auth", /invalid[ _-]?(?:x-)?api[ _-]?key|incorrect api key|authentication[ _]?(?:error|failed)|\bunauthori[sz]ed\b|\bUNAUTHENTICATED\b|\bPERMISSION_DENIED\b|\bforbidden\b|api key not valid/i],
  ["invalid_request", /invalid_request_error|\bINVALID_ARGUMENT\b|\bbad request\b/i],
  ["rate_limited", /rate[ _-]?limit|too many requests|\bRESOURCE_EXHAUSTED\b|resource has been exhausted|exceeded your current quota/i],
  ["server_error", /internal server error|\boverloaded|service unavailable|bad gateway|gateway timeout|high demand|\bUNAVAILABLE\b|\bINTERNAL\b|server[ _-]error/i],
  ["network", /ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|socket hang up|fetch failed|error sending request|connection (?:refused|reset|error|closed)|stream disconnected|network error/i],
];

/**
 * The provider failure a CLI's error text reports: by the HTTP status it
 * names, else by the words each CLI uses (claude's "Invalid API key",
 * codex's "unexpected status 401 Unauthorized" or the raw body, gemini's
 * `[API Error: {"error":{"code":401,…,"status":"UNAUTHENTICATED"}}]`).
 * Only ever applied to a failure's own text, never to an answer.
 */
export function classifyFailure(text: string, status: number | null = null): FailureClass | null {
  const named = status ?? Number(STATUS_IN_TEXT.exec(text)?.[1] ?? NaN);
  if (Number.isInteger(named)) {
    const c = statusClass(named);
    if (c) return c;
  }
  for (const [cls, re] of CLASS_WORDS) if (re.test(text)) return cls;
  return null;
}

const RETRY_AFTER_IN_TEXT = [
  // "Please retry in 2s.", "Please try again in 1.5s", "retry after 20 seconds", "Retrying after 5306ms"
  /\b(?:retry|try again|retrying)\s+(?:after|in)\s+(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?)\b/i,
  // Google's RetryInfo detail: "retryDelay":"2s"
  /"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)(s)"/i,
  // a Retry-After header a CLI printed
  /\bretry-after\W{0,3}(\d+(?:\.\d+)?)()\b/i,
];

/** How long (seconds) a CLI's error text says the provider asked to wait, or null. */
export function retryAfterIn(text: string): number | null {
  for (const re of RETRY_AFTER_IN_TEXT) {
    const m = re.exec(text);
    if (!m) continue;
    const n = Number(m[1]);
    if (!Number.isFinite(n) || n < 0) continue;
    return /^m/i.test(m[2] ?? "") ? n / 1000 : n;
  }
  return null;
}

/** The last non-empty lines of a CLI's stderr, for a crash report. */
export function lastLines(text: string, n = 5): string {
  return text
    .split("\n")
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== "")
    .slice(-n)
    .join("\n");
}

/** Tool calls in order, with results attached by id when they arrive. */
export class ToolCalls {
  readonly list: ToolCall[] = [];
  /** The assistant's text messages between the calls (for the task trace). */
  readonly messages: AssistantMessage[] = [];
  private readonly byId = new Map<string, ToolCall>();

  start(id: string | null, name: string, input: unknown): void {
    const call: ToolCall = { name: clip(name, 200), input: clip(typeof input === "string" ? input : JSON.stringify(input ?? null), MAX_TOOL_TEXT), status: null, output: null };
    this.list.push(call);
    if (id) this.byId.set(id, call);
  }

  /** An assistant text message, after the calls seen so far. */
  say(text: string): void {
    if (text.trim() !== "") this.messages.push({ afterTools: this.list.length, text: clip(text.trim(), MAX_TOOL_TEXT) });
  }

  get(id: string | null): ToolCall | undefined {
    return id === null ? undefined : this.byId.get(id);
  }

  has(id: string | null): boolean {
    return id !== null && this.byId.has(id);
  }

  /** The CLI refused the call (a denial event may come before or after its result): status `denied`, whatever the result says. */
  deny(id: string | null, refused: Refusal, output?: unknown): void {
    const call = id ? this.byId.get(id) : undefined;
    if (!call) return;
    call.status = "denied";
    call.refused = refused;
    if (output !== undefined && call.output === null) this.finish(id, "denied", output);
  }

  finish(id: string | null, status: string, output: unknown): void {
    const call = id ? this.byId.get(id) : undefined;
    if (!call) return;
    // A refusal already reported stays one: the tool's error result is its consequence.
    if (call.status !== "denied") call.status = status;
    const text = typeof output === "string" ? output : output === undefined || output === null ? null : JSON.stringify(output);
    call.output = text === null ? null : clip(text, MAX_TOOL_TEXT);
  }
}
