import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TASK_STATUSES } from "../../../src/server/model.ts";
import { startTaskServer, type RunningServer } from "../../../src/server/server.ts";
import { looksLikeStackTrace } from "../binary.ts";
import { deepNesting, mutateBytes } from "../mutate.ts";
import type { Rng } from "../rng.ts";
import { violation, type FuzzTarget } from "../types.ts";

/**
 * (d) The task server's request bodies (and paths, methods, auth). An
 * input is `METHOD PATH\n` + body. Invariants on every answer: never a
 * 5xx; always a JSON body, `{"error", "detail"}` on 4xx; a request without
 * the right bearer token is 401 whatever else it holds; the token never
 * appears in an answer or in the server's diagnostics; the server still
 * answers /health afterwards and every stored task has a legal status.
 * The sampled binary cases go to a `bernstein server` process, whose
 * stderr is checked for stack traces and the token at the end.
 */

const enc = new TextEncoder();
const dec = new TextDecoder();
const TOKEN = "fuzz-token-DO-NOT-LEAK-7f3a9c";

const HOSTILE_VALUES: readonly string[] = [
  "null", "true", "false", "-1", "0", "1.5", "1e308", "1e400", "-1e400", "101", "4294967297", "12345678901234567890", '""', '"x"',
  `"${"x".repeat(600)}"`, `"${"y".repeat(200_000)}"`, "[]", "{}", '["a","a"]', '["../x"]', '[".."]', '["nope"]', '{"a":1}',
  '"\\u0000"', '"\\ud800"', '"🚀"', '"open"', '"done"', '"claimed"', '"closed"', deepNesting(2000, "mixed"),
];
const KEYS = ["title", "description", "role", "priority", "scope", "complexity", "model", "effort", "depends_on", "id", "agent_id", "limit",
  "result_summary", "cost_usd", "reason", "status", "force", "timeout_s", "__proto__", "constructor", "toString", "extra"];
const PATH_IDS = ["..", ".", "..%2F..%2Fetc", "%2e%2e", "%E0%A4%A", "%ZZ", "%00", "a".repeat(65), "a%2Fb", "T-1", "%F0%9F%9A%80", "task%20x", "-", "..."];

interface Template {
  method: string;
  path: string;
  body: string;
}

function templates(ids: string[], rng: Rng): Template[] {
  const id = ids.length ? rng.pick(ids) : "missing";
  return [
    { method: "POST", path: "/tasks", body: JSON.stringify({ title: "Fuzz task", description: "d", role: "backend", priority: 3, depends_on: [] }) },
    { method: "POST", path: "/tasks", body: JSON.stringify({ title: "t", id: `f-${rng.u32()}`, model: "m", effort: "high", scope: "small", complexity: "low" }) },
    { method: "POST", path: "/tasks/claim", body: JSON.stringify({ agent_id: "agent-1", limit: 2 }) },
    { method: "POST", path: `/tasks/${id}/complete`, body: JSON.stringify({ result_summary: "ok", cost_usd: 0.01 }) },
    { method: "POST", path: `/tasks/${id}/fail`, body: JSON.stringify({ reason: "no", cost_usd: 0 }) },
    { method: "POST", path: `/tasks/${id}/status`, body: JSON.stringify({ status: rng.pick(TASK_STATUSES), reason: "r" }) },
    { method: "GET", path: `/tasks/${id}`, body: "" },
    { method: "GET", path: `/tasks?status=${rng.pick([...TASK_STATUSES, "bogus", ""])}&limit=${rng.pick(["1", "-1", "x", "1000000000000"])}&offset=${rng.pick(["0", "5", "1e3"])}`, body: "" },
    { method: "GET", path: "/status", body: "" },
    { method: "GET", path: "/health", body: "" },
    { method: rng.pick(["PUT", "DELETE", "PATCH", "OPTIONS"]), path: rng.pick(["/tasks", "/status", `/tasks/${id}`]), body: "{}" },
  ];
}

function mutateBody(rng: Rng, body: string): string {
  if (!body) return rng.chance(0.2) ? rng.pick(HOSTILE_VALUES) : body;
  let obj: Record<string, unknown>;
  try {
    obj = JSON.parse(body) as Record<string, unknown>;
  } catch {
    return body;
  }
  let text = body;
  const k = rng.int(10);
  if (k < 6) {
    // Replace or add one member with a hostile value (as raw JSON text).
    const key = rng.pick([...Object.keys(obj), ...KEYS]);
    const value = rng.pick(HOSTILE_VALUES);
    const rest = Object.entries(obj).filter(([x]) => x !== key).map(([x, v]) => `${JSON.stringify(x)}:${JSON.stringify(v)}`);
    rest.splice(rng.int(rest.length + 1), 0, `${JSON.stringify(key)}:${value}`);
    text = `{${rest.join(",")}}`;
  } else if (k < 7) {
    delete obj[rng.pick(Object.keys(obj).length ? Object.keys(obj) : ["title"])];
    text = JSON.stringify(obj);
  } else if (k < 8) {
    text = rng.pick(HOSTILE_VALUES);
  }
  if (rng.chance(0.3)) text = dec.decode(mutateBytes(rng, enc.encode(text), { maxBytes: 1 << 20 }));
  return text;
}

function encodeCase(t: Template): Uint8Array {
  return enc.encode(`${t.method} ${t.path}\n${t.body}`);
}

function decodeCase(input: Uint8Array): Template {
  const text = dec.decode(input);
  const nl = text.indexOf("\n");
  const head = nl < 0 ? text : text.slice(0, nl);
  const sp = head.indexOf(" ");
  return { method: sp < 0 ? head : head.slice(0, sp), path: sp < 0 ? "/" : head.slice(sp + 1), body: nl < 0 ? "" : text.slice(nl + 1) };
}

/** Send one request and check the answer's invariants. */
async function exchange(base: string, token: string, t: Template, auth: "right" | "wrong" | "none"): Promise<{ status: number; body: unknown }> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (auth === "right") headers.authorization = `Bearer ${token}`;
  if (auth === "wrong") headers.authorization = `Bearer ${token.slice(0, -1)}x`;
  let res: Response;
  try {
    res = await fetch(base + t.path, {
      method: t.method,
      headers,
      body: t.method === "GET" || t.method === "HEAD" ? undefined : t.body,
      signal: AbortSignal.timeout(15_000),
    });
  } catch (err) {
    throw violation("server_connection", `${t.method} ${t.path.slice(0, 80)}: ${(err as Error).message}`);
  }
  const text = await res.text();
  const where = `${t.method} ${t.path.slice(0, 80)} -> ${res.status}`;
  if (res.status >= 500) throw violation("server_5xx", `${where}: ${text.slice(0, 200)}`);
  if (text.includes(token)) throw violation("server_token_echoed", where);
  if (auth !== "right" && res.status !== 401) throw violation("server_auth_bypass", `${where} without the right token`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw violation("server_non_json", `${where}: ${text.slice(0, 120)}`);
  }
  if (res.status >= 400) {
    const b = body as Record<string, unknown>;
    if (typeof b?.error !== "string" || typeof b?.detail !== "string") throw violation("server_error_shape", `${where}: ${text.slice(0, 200)}`);
  }
  return { status: res.status, body };
}

export interface ServerTargetOptions {
  bin?: string | null;
}

export function serverTarget(opts: ServerTargetOptions = {}): FuzzTarget {
  const dir = mkdtempSync(join(tmpdir(), "bernstein-fuzz-server-"));
  let server: RunningServer | null = null;
  const warnings: string[] = [];
  const ids: string[] = [];
  let proc: ReturnType<typeof Bun.spawn> | null = null;
  let procBase = "";
  let procToken = "";
  let procOutput: Promise<[string, string]> | null = null;
  const counts = { requests: 0, s2xx: 0, s4xx: 0, unauthorized: 0, binary_requests: 0 };

  const inProcess = async (): Promise<RunningServer> => {
    if (!server) server = await startTaskServer({ sddDir: join(dir, "inproc"), port: 0, token: TOKEN, warn: (m) => warnings.push(m) });
    return server;
  };

  const startBinary = async (): Promise<void> => {
    if (proc) return;
    const sdd = join(dir, "binary");
    proc = Bun.spawn([opts.bin!, "server", "--port", "0", "--sdd-dir", sdd], {
      env: { ...process.env, NO_COLOR: "1", BERNSTEIN_AUTH_TOKEN: TOKEN },
      stdout: "pipe",
      stderr: "pipe",
    });
    // Drain both pipes all along: a full pipe would block the server.
    procOutput = Promise.all([new Response(proc.stdout as ReadableStream).text(), new Response(proc.stderr as ReadableStream).text()]);
    const info = join(sdd, "runtime", "server.json");
    for (let i = 0; i < 200 && !existsSync(info); i++) await Bun.sleep(25);
    const parsed = JSON.parse(readFileSync(info, "utf8")) as { url: string; token: string };
    procBase = parsed.url;
    procToken = parsed.token;
  };

  const authOf = (rng: Rng): "right" | "wrong" | "none" => (rng.chance(0.04) ? "wrong" : rng.chance(0.03) ? "none" : "right");

  return {
    name: "server",
    seeds() {
      return [encodeCase({ method: "POST", path: "/tasks", body: '{"title": "seed"}' })];
    },
    mutate(rng) {
      const t = rng.pick(templates(ids, rng));
      if (rng.chance(0.15)) t.path = t.path.replace(/\/tasks\/[^/?]+/, `/tasks/${rng.pick(PATH_IDS)}`);
      if (rng.chance(0.85)) t.body = mutateBody(rng, t.body);
      return encodeCase(t);
    },
    async run(input, rng) {
      const s = await inProcess();
      const t = decodeCase(input);
      const auth = authOf(rng);
      const r = await exchange(s.url, s.token, t, auth);
      counts.requests++;
      if (r.status === 401) counts.unauthorized++;
      else if (r.status < 300) counts.s2xx++;
      else counts.s4xx++;
      if (r.status === 201 && ids.length < 500) ids.push((r.body as { id: string }).id);
    },
    async runBinary(input, rng) {
      await startBinary();
      counts.binary_requests++;
      await exchange(procBase, procToken, decodeCase(input), authOf(rng));
    },
    extremes() {
      return [
        {
          name: "100 MB request body",
          async run() {
            const s = await inProcess();
            const big = new Uint8Array(100 * 1024 * 1024).fill(0x20);
            let res: Response;
            try {
              res = await fetch(`${s.url}/tasks`, { method: "POST", headers: { authorization: `Bearer ${s.token}`, "content-type": "application/json" }, body: big });
            } catch (err) {
              throw violation("server_big_body", `connection failed instead of 413: ${(err as Error).message}`);
            }
            const text = await res.text();
            if (res.status !== 413) throw violation("server_big_body", `expected 413, got ${res.status}: ${text.slice(0, 120)}`);
            let body: { error?: unknown } = {};
            try {
              body = JSON.parse(text);
            } catch {
              /* checked below */
            }
            if (body.error !== "body_too_large") throw violation("server_big_body", `413 without the JSON error shape: ${JSON.stringify(text.slice(0, 120))}`);
          },
        },
        {
          name: "100,000-deep nested request body",
          async run() {
            const s = await inProcess();
            const r = await exchange(s.url, s.token, { method: "POST", path: "/tasks", body: deepNesting(100_000, "mixed") }, "right");
            if (r.status !== 400 && r.status !== 422) throw violation("server_deep_body", `expected 400/422, got ${r.status}`);
          },
        },
      ];
    },
    stats() {
      return { ...counts };
    },
    async close() {
      try {
        if (server) {
          const h = await exchange(server.url, server.token, { method: "GET", path: "/health", body: "" }, "right");
          if (h.status !== 200) throw violation("server_health_after", `health ${h.status}`);
          const all = (await exchange(server.url, server.token, { method: "GET", path: "/tasks", body: "" }, "right")).body as { status: string }[];
          for (const t of all) if (!(TASK_STATUSES as readonly string[]).includes(t.status)) throw violation("server_bad_status", t.status);
          if (warnings.some((w) => w.includes(TOKEN))) throw violation("server_token_logged", "a diagnostic carried the token");
          if (warnings.length) throw violation("server_internal_warning", warnings[0]!);
        }
        if (proc) {
          proc.kill("SIGTERM");
          const code = await proc.exited;
          const [stdout, stderr] = await procOutput!;
          if (code !== 0) throw violation("server_binary_exit", `bernstein server exited ${code}: ${stderr.slice(0, 200)}`);
          if (looksLikeStackTrace(stderr)) throw violation("server_binary_stack_trace", stderr.slice(0, 200));
          if ((stderr + stdout).includes(procToken)) throw violation("server_token_logged", "bernstein server printed its token");
        }
      } finally {
        await server?.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
