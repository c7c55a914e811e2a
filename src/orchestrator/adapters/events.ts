/**
 * Shared pieces of the CLI adapters' output parsing: JSON-lines streams,
 * bounded text, a provider's error message dug out of the JSON a CLI
 * wraps it in, and the tool-call list.
 */
import type { ToolCall } from "../result.ts";

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

function tryJson(text: string): unknown {
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
  private readonly byId = new Map<string, ToolCall>();

  start(id: string | null, name: string, input: unknown): void {
    const call: ToolCall = { name: clip(name, 200), input: clip(typeof input === "string" ? input : JSON.stringify(input ?? null), MAX_TOOL_TEXT), status: null, output: null };
    this.list.push(call);
    if (id) this.byId.set(id, call);
  }

  has(id: string | null): boolean {
    return id !== null && this.byId.has(id);
  }

  finish(id: string | null, status: string, output: unknown): void {
    const call = id ? this.byId.get(id) : undefined;
    if (!call) return;
    call.status = status;
    const text = typeof output === "string" ? output : output === undefined || output === null ? null : JSON.stringify(output);
    call.output = text === null ? null : clip(text, MAX_TOOL_TEXT);
  }
}
