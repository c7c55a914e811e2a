/**
 * The task server: a small JSON-over-HTTP API (Bun.serve) in front of the
 * SQLite task store. Used standalone (`bernstein server`) and in-process by
 * `bernstein run`, which attaches hooks for `/stop` and `/status`.
 *
 * Endpoints (every request needs `Authorization: Bearer <token>`):
 *   GET  /health                      {"status": "ok"}
 *   GET  /status                      counts by status, run id, goal, cost
 *   POST /tasks                       201 + task                (TaskCreate body)
 *   GET  /tasks[?status=S]            flat list; with limit/offset: {tasks,total,limit,offset}
 *   GET  /tasks/{id}                  task | 404 "Task '<id>' not found"
 *   POST /tasks/claim                 {agent_id?, limit?} -> 200 {task, tasks, claim_id, lease_expires_at, lease_s, claims}
 *                                     (task/claim_id null when none ready; claims: one lease per task)
 *   POST /tasks/{id}/heartbeat        {claim_id} -> {task_id, claim_id, lease_expires_at, lease_s} (renews the lease)
 *   POST /tasks/{id}/complete         {claim_id, result_summary?, cost_usd?} -> task (status done)
 *   POST /tasks/{id}/fail             {claim_id, reason?, cost_usd?} -> task (status failed)
 *   POST /tasks/{id}/status           {status, reason?, claim_id?} -> task (any other legal transition)
 * Claims and leases: a claimed (or in-progress) task is changed only with the
 * claim_id its claim returned (409 claim_mismatch otherwise; cancelling is the
 * one exception, an operator's right). A claim expires `lease_s` seconds
 * (default 300, `--lease-s`) after the claim or its last heartbeat; the task
 * goes back to `open` (journaled) and the old claim_id answers 409
 * lease_expired.
 *   POST /stop                        {force?, timeout_s?, grace_s?} -> 202; stops the attached orchestrator
 *                                     (a standalone server shuts itself down)
 *   POST /shutdown                    202; graceful stop of this process
 * Errors are `{"error": code, "detail": message, ...}` with a 4xx status; an
 * illegal transition is 409 and names the allowed targets.
 */
import * as v from "valibot";
import { acquireLock, LockHeldError, type FileLock } from "../fsutil/lock.ts";
import { RefusalError, UsageError } from "../errors/index.ts";
import { generateToken, bearerToken, tokenMatches } from "./auth.ts";
import { TaskServerError } from "./errors.ts";
import { readServerInfo, removeServerInfo, writeServerInfo, type ServerInfo } from "./info.ts";
import {
  ClaimSchema,
  CompleteSchema,
  FailSchema,
  HeartbeatSchema,
  StatusChangeSchema,
  StopSchema,
  TASK_ID_PATTERN,
  describeIssues,
  isTaskStatus,
  type ServerStatus,
  type StopOptions,
} from "./model.ts";
import { ensureRuntimeDir, serverLockPath } from "./paths.ts";
import { derivedPort, type PortChoice } from "./ports.ts";
import { TaskStore, type ExpiredClaim } from "./store.ts";
import type { TaskBackend } from "./store-api.ts";
import { openTaskStore } from "./open-store.ts";
import { appendJsonLine } from "../session/jsonl-log.ts";
import { pyFloat } from "../pyjson/types.ts";
import { join } from "node:path";

/** Request bodies above this size are refused with 413. */
export const MAX_BODY_BYTES = 1024 * 1024;
export const DEFAULT_HOST = "127.0.0.1";
/** The Python server's fixed port; ours is `auto` (see ports.ts) unless `--port 8052` is asked for. */
export const PYTHON_DEFAULT_PORT = 8052;
/** Seconds a claim made over HTTP lives without a heartbeat. */
export const DEFAULT_LEASE_S = 300;

export interface StopOutcome {
  accepted: boolean;
  detail: string;
  /** The SIGTERM-to-SIGKILL window the orchestrator applies to its agents (seconds), when it has one. */
  grace_s?: number | null;
}

/** What an in-process orchestrator lends the server. */
export interface ServerHooks {
  /** `POST /stop` / `POST /shutdown`: ask the orchestrator to stop. */
  stop?(opts: StopOptions): StopOutcome;
  /** Extra `/status` fields owned by the orchestrator. */
  status?(): Partial<Pick<ServerStatus, "run_id" | "goal" | "cost_usd" | "cost_known" | "budget_usd" | "orchestrator">>;
  /**
   * Journal a change the server made or was asked for (`task_requeued` on a
   * lease expiry, `task_cancelled`). Without this hook the server appends
   * them to `<sdd>/runtime/task_events.jsonl`.
   */
  event?(name: string, payload: Record<string, string | number | null>): void;
}

export interface StartServerOptions {
  sddDir: string;
  host?: string;
  /** `auto` (default): derived from the state dir, else any free port; 0: any free port; the real one is written to server.json. */
  port?: PortChoice;
  /** Defaults to BERNSTEIN_AUTH_TOKEN, else a generated token. */
  token?: string;
  /** An already opened store (the orchestrator shares its own). */
  store?: TaskBackend;
  /** Open this store instead of `<sdd>/runtime/tasks.db`: a `postgres://` URL (several servers may share it). */
  storeUrl?: string;
  hooks?: ServerHooks;
  /** Diagnostics sink (never receives the token). */
  warn?: (message: string) => void;
  /** Lease of a claim made over HTTP, in seconds (default DEFAULT_LEASE_S). */
  leaseS?: number;
}

export interface RunningServer {
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly token: string;
  readonly store: TaskBackend;
  /** Resolves when a client asked this process to shut down (standalone `/stop`, `/shutdown`). */
  readonly shutdownRequested: Promise<StopOptions>;
  setHooks(hooks: ServerHooks): void;
  /** Stop listening, remove server.json, release the lock (and close the store if we opened it). */
  close(): Promise<void>;
}

class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly facts: Record<string, unknown>;
  constructor(status: number, code: string, message: string, facts: Record<string, unknown> = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.facts = facts;
  }
}

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

function errorResponse(status: number, code: string, detail: string, facts: Record<string, unknown> = {}): Response {
  return json({ error: code, detail, ...facts }, status);
}

/**
 * An oversize body is read and thrown away up to this many bytes before the
 * 413 is sent: a client that writes its whole body before reading the answer
 * (Python's urllib, most blocking clients) would otherwise have its write
 * reset by the closed socket and never see the 413. Beyond it the
 * connection is cut (memory stays flat either way: nothing is kept).
 */
export const MAX_DRAIN_BYTES = 8 * MAX_BODY_BYTES;

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** Discard the rest of a body, at most up to MAX_DRAIN_BYTES in total. */
async function drain(reader: { read(): Promise<{ done: boolean; value?: Uint8Array }>; cancel(): Promise<void> }, seen: number): Promise<void> {
  try {
    while (seen <= MAX_DRAIN_BYTES) {
      const { done, value } = await reader.read();
      if (done) return;
      seen += value?.byteLength ?? 0;
    }
    await reader.cancel();
  } catch {
    /* the client went away */
  }
}

/** Read a body of at most MAX_BODY_BYTES, whatever Content-Length claims; it must be UTF-8. */
async function readBody(req: Request): Promise<string> {
  const declared = Number(req.headers.get("content-length") ?? "NaN");
  if (!req.body) return "";
  const reader = req.body.getReader();
  if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
    await drain(reader, 0);
    throw new HttpError(413, "body_too_large", `request body of ${declared} bytes exceeds the limit of ${MAX_BODY_BYTES} bytes`, { limit: MAX_BODY_BYTES });
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = (await reader.read()) as { done: boolean; value: Uint8Array };
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await drain(reader, size);
      throw new HttpError(413, "body_too_large", `request body exceeds the limit of ${MAX_BODY_BYTES} bytes`, { limit: MAX_BODY_BYTES });
    }
    chunks.push(value);
  }
  try {
    return UTF8.decode(Buffer.concat(chunks));
  } catch {
    // Replacement characters would silently change what the client sent.
    throw new HttpError(400, "invalid_utf8", "request body is not valid UTF-8");
  }
}

/** Parse a JSON object body; an empty body counts as `{}`. */
async function readJsonObject(req: Request): Promise<Record<string, unknown>> {
  const text = await readBody(req);
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new HttpError(400, "invalid_json", `request body is not valid JSON: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new HttpError(422, "invalid_request", "request body must be a JSON object");
  }
  return value as Record<string, unknown>;
}

function validate<S extends v.GenericSchema>(schema: S, body: unknown): v.InferOutput<S> {
  const r = v.safeParse(schema, body);
  if (!r.success) throw new HttpError(422, "invalid_request", describeIssues(r.issues));
  return r.output;
}

function nonNegativeInt(raw: string | null, name: string): number | undefined {
  if (raw === null) return undefined;
  if (!/^\d{1,9}$/.test(raw)) throw new HttpError(422, "invalid_request", `query parameter '${name}' must be a non-negative integer, got '${raw}'`);
  return Number(raw);
}

function clientUrl(host: string, port: number): string {
  // A wildcard bind is reachable on loopback; clients need a concrete address.
  const h = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  return `http://${h.includes(":") ? `[${h}]` : h}:${port}`;
}

/**
 * Start serving. Holds `<sdd>/runtime/server.lock` for the lifetime of the
 * server, so two servers never share one store; writes server.json (0600).
 */
export async function startTaskServer(opts: StartServerOptions): Promise<RunningServer> {
  const host = opts.host ?? DEFAULT_HOST;
  const choice = opts.port ?? "auto";
  if (choice !== "auto" && (!Number.isInteger(choice) || choice < 0 || choice > 65535)) throw new UsageError(`invalid port ${choice}: must be 0-65535`);
  const port = choice === "auto" ? derivedPort(opts.sddDir) : choice;
  const token = opts.token ?? (process.env.BERNSTEIN_AUTH_TOKEN || generateToken());
  const warn = opts.warn ?? (() => {});
  ensureRuntimeDir(opts.sddDir);

  let lock: FileLock;
  try {
    lock = acquireLock(serverLockPath(opts.sddDir));
  } catch (err) {
    if (err instanceof LockHeldError) {
      const info = readServerInfo(opts.sddDir);
      throw new RefusalError(
        "server_running",
        `a task server is already running for ${opts.sddDir}${err.ownerPid ? ` (pid ${err.ownerPid}${info ? `, ${info.url}` : ""})` : ""}; stop it first or use another --sdd-dir`,
        { pid: err.ownerPid, url: info?.url ?? null },
      );
    }
    throw err;
  }

  const ownsStore = !opts.store;
  let store: TaskBackend;
  try {
    store = opts.store ?? (await openTaskStore(opts.sddDir, opts.storeUrl));
  } catch (err) {
    lock.release();
    throw err;
  }

  let hooks: ServerHooks = opts.hooks ?? {};
  const leaseS = opts.leaseS ?? DEFAULT_LEASE_S;
  if (!(Number.isFinite(leaseS) && leaseS > 0)) throw new UsageError(`invalid lease ${leaseS}: must be a positive number of seconds`);
  const eventLog = join(opts.sddDir, "runtime", "task_events.jsonl");
  const journal = (name: string, payload: Record<string, string | number | null>): void => {
    try {
      if (hooks.event) hooks.event(name, payload);
      else appendJsonLine(eventLog, { ts: pyFloat(Date.now() / 1000), event: name, ...payload });
    } catch (err) {
      warn(`task server: could not journal ${name}: ${(err as Error).message}`);
    }
  };
  const journalRequeued = (expired: ExpiredClaim[]): void => {
    for (const e of expired) journal("task_requeued", { task_id: e.task_id, agent_id: e.agent_id, claim_id: e.claim_id, reason: e.reason });
  };
  let resolveShutdown!: (o: StopOptions) => void;
  const shutdownRequested = new Promise<StopOptions>((r) => (resolveShutdown = r));
  const startedAt = Date.now() / 1000;
  let url = "";

  const requestStop = (o: StopOptions, viaShutdown: boolean): Response => {
    if (hooks.stop) {
      const outcome = hooks.stop(o);
      return json(
        { accepted: outcome.accepted, detail: outcome.detail, force: o.force, timeout_s: o.timeout_s, grace_s: outcome.grace_s ?? o.grace_s },
        outcome.accepted ? 202 : 409,
      );
    }
    // Answer first: the shutdown closes the listener right after.
    setTimeout(() => resolveShutdown(o), 20);
    return json({ accepted: true, detail: viaShutdown ? "server shutting down" : "no orchestrator attached; server shutting down", force: o.force, timeout_s: o.timeout_s }, 202);
  };

  const statusBody = async (): Promise<ServerStatus> => {
    const counts = await store.counts();
    const extra = hooks.status?.() ?? {};
    return {
      run_id: extra.run_id ?? (await store.getMeta("run_id")),
      goal: extra.goal ?? (await store.getMeta("goal")) ?? "",
      total: Object.values(counts).reduce((a, b) => a + b, 0),
      counts,
      cost_usd: extra.cost_usd ?? (await store.totalCost()),
      cost_known: extra.cost_known ?? true,
      budget_usd: extra.budget_usd ?? null,
      orchestrator: extra.orchestrator ?? null,
      server: { pid: process.pid, url, started_at: startedAt },
    };
  };

  const route = async (req: Request): Promise<Response> => {
    const u = new URL(req.url);
    const path = u.pathname.replace(/\/+$/, "") || "/";
    const method = req.method;
    const parts = path.split("/").filter(Boolean);

    if (path === "/health") {
      if (method !== "GET") throw new HttpError(405, "method_not_allowed", `${method} not allowed on ${path}`);
      return json({ status: "ok" });
    }
    if (path === "/status") {
      if (method !== "GET") throw new HttpError(405, "method_not_allowed", `${method} not allowed on ${path}`);
      return json(await statusBody());
    }
    if (path === "/stop" || path === "/shutdown") {
      if (method !== "POST") throw new HttpError(405, "method_not_allowed", `${method} not allowed on ${path}`);
      return requestStop(validate(StopSchema, await readJsonObject(req)), path === "/shutdown");
    }
    if (path === "/tasks") {
      if (method === "POST") {
        const body = await readJsonObject(req);
        return json(await store.create(TaskStore.validateCreate(body)), 201);
      }
      if (method !== "GET") throw new HttpError(405, "method_not_allowed", `${method} not allowed on ${path}`);
      const status = u.searchParams.get("status");
      if (status !== null && !isTaskStatus(status)) {
        throw new HttpError(422, "invalid_request", `unknown status '${status}'`);
      }
      const limit = nonNegativeInt(u.searchParams.get("limit"), "limit");
      const offset = nonNegativeInt(u.searchParams.get("offset"), "offset");
      const paged = limit !== undefined || offset !== undefined;
      const r = await store.list({ status: status ?? undefined, limit, offset });
      return json(paged ? { tasks: r.tasks, total: r.total, limit: limit ?? null, offset: offset ?? 0 } : r.tasks);
    }
    if (path === "/tasks/claim") {
      if (method !== "POST") throw new HttpError(405, "method_not_allowed", `${method} not allowed on ${path}`);
      const body = validate(ClaimSchema, await readJsonObject(req));
      journalRequeued(await store.expireLeases());
      let got = await store.claimLeased(body.agent_id, body.limit, leaseS);
      // wait_s: an idle claimer waits here for new or re-opened work (the store wakes it) instead of polling.
      const deadline = Date.now() + body.wait_s * 1000;
      while (got.length === 0 && Date.now() < deadline) {
        await store.waitForWork(deadline - Date.now());
        got = await store.claimLeased(body.agent_id, body.limit, leaseS);
      }
      const first = got[0]?.lease ?? null;
      return json({
        task: got[0]?.task ?? null,
        tasks: got.map((c) => c.task),
        claim_id: first?.claim_id ?? null,
        lease_expires_at: first?.lease_expires_at ?? null,
        lease_s: leaseS,
        claims: got.map((c) => c.lease),
      });
    }
    if (parts[0] === "tasks" && parts.length >= 2 && parts.length <= 3) {
      let id: string;
      try {
        id = decodeURIComponent(parts[1]!);
      } catch {
        // A malformed %-escape is the client's error, not ours (was a 500).
        throw new HttpError(400, "invalid_request", `malformed percent-encoding in task id '${parts[1]}'`);
      }
      if (!TASK_ID_PATTERN.test(id)) throw new HttpError(404, "task_not_found", `Task '${id}' not found`, { task_id: id });
      if (parts.length === 2) {
        if (method !== "GET") throw new HttpError(405, "method_not_allowed", `${method} not allowed on ${path}`);
        return json(await store.require(id));
      }
      if (method !== "POST") throw new HttpError(405, "method_not_allowed", `${method} not allowed on ${path}`);
      switch (parts[2]) {
        case "complete": {
          const body = validate(CompleteSchema, await readJsonObject(req));
          return json(await leased(() => store.complete(id, body, { enforce: true, claimId: body.claim_id })));
        }
        case "fail": {
          const body = validate(FailSchema, await readJsonObject(req));
          return json(await leased(() => store.fail(id, body, { enforce: true, claimId: body.claim_id })));
        }
        case "heartbeat": {
          const body = validate(HeartbeatSchema, await readJsonObject(req));
          return json(await leased(() => store.heartbeat(id, body.claim_id)));
        }
        case "status": {
          const body = validate(StatusChangeSchema, await readJsonObject(req));
          // Cancelling is the operator's right over any task; every other move of a held task needs its claim.
          const cancel = body.status === "cancelled";
          const task = await leased(() =>
            store.transition(id, body.status, body.reason !== null ? { reason: body.reason } : {}, { enforce: !cancel, claimId: body.claim_id }),
          );
          if (cancel) journal("task_cancelled", { task_id: id, reason: body.reason });
          return json(task);
        }
      }
    }
    throw new HttpError(404, "not_found", `no such endpoint: ${method} ${path}`);
  };

  /** Run a claim-checked store call; leases that ran out on the way are journaled. */
  const leased = async <T>(fn: () => T | Promise<T>): Promise<T> => {
    journalRequeued(await store.expireLeases());
    return await fn();
  };

  const fetch = async (req: Request): Promise<Response> => {
    const presented = bearerToken(req.headers.get("authorization"));
    const refuse = async (detail: string): Promise<Response> => {
      // Like a 413: a blocking client must be able to finish writing its body to read this.
      if (req.body) await drain(req.body.getReader(), 0);
      return errorResponse(401, "unauthorized", detail);
    };
    if (presented.kind === "missing") return refuse("missing 'Authorization: Bearer <token>' header");
    if (presented.kind === "malformed") return refuse("malformed Authorization header: expected 'Bearer <token>' (one token, no spaces)");
    if (!tokenMatches(presented.token, token)) return refuse("invalid bearer token");
    try {
      return await route(req);
    } catch (err) {
      if (err instanceof HttpError) return errorResponse(err.status, err.code, err.message, err.facts);
      if (err instanceof TaskServerError) return errorResponse(err.httpStatus, err.code, err.message, err.facts);
      warn(`task server: internal error on ${req.method} ${new URL(req.url).pathname}: ${(err as Error).message}`);
      return errorResponse(500, "internal_error", "internal server error");
    }
  };

  const listen = (p: number) =>
    Bun.serve({
      hostname: host,
      port: p,
      // Bodies are streamed, never buffered by Bun, so our own limit (413
      // with the JSON error shape) always answers; a Bun-level cap would
      // answer bodies over it with an empty 413 (found by the server fuzzer).
      maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      fetch,
      error(err) {
        warn(`task server: ${err.message}`);
        return errorResponse(500, "internal_error", "internal server error");
      },
    });
  const inUse = (err: unknown) => /EADDRINUSE|in use/i.test((err as Error).message);
  let server: ReturnType<typeof Bun.serve>;
  try {
    try {
      server = listen(port);
    } catch (err) {
      // `auto`: the state dir's port is taken (another program, a hash
      // collision): any free port will do, server.json tells clients.
      if (choice !== "auto" || !inUse(err)) throw err;
      server = listen(0);
    }
  } catch (err) {
    if (ownsStore) await store.close();
    lock.release();
    const msg = (err as Error).message;
    if (inUse(err)) {
      throw new RefusalError("port_in_use", `cannot listen on ${host}:${port}: the address is already in use (use --port)`, { host, port });
    }
    throw new RefusalError("listen_failed", `cannot listen on ${host}:${port}: ${msg}`, { host, port });
  }
  const realPort = server.port!;
  url = clientUrl(host, realPort);
  const info: ServerInfo = { url, host, port: realPort, pid: process.pid, token, started_at: startedAt };
  try {
    writeServerInfo(opts.sddDir, info);
  } catch (err) {
    server.stop(true);
    if (ownsStore) await store.close();
    lock.release();
    throw err;
  }

  // Expired leases go back to the queue even when no request comes in.
  const sweepMs = Math.max(50, Math.min(1000, (leaseS * 1000) / 4));
  let sweeping = false;
  const sweeper = setInterval(async () => {
    if (sweeping) return;
    sweeping = true;
    try {
      journalRequeued(await store.expireLeases());
    } catch (err) {
      warn(`task server: lease sweep failed: ${(err as Error).message}`);
    } finally {
      sweeping = false;
    }
  }, sweepMs);
  sweeper.unref?.();
  // A standalone server holds the store's lock: whichever process held
  // claims without expiry (an orchestrator) is gone.
  if (ownsStore) journalRequeued(await store.releaseProcessClaims());

  let closed = false;
  return {
    url,
    host,
    port: realPort,
    token,
    store,
    shutdownRequested,
    setHooks(h) {
      hooks = h;
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(sweeper);
      // Let in-flight requests finish (a /shutdown answer), then cut the rest.
      const graceful = server.stop(false);
      await Promise.race([graceful, Bun.sleep(250)]);
      await server.stop(true);
      removeServerInfo(opts.sddDir);
      if (ownsStore) await store.close();
      lock.release();
    },
  };
}
