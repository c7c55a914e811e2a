/**
 * The HTTP client every CLI command uses to talk to the task server.
 *
 * Finding the server: `BERNSTEIN_SERVER_URL` (with `BERNSTEIN_AUTH_TOKEN`)
 * when set, otherwise `<sdd>/runtime/server.json` written by the server.
 */
import type { ServerStatus, StopRequest, Task, TaskCreate, TaskStatus } from "./model.ts";
import { ServerRequestError, ServerUnreachableError } from "./errors.ts";
import { pidAlive } from "../fsutil/owner.ts";
import { readServerInfo } from "./info.ts";

export interface ServerLocation {
  url: string;
  token: string | null;
  /** Where the location came from. */
  source: "env" | "server.json";
  /** The server's pid, when known (server.json). */
  pid: number | null;
}

/**
 * Where is the server? Environment first (an explicit choice), then
 * server.json if its process is still alive. Null when neither is known.
 */
export function findServer(sddDir: string, env: Record<string, string | undefined> = process.env): ServerLocation | null {
  const info = readServerInfo(sddDir);
  const envUrl = env.BERNSTEIN_SERVER_URL?.trim();
  if (envUrl) {
    const url = envUrl.replace(/\/+$/, "");
    // The token of server.json applies only when it describes the same server.
    const token = env.BERNSTEIN_AUTH_TOKEN || (info && info.url === url ? info.token : null);
    return { url, token, source: "env", pid: info && info.url === url ? info.pid : null };
  }
  if (info && pidAlive(info.pid)) return { url: info.url, token: env.BERNSTEIN_AUTH_TOKEN || info.token, source: "server.json", pid: info.pid };
  return null;
}

/** `findServer` or a clear error naming how to start one. */
export function requireServer(sddDir: string, env: Record<string, string | undefined> = process.env): ServerLocation {
  const loc = findServer(sddDir, env);
  if (!loc) {
    throw new ServerUnreachableError(
      `no task server is running for ${sddDir} (no live ${sddDir}/runtime/server.json and BERNSTEIN_SERVER_URL is not set); start one with 'bernstein run' or 'bernstein server'`,
    );
  }
  return loc;
}

export interface ListTasksOptions {
  status?: TaskStatus;
  limit?: number;
  offset?: number;
}

export interface TaskPage {
  tasks: Task[];
  total: number;
  limit: number | null;
  offset: number;
}

export interface ClaimLease {
  task_id: string;
  claim_id: string;
  lease_expires_at: number | null;
  lease_s: number | null;
}

export interface ClaimResult {
  task: Task | null;
  tasks: Task[];
  /** The first task's claim (its lease); show it to complete, fail, move or heartbeat the task. */
  claim_id: string | null;
  lease_expires_at: number | null;
  lease_s: number;
  claims: ClaimLease[];
}

export interface StopResult {
  accepted: boolean;
  detail: string;
  force: boolean;
  timeout_s: number;
  /** SIGTERM-to-SIGKILL window of the agents (seconds); absent from older servers. */
  grace_s?: number | null;
}

export interface TaskClientOptions {
  /** Per-request timeout (default 5 s, like the Python CLI helper). */
  timeoutMs?: number;
}

export class TaskClient {
  readonly url: string;
  private readonly token: string | null;
  private readonly timeoutMs: number;

  constructor(location: Pick<ServerLocation, "url" | "token">, opts: TaskClientOptions = {}) {
    this.url = location.url.replace(/\/+$/, "");
    this.token = location.token;
    this.timeoutMs = opts.timeoutMs ?? 5000;
  }

  /** A client for the server of `sddDir` (throws `server_unreachable` when none is known). */
  static forSddDir(sddDir: string, opts: TaskClientOptions = {}): TaskClient {
    return new TaskClient(requireServer(sddDir), opts);
  }

  private async request<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    let res: Response;
    try {
      res = await fetch(this.url + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      const reason = (err as Error).name === "TimeoutError" ? `no answer within ${this.timeoutMs} ms` : (err as Error).message;
      throw new ServerUnreachableError(`cannot reach the task server at ${this.url}: ${reason}`, { url: this.url });
    }
    const text = await res.text();
    let parsed: unknown = null;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new ServerRequestError("server_error", `${method} ${path}: the server answered ${res.status} with a non-JSON body`, res.status);
      }
    }
    if (!res.ok) {
      const p = (parsed ?? {}) as { error?: string; detail?: string } & Record<string, unknown>;
      const { error, detail, ...facts } = p;
      throw new ServerRequestError(error ?? "server_error", detail ?? `${method} ${path}: HTTP ${res.status}`, res.status, facts);
    }
    return { status: res.status, body: parsed as T };
  }

  async health(): Promise<{ status: string }> {
    return (await this.request<{ status: string }>("GET", "/health")).body;
  }

  async status(): Promise<ServerStatus> {
    return (await this.request<ServerStatus>("GET", "/status")).body;
  }

  /** All tasks (optionally of one status) in creation order. */
  async listTasks(opts: { status?: TaskStatus } = {}): Promise<Task[]> {
    const q = opts.status ? `?status=${encodeURIComponent(opts.status)}` : "";
    return (await this.request<Task[]>("GET", `/tasks${q}`)).body;
  }

  async listTasksPage(opts: ListTasksOptions): Promise<TaskPage> {
    const q = new URLSearchParams();
    if (opts.status) q.set("status", opts.status);
    q.set("limit", String(opts.limit ?? 100));
    q.set("offset", String(opts.offset ?? 0));
    return (await this.request<TaskPage>("GET", `/tasks?${q}`)).body;
  }

  /** The task, or null when the server does not know it (404). */
  async getTask(id: string): Promise<Task | null> {
    try {
      return (await this.request<Task>("GET", `/tasks/${encodeURIComponent(id)}`)).body;
    } catch (err) {
      if (err instanceof ServerRequestError && err.httpStatus === 404) return null;
      throw err;
    }
  }

  async createTask(body: TaskCreate): Promise<Task> {
    return (await this.request<Task>("POST", "/tasks", body)).body;
  }

  async claim(opts: { agent_id?: string | null; limit?: number } = {}): Promise<ClaimResult> {
    return (await this.request<ClaimResult>("POST", "/tasks/claim", opts)).body;
  }

  /** Complete a claimed task: `claim_id` is the lease its claim returned. */
  async complete(id: string, body: { claim_id?: string | null; result_summary?: string | null; cost_usd?: number } = {}): Promise<Task> {
    return (await this.request<Task>("POST", `/tasks/${encodeURIComponent(id)}/complete`, body)).body;
  }

  async fail(id: string, body: { claim_id?: string | null; reason?: string | null; cost_usd?: number } = {}): Promise<Task> {
    return (await this.request<Task>("POST", `/tasks/${encodeURIComponent(id)}/fail`, body)).body;
  }

  /** Renew a claim's lease (call well within `lease_s`). */
  async heartbeat(id: string, claimId: string): Promise<ClaimLease> {
    return (await this.request<ClaimLease>("POST", `/tasks/${encodeURIComponent(id)}/heartbeat`, { claim_id: claimId })).body;
  }

  /** Any legal transition; a claimed task needs its `claimId` (cancelling does not). */
  async setStatus(id: string, status: TaskStatus, reason?: string, claimId?: string): Promise<Task> {
    const body: Record<string, string> = { status };
    if (reason !== undefined) body.reason = reason;
    if (claimId !== undefined) body.claim_id = claimId;
    return (await this.request<Task>("POST", `/tasks/${encodeURIComponent(id)}/status`, body)).body;
  }

  /** Ask the orchestrator (or a standalone server) to stop. */
  async stop(opts: StopRequest = {}): Promise<StopResult> {
    return (await this.request<StopResult>("POST", "/stop", opts)).body;
  }

  async shutdown(): Promise<StopResult> {
    return (await this.request<StopResult>("POST", "/shutdown", {})).body;
  }
}
