/**
 * A fake model provider for the real agent CLIs: one Bun.serve on
 * 127.0.0.1:0 that speaks enough of three wire protocols for
 * `claude`, `codex` and `gemini` to complete a task offline:
 *
 *   Anthropic Messages   POST /v1/messages (JSON or SSE when `stream: true`)
 *   OpenAI Responses     POST /v1/responses (SSE)
 *   Gemini               POST /v1beta/models/<m>:generateContent | :streamGenerateContent
 *
 * What it answers is chosen by a marker in the conversation's text
 * (`FAKE_SCENARIO=<name>`), else by the prompt itself (a manager's planning
 * request gets a JSON plan), else a plain answer:
 *
 *   write_file   a tool call that writes `FAKE_FILE=<path>` with `FAKE_CONTENT=<text>`,
 *                then, once the tool result comes back, an answer
 *   resumable    a multi-turn session: a tool call writing `FAKE_FILE`, then (its result in
 *                the conversation) a second one writing `FAKE_FILE2` — which hangs the first
 *                time a conversation keyed `FAKE_ONCE=<token>` gets there, so a test can stop
 *                the agent during its second tool call — then (two results back) an answer.
 *                Resumed, the CLI must send the earlier turns back: the fake answers from the
 *                tool results it is sent, so a fresh redo writes `FAKE_FILE` again.
 *   error_400    HTTP 400 with the message FAKE_400_MESSAGE
 *   error_401    HTTP 401
 *   error_429_once  HTTP 429 with `Retry-After: FAKE_RETRY_AFTER` seconds (default 2) the first
 *                time a conversation keyed `FAKE_ONCE=<token>` asks, then the default answer
 *   error_500_once  HTTP 500 the first time (keyed likewise), then the default answer
 *   hang         accepts the request and never answers
 *   multiline    a three-line answer
 *   FAKE_SLOW_MS=<n>  (with any scenario) the answer to a request that carries a tool result
 *                waits n ms: an agent is seen between its tool call and its exit
 *   FAKE_HOLD_UNTIL=<path>  likewise, the answer waits until that file exists (a test releases it)
 *   (planning)   a JSON plan of two tasks, the second depending on the first (roles from
 *                `FAKE_ROLES=<role1>,<role2>` in the goal)
 *   (default)    "fake answer from <model>", so a replay on another model shows a diff
 *
 * Every request is counted and logged (method, path, model, scenario) so a
 * test can show the CLIs talked to this API and nothing else.
 *
 * Run as a program (`bun test/helpers/fake-provider.ts`), it prints
 * `{"port":N}` on stdout and then one JSON line with its request log each
 * time it reads a line on stdin; it exits when stdin closes. That is how a
 * test runs it inside a loopback-only network namespace and still reads it.
 */

export const FAKE_400_MESSAGE = "fake provider: max_tokens is too large for this model (400 test)";
export const FAKE_401_MESSAGE = "fake provider: invalid x-api-key (401 test)";
export const FAKE_429_MESSAGE = "fake provider: rate limit reached (429 test)";
export const FAKE_500_MESSAGE = "fake provider: internal server error (500 test)";

export interface LoggedRequest {
  method: string;
  path: string;
  api: "anthropic" | "openai" | "gemini" | "other";
  model: string | null;
  scenario: string;
  stream: boolean;
  /** UTF-8 bytes of the request body. */
  bytes: number;
  /** Whether the request carried the key the fake was started with (FAKE_PROVIDER_KEY), in the header its API uses. */
  authed: boolean;
  /** `FAKE_MARK=<x>` tokens found in the body: a test puts them at both ends of a huge prompt to see it arrive whole. */
  marks: string[];
  /** When the request arrived (Unix milliseconds). */
  at: number;
  /** Tool results the conversation sent back (the earlier turns of a multi-turn session), counted by distinct call id. */
  tool_results: number;
  /** The file a tool call of this answer writes, when it is one. */
  tool_path: string | null;
}

export interface FakeProvider {
  readonly url: string;
  readonly port: number;
  readonly requests: LoggedRequest[];
  stop(): Promise<void>;
}

type Answer =
  | { kind: "text"; text: string }
  | { kind: "tool"; path: string; content: string }
  | { kind: "error"; status: number; message: string; retryAfterS?: number }
  | { kind: "hang" };

const PLAN = [
  { id: "P1", title: "write the parser", description: "FAKE_SCENARIO=write_file FAKE_FILE=parser.txt FAKE_CONTENT=parser" },
  { id: "P2", title: "test the parser", depends_on: ["P1"] },
];

function marker(text: string, name: string): string | null {
  const m = new RegExp(`${name}=(\\S+)`).exec(text);
  return m ? m[1]! : null;
}

/** Decide the answer from all the text of the conversation and how many tool results it sent back; `seen` holds the FAKE_ONCE tokens already failed once. */
function decide(text: string, lastUserText: string, toolResults: number, model: string | null, seen: Set<string>): Answer {
  const toolDone = toolResults > 0;
  const scenario = marker(lastUserText, "FAKE_SCENARIO") ?? marker(text, "FAKE_SCENARIO");
  const firstTime = (): boolean => {
    const key = `${scenario}:${marker(text, "FAKE_ONCE") ?? ""}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  };
  switch (scenario) {
    case "error_429_once":
      if (firstTime()) return { kind: "error", status: 429, message: FAKE_429_MESSAGE, retryAfterS: Number(marker(text, "FAKE_RETRY_AFTER") ?? 2) };
      break;
    case "error_500_once":
      if (firstTime()) return { kind: "error", status: 500, message: FAKE_500_MESSAGE };
      break;
    case "error_400":
      return { kind: "error", status: 400, message: FAKE_400_MESSAGE };
    case "error_401":
      return { kind: "error", status: 401, message: FAKE_401_MESSAGE };
    case "hang":
      return { kind: "hang" };
    case "multiline":
      return { kind: "text", text: `first line of the answer from ${model ?? "the default model"}\nsecond line\nRESULT: answered on three lines by ${model ?? "the default model"}` };
    case "resumable": {
      const first = marker(text, "FAKE_FILE") ?? "first.txt";
      const second = marker(text, "FAKE_FILE2") ?? "second.txt";
      if (toolResults === 0) return { kind: "tool", path: first, content: `${marker(text, "FAKE_CONTENT") ?? "first"}\n` };
      if (toolResults === 1) return firstTime() ? { kind: "hang" } : { kind: "tool", path: second, content: `${marker(text, "FAKE_CONTENT") ?? "second"}-2\n` };
      return { kind: "text", text: `I wrote ${first} and ${second}.\nRESULT: wrote ${first} and ${second}` };
    }
    case "write_file": {
      const path = marker(text, "FAKE_FILE") ?? "out.txt";
      if (toolDone) return { kind: "text", text: `I wrote ${path}.\nRESULT: wrote ${path}` };
      return { kind: "tool", path, content: (marker(text, "FAKE_CONTENT") ?? "hello") + "\n" };
    }
  }
  if (text.includes("Break the goal below into small tasks")) {
    // `FAKE_ROLES=a,b` in the goal gives the plan's two tasks those roles (a plan whose roles pick adapters).
    const roles = marker(text, "FAKE_ROLES")?.split(",") ?? [];
    const plan = PLAN.map((t, i) => (roles[i] ? { ...t, role: roles[i] } : t));
    return { kind: "text", text: "Here is the plan:\n```json\n" + JSON.stringify(plan, null, 2) + "\n```" };
  }
  return { kind: "text", text: `fake answer from ${model ?? "the default model"}\nRESULT: answered by ${model ?? "the default model"}` };
}

/** FAKE_SLOW_MS / FAKE_HOLD_UNTIL: hold the answer that follows a tool result. */
async function slowAfterTool(text: string, toolDone: boolean): Promise<void> {
  if (!toolDone) return;
  const ms = Number(marker(text, "FAKE_SLOW_MS") ?? 0);
  if (ms > 0) await Bun.sleep(ms);
  const hold = marker(text, "FAKE_HOLD_UNTIL");
  if (hold) while (!(await Bun.file(hold).exists())) await Bun.sleep(50);
}

function scenarioName(a: Answer, text: string): string {
  if (a.kind === "error") return `error_${a.status}`;
  if (a.kind === "hang") return "hang";
  if (a.kind === "tool") return marker(text, "FAKE_SCENARIO") === "resumable" ? "resumable" : "write_file";
  return marker(text, "FAKE_SCENARIO") ?? (text.includes("Break the goal below") ? "plan" : "answer");
}

const TOKENS = { input: 1200, output: 300, cached: 200 };

/** Every string in a JSON value, joined: the scenario markers may sit anywhere in it. */
function allText(x: unknown, out: string[] = []): string[] {
  if (typeof x === "string") out.push(x);
  else if (Array.isArray(x)) for (const y of x) allText(y, out);
  else if (x && typeof x === "object") for (const y of Object.values(x)) allText(y, out);
  return out;
}

function sse(events: { event?: string; data: unknown }[]): Response {
  const body = events.map((e) => `${e.event ? `event: ${e.event}\n` : ""}data: ${JSON.stringify(e.data)}\n\n`).join("");
  return new Response(body, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
}

function hangResponse(signal: AbortSignal): Response {
  // Headers never come: the client sees a request that does not answer.
  return new Response(
    new ReadableStream({
      start(controller) {
        signal.addEventListener("abort", () => controller.close());
      },
    }),
    { headers: { "content-type": "text/event-stream" } },
  );
}

function retryAfter(answer: { retryAfterS?: number }): Record<string, string> {
  return answer.retryAfterS === undefined ? {} : { "retry-after": String(answer.retryAfterS) };
}

// ------------------------------------------------------------- Anthropic

interface AnthropicBody {
  model?: string;
  stream?: boolean;
  messages?: { role: string; content: unknown }[];
  system?: unknown;
  tools?: { name: string }[];
}

function anthropicLastUser(body: AnthropicBody): { text: string; toolResults: number } {
  const msgs = body.messages ?? [];
  const ids = msgs.flatMap((m) => (Array.isArray(m.content) ? (m.content as { type?: string; tool_use_id?: string }[]).filter((c) => c.type === "tool_result").map((c, i) => c.tool_use_id ?? `#${i}`) : []));
  const toolResults = new Set(ids).size;
  const lastUser = [...msgs].reverse().find((m) => m.role === "user");
  return { text: lastUser ? allText(lastUser.content).join("\n") : "", toolResults };
}

function anthropic(body: AnthropicBody, answer: Answer, req: Request): Response {
  const model = body.model ?? "claude-fake";
  if (answer.kind === "error") {
    const type = ({ 401: "authentication_error", 429: "rate_limit_error", 500: "api_error" } as Record<number, string>)[answer.status] ?? "invalid_request_error";
    return Response.json({ type: "error", error: { type, message: answer.message } }, { status: answer.status, headers: retryAfter(answer) });
  }
  if (answer.kind === "hang") return hangResponse(req.signal);
  const usage = { input_tokens: TOKENS.input, output_tokens: TOKENS.output, cache_read_input_tokens: TOKENS.cached, cache_creation_input_tokens: 0 };
  const id = `msg_${crypto.randomUUID().replaceAll("-", "")}`;
  const block =
    answer.kind === "tool"
      ? { type: "tool_use", id: `toolu_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`, name: "Write", input: { file_path: answer.path, content: answer.content } }
      : { type: "text", text: answer.text };
  const stop = answer.kind === "tool" ? "tool_use" : "end_turn";
  if (!body.stream) {
    return Response.json({ id, type: "message", role: "assistant", model, content: [block], stop_reason: stop, stop_sequence: null, usage });
  }
  const start = block.type === "tool_use" ? { ...block, input: {} } : { type: "text", text: "" };
  const delta = block.type === "tool_use" ? { type: "input_json_delta", partial_json: JSON.stringify((block as { input: unknown }).input) } : { type: "text_delta", text: (block as { text: string }).text };
  return sse([
    { event: "message_start", data: { type: "message_start", message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } } },
    { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: start } },
    { event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta } },
    { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
    { event: "message_delta", data: { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: TOKENS.output } } },
    { event: "message_stop", data: { type: "message_stop" } },
  ]);
}

// ---------------------------------------------------------------- OpenAI

interface ResponsesBody {
  model?: string;
  input?: { type?: string; role?: string; content?: unknown }[];
  instructions?: string;
  tools?: { type: string; name?: string }[];
}

function openaiLastUser(body: ResponsesBody): { text: string; toolResults: number } {
  const items = body.input ?? [];
  const outputs = items.filter((i) => i.type === "function_call_output" || i.type === "custom_tool_call_output") as { call_id?: string }[];
  const toolResults = new Set(outputs.map((o, i) => o.call_id ?? `#${i}`)).size;
  const users = items.filter((i) => i.role === "user");
  return { text: users.length ? allText(users.at(-1)!.content).join("\n") : "", toolResults };
}

/** A codex tool call that writes the file: apply_patch when offered, else a shell command. */
function codexWriteCall(body: ResponsesBody, path: string, content: string): Record<string, unknown> {
  const callId = `call_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;
  const patch = `*** Begin Patch\n*** Add File: ${path}\n${content.replace(/\n$/, "").split("\n").map((l) => `+${l}`).join("\n")}\n*** End Patch\n`;
  const tools = body.tools ?? [];
  const custom = tools.find((t) => t.type === "custom" && t.name === "apply_patch");
  if (custom) return { type: "custom_tool_call", id: `ctc_${callId}`, status: "completed", call_id: callId, name: "apply_patch", input: patch };
  const fn = tools.find((t) => t.type === "function" && t.name === "apply_patch");
  if (fn) return { type: "function_call", id: `fc_${callId}`, status: "completed", call_id: callId, name: "apply_patch", arguments: JSON.stringify({ input: patch }) };
  const shell = tools.find((t) => t.type === "function" && (t.name === "shell_command" || t.name === "exec_command" || t.name === "shell"));
  const q = (x: string) => `'${x.replaceAll("'", "'\\''")}'`;
  const script = `printf '%s' ${q(content)} > ${q(path)}`;
  const args = shell?.name === "shell" ? { command: ["bash", "-lc", script] } : shell?.name === "exec_command" ? { cmd: script } : { command: script };
  return { type: "function_call", id: `fc_${callId}`, status: "completed", call_id: callId, name: shell?.name ?? "shell_command", arguments: JSON.stringify(args) };
}

function openai(body: ResponsesBody, answer: Answer, req: Request): Response {
  if (answer.kind === "error") {
    const type = ({ 401: "invalid_api_key", 429: "rate_limit_exceeded", 500: "server_error" } as Record<number, string>)[answer.status] ?? "invalid_request_error";
    // OpenAI says how long to wait in the message too ("Please try again in 2s.").
    const message = answer.retryAfterS !== undefined ? `${answer.message}. Please try again in ${answer.retryAfterS}s.` : answer.message;
    return Response.json({ error: { message, type, param: null, code: answer.status === 429 ? "rate_limit_exceeded" : null } }, { status: answer.status, headers: retryAfter(answer) });
  }
  if (answer.kind === "hang") return hangResponse(req.signal);
  const id = `resp_${crypto.randomUUID().replaceAll("-", "")}`;
  const item =
    answer.kind === "tool"
      ? codexWriteCall(body, answer.path, answer.content)
      : { type: "message", id: `msg_${id}`, status: "completed", role: "assistant", content: [{ type: "output_text", text: answer.text, annotations: [] }] };
  const usage = {
    input_tokens: TOKENS.input,
    input_tokens_details: { cached_tokens: TOKENS.cached },
    output_tokens: TOKENS.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: TOKENS.input + TOKENS.output,
  };
  const response = { id, object: "response", created_at: Math.floor(Date.now() / 1000), status: "in_progress", model: body.model ?? "gpt-fake", output: [] as unknown[] };
  return sse([
    { event: "response.created", data: { type: "response.created", sequence_number: 0, response } },
    { event: "response.output_item.added", data: { type: "response.output_item.added", sequence_number: 1, output_index: 0, item } },
    { event: "response.output_item.done", data: { type: "response.output_item.done", sequence_number: 2, output_index: 0, item } },
    { event: "response.completed", data: { type: "response.completed", sequence_number: 3, response: { ...response, status: "completed", output: [item], usage } } },
  ]);
}

// ---------------------------------------------------------------- Gemini

interface GeminiBody {
  contents?: { role?: string; parts?: { text?: string; functionResponse?: unknown; functionCall?: unknown }[] }[];
  tools?: { functionDeclarations?: { name: string }[] }[];
}

function geminiLastUser(body: GeminiBody): { text: string; toolResults: number } {
  const contents = body.contents ?? [];
  // Distinct calls: gemini 0.61 sends a resumed session's last function response twice.
  const ids = contents.flatMap((c) => (c.parts ?? []).filter((p) => p.functionResponse !== undefined).map((p, i) => (p.functionResponse as { id?: string }).id ?? `#${i}`));
  const toolResults = new Set(ids).size;
  const users = contents.filter((c) => c.role === "user" && (c.parts ?? []).some((p) => typeof p.text === "string"));
  return { text: users.length ? allText(users.at(-1)!.parts).join("\n") : "", toolResults };
}

function gemini(body: GeminiBody, answer: Answer, stream: boolean, req: Request): Response {
  if (answer.kind === "error") {
    const status = ({ 401: "UNAUTHENTICATED", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL" } as Record<number, string>)[answer.status] ?? "INVALID_ARGUMENT";
    // Google says how long to wait in the message and in a RetryInfo detail.
    const wait = answer.retryAfterS;
    const message = wait !== undefined ? `${answer.message}. Please retry in ${wait}s.` : answer.message;
    const details = wait !== undefined ? [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: `${wait}s` }] : undefined;
    return Response.json({ error: { code: answer.status, message, status, ...(details ? { details } : {}) } }, { status: answer.status, headers: retryAfter(answer) });
  }
  if (answer.kind === "hang") return hangResponse(req.signal);
  const part = answer.kind === "tool" ? { functionCall: { name: "write_file", args: { file_path: answer.path, content: answer.content } } } : { text: answer.text };
  const doc = {
    candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: TOKENS.input, candidatesTokenCount: TOKENS.output, cachedContentTokenCount: TOKENS.cached, totalTokenCount: TOKENS.input + TOKENS.output },
    modelVersion: "gemini-fake",
  };
  if (!stream) return Response.json(doc);
  return sse([{ data: doc }]);
}

// ---------------------------------------------------------------- server

/** The API key a request carries: Anthropic x-api-key, OpenAI bearer, Gemini x-goog-api-key or ?key=. */
function keyOf(req: Request, url: URL): string | null {
  const bearer = /^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "");
  return req.headers.get("x-api-key") ?? req.headers.get("x-goog-api-key") ?? bearer?.[1] ?? url.searchParams.get("key");
}

export function startFakeProvider(opts: { log?: (r: LoggedRequest) => void; apiKey?: string } = {}): FakeProvider {
  const requests: LoggedRequest[] = [];
  const seen = new Set<string>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const raw = req.method === "POST" ? await req.text() : "";
      let body: Record<string, unknown> = {};
      try {
        body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      } catch {
        /* not JSON: answered as 'other' */
      }
      const log = (entry: Omit<LoggedRequest, "method" | "path" | "bytes" | "authed" | "marks" | "at" | "tool_results" | "tool_path"> & { answer?: Answer; toolResults?: number }): void => {
        const marks = [...new Set([...raw.matchAll(/FAKE_MARK=([A-Za-z0-9_-]+)/g)].map((m) => m[1]!))];
        const authed = opts.apiKey === undefined || keyOf(req, url) === opts.apiKey;
        const { answer, toolResults, ...rest } = entry;
        const tool_path = answer?.kind === "tool" ? answer.path : null;
        const r = { method: req.method, path: url.pathname, bytes: Buffer.byteLength(raw, "utf8"), authed, marks, at: Date.now(), tool_results: toolResults ?? 0, tool_path, ...rest };
        requests.push(r);
        opts.log?.(r);
      };
      const all = allText(body).join("\n");
      if (req.method === "POST" && url.pathname.endsWith("/v1/messages/count_tokens")) {
        log({ api: "anthropic", model: (body.model as string) ?? null, scenario: "count_tokens", stream: false });
        return Response.json({ input_tokens: TOKENS.input });
      }
      if (req.method === "POST" && url.pathname.endsWith("/v1/messages")) {
        const b = body as AnthropicBody;
        const last = anthropicLastUser(b);
        const answer = decide(all, last.text, last.toolResults, b.model ?? null, seen);
        log({ api: "anthropic", model: b.model ?? null, scenario: scenarioName(answer, all), stream: Boolean(b.stream), answer, toolResults: last.toolResults });
        await slowAfterTool(all, last.toolResults > 0);
        return anthropic(b, answer, req);
      }
      if (req.method === "POST" && url.pathname.endsWith("/v1/responses")) {
        const b = body as ResponsesBody;
        const last = openaiLastUser(b);
        const answer = decide(all, last.text, last.toolResults, b.model ?? null, seen);
        log({ api: "openai", model: b.model ?? null, scenario: scenarioName(answer, all), stream: true, answer, toolResults: last.toolResults });
        await slowAfterTool(all, last.toolResults > 0);
        return openai(b, answer, req);
      }
      const g = /\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/.exec(url.pathname);
      if (req.method === "POST" && g) {
        const model = decodeURIComponent(g[1]!);
        if (g[2] === "countTokens") {
          log({ api: "gemini", model, scenario: "count_tokens", stream: false });
          return Response.json({ totalTokens: TOKENS.input });
        }
        const b = body as GeminiBody;
        const last = geminiLastUser(b);
        const answer = decide(all, last.text, last.toolResults, model, seen);
        const stream = g[2] === "streamGenerateContent";
        log({ api: "gemini", model, scenario: scenarioName(answer, all), stream, answer, toolResults: last.toolResults });
        await slowAfterTool(all, last.toolResults > 0);
        return gemini(b, answer, stream, req);
      }
      log({ api: "other", model: null, scenario: "unknown", stream: false });
      return Response.json({ error: { message: `fake provider: no such endpoint ${req.method} ${url.pathname}` } }, { status: 404 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    port: server.port!,
    requests,
    stop: () => server.stop(true),
  };
}

if (import.meta.main) {
  const fake = startFakeProvider({ apiKey: process.env.FAKE_PROVIDER_KEY, log: process.env.FAKE_PROVIDER_VERBOSE ? (r) => console.error(JSON.stringify(r)) : undefined });
  console.log(JSON.stringify({ port: fake.port, pid: process.pid }));
  for await (const _ of console) console.log(JSON.stringify({ requests: fake.requests }));
  await fake.stop();
  process.exit(0);
}
