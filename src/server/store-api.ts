/**
 * What the task server needs of a task store. Two engines implement it:
 * `TaskStore` (bun:sqlite, one machine, synchronous) and `PgTaskStore`
 * (PostgreSQL via Bun.sql, several servers on one database, asynchronous).
 * The server awaits every call, so both fit.
 */
import type { ClaimCheck, TransitionFields } from "./claim-rules.ts";
import type { Task, TaskCreate, TaskStatus } from "./model.ts";

export type Awaitable<T> = T | Promise<T>;

/** A claim as handed to its holder: the lease it must show to complete, fail or move the task. */
export interface Lease {
  task_id: string;
  claim_id: string;
  /** Unix seconds; null for a claim held by the serving process itself (it never expires). */
  lease_expires_at: number | null;
  lease_s: number | null;
}

/** A claim that ran out and went back to `open`. */
export interface ExpiredClaim {
  task_id: string;
  claim_id: string;
  agent_id: string | null;
  expired_at: number;
  reason: "lease_expired" | "holder_gone";
}

export interface ListOptions {
  status?: TaskStatus;
  limit?: number;
  offset?: number;
}

export interface TaskBackend {
  readonly kind: "sqlite" | "postgres";
  /** Where the tasks live, for messages and `server --as-json` (a path, or a URL without its password). */
  readonly location: string;
  create(body: TaskCreate): Awaitable<Task>;
  list(opts?: ListOptions): Awaitable<{ tasks: Task[]; total: number }>;
  require(id: string): Awaitable<Task>;
  counts(): Awaitable<Record<TaskStatus, number>>;
  claimLeased(agentId: string | null, limit: number, leaseS: number | null): Awaitable<{ task: Task; lease: Lease }[]>;
  heartbeat(id: string, claimId: string): Awaitable<Lease>;
  expireLeases(): Awaitable<ExpiredClaim[]>;
  releaseProcessClaims(): Awaitable<ExpiredClaim[]>;
  transition(id: string, to: TaskStatus, fields?: TransitionFields, check?: ClaimCheck): Awaitable<Task>;
  complete(id: string, body?: { result_summary?: string | null; cost_usd?: number }, check?: ClaimCheck): Awaitable<Task>;
  fail(id: string, body?: { reason?: string | null; cost_usd?: number }, check?: ClaimCheck): Awaitable<Task>;
  totalCost(): Awaitable<number>;
  getMeta(key: string): Awaitable<string | null>;
  /** Resolves once a task may have become claimable (created or back to open), or after `ms`. */
  waitForWork(ms: number): Promise<void>;
  close(): Awaitable<void>;
}

/** Called after every committed change of a task made through this store object (creation included). */
export type TaskChangeListener = (task: Task, previous: TaskStatus | null) => void;

/** What an orchestrator needs on top of the server's calls: planning, its own claims, change events. */
export interface OrchestratorStore extends TaskBackend {
  createMany(bodies: readonly TaskCreate[]): Awaitable<Task[]>;
  /** Claims held by the calling process itself: no lease. */
  claim(agentId: string | null, limit?: number): Awaitable<Task[]>;
  ready(limit?: number): Awaitable<Task[]>;
  get(id: string): Awaitable<Task | null>;
  setMeta(key: string, value: string): Awaitable<void>;
  clear(): Awaitable<void>;
  onChange(listener: TaskChangeListener): () => void;
}

/** The listeners of one store object: told after each commit, never able to undo it. */
export class TaskChanges {
  private readonly listeners = new Set<TaskChangeListener>();

  get size(): number {
    return this.listeners.size;
  }

  on(listener: TaskChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(task: Task, previous: TaskStatus | null): void {
    for (const l of this.listeners) {
      try {
        l(task, previous);
      } catch {
        /* a listener's failure must not undo a committed change */
      }
    }
  }
}
