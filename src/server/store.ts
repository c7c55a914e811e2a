/**
 * The durable task store: SQLite (`bun:sqlite`, WAL) at
 * `<sdd>/runtime/tasks.db`. Every mutation is one transaction; the claim is a
 * `BEGIN IMMEDIATE` transaction, so two connections (or two processes) can
 * never claim the same task. Status changes follow the transition table of
 * spec §11 and refuse anything else with the allowed targets named.
 */
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { randomBytes } from "node:crypto";
import * as v from "valibot";
import { assertClaimHolder, HELD_STATUSES, transitionUpdate, type ClaimCheck, type ClaimRow, type TransitionFields } from "./claim-rules.ts";
import { IllegalTransitionError, InvalidTaskRequestError, TaskExistsError, TaskNotFoundError } from "./errors.ts";

import { TaskChanges, type ExpiredClaim, type Lease, type ListOptions, type OrchestratorStore, type TaskChangeListener } from "./store-api.ts";

export type { ClaimCheck } from "./claim-rules.ts";
export type { ExpiredClaim, Lease, ListOptions } from "./store-api.ts";
import {
  SATISFIED_STATUSES,
  TASK_STATUSES,
  TRANSITIONS,
  TaskCreateSchema,
  canTransition,
  describeIssues,
  isTaskStatus,
  type Task,
  type TaskCreate,
  type TaskCreateParsed,
  type TaskStatus,
} from "./model.ts";
import { ensurePrivateDir, ensurePrivateFile, narrow, PRIVATE_FILE_MODE, tasksDbPath } from "./paths.ts";
import { storeSchema } from "./schema.ts";

/** A row of the tasks table: the task as served, with status unchecked and depends_on as JSON text. */
export type TaskRow = Omit<Task, "status" | "depends_on"> & { status: string; depends_on: string };

const SCHEMA = storeSchema("sqlite");

export const COLUMNS =
  "id, title, description, role, tenant_id, priority, scope, complexity, status, depends_on, model, effort, assigned_agent, result_summary, fail_reason, cost_usd, attempts, created_at, updated_at, claimed_at, completed_at";

/** A task is ready when it is open and every dependency is satisfied. */
const READY_SQL = `
SELECT ${COLUMNS} FROM tasks t
WHERE t.status = 'open'
  AND NOT EXISTS (
    SELECT 1 FROM json_each(t.depends_on) d
    LEFT JOIN tasks x ON x.id = d.value
    WHERE x.id IS NULL OR x.status NOT IN (${SATISFIED_STATUSES.map((s) => `'${s}'`).join(", ")})
  )
ORDER BY t.priority ASC, t.seq ASC
LIMIT ?`;

export type { TaskChangeListener } from "./store-api.ts";

function now(): number {
  return Date.now() / 1000;
}

/** 12 hex characters, like the Python server's short uuid ids. */
export function newTaskId(): string {
  return randomBytes(6).toString("hex");
}

/** A stored row as served (depends_on is JSON text in both engines). */
export function toTask(r: TaskRow): Task {
  return {
    id: r.id,
    title: r.title,
    description: r.description,
    role: r.role,
    tenant_id: r.tenant_id,
    priority: r.priority,
    scope: r.scope,
    complexity: r.complexity,
    status: r.status as TaskStatus,
    depends_on: JSON.parse(r.depends_on) as string[],
    model: r.model,
    effort: r.effort,
    assigned_agent: r.assigned_agent,
    result_summary: r.result_summary,
    fail_reason: r.fail_reason,
    cost_usd: r.cost_usd,
    attempts: r.attempts,
    created_at: r.created_at,
    updated_at: r.updated_at,
    claimed_at: r.claimed_at,
    completed_at: r.completed_at,
  };
}

export class TaskStore implements OrchestratorStore {
  readonly kind = "sqlite" as const;
  readonly path: string;
  private readonly db: Database;
  private readonly changes = new TaskChanges();

  constructor(path: string) {
    this.path = path;
    if (path !== ":memory:") {
      // SQLite gives -wal and -shm the mode of the database file: a 0600
      // tasks.db keeps all three owner-only.
      ensurePrivateDir(dirname(path));
      ensurePrivateFile(path);
      for (const side of ["-wal", "-shm"]) if (existsSync(path + side)) narrow(path + side, PRIVATE_FILE_MODE, false);
    }
    this.db = new Database(path, { create: true, strict: true });
    // Another process (a second server, a test client) may hold the write
    // lock for a moment: wait for it instead of failing with SQLITE_BUSY.
    this.db.exec("PRAGMA busy_timeout = 10000");
    this.db.exec("PRAGMA journal_mode = WAL");
    // WAL + NORMAL survives any process crash (kill -9); only an OS crash can
    // lose the last commits, which the orchestrator's session file tolerates.
    this.db.exec("PRAGMA synchronous = NORMAL");
    this.db.exec(SCHEMA);
  }

  get location(): string {
    return this.path;
  }

  /** Resolves at the next creation or re-opening of a task in this process, or after `ms`. */
  waitForWork(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        off();
        resolve();
      };
      const timer = setTimeout(done, ms);
      const off = this.onChange((task) => {
        if (task.status === "open") done();
      });
    });
  }

  static open(sddDir: string): TaskStore {
    return new TaskStore(tasksDbPath(sddDir));
  }

  close(): void {
    this.db.close();
  }

  /** Called after every committed change of a task (creation included). */
  onChange(listener: TaskChangeListener): () => void {
    return this.changes.on(listener);
  }

  private emit(task: Task, previous: TaskStatus | null): void {
    this.changes.emit(task, previous);
  }

  private row(id: string): TaskRow | null {
    return this.db.query<TaskRow, [string]>(`SELECT ${COLUMNS} FROM tasks WHERE id = ?`).get(id);
  }

  get(id: string): Task | null {
    const r = this.row(id);
    return r ? toTask(r) : null;
  }

  require(id: string): Task {
    const t = this.get(id);
    if (!t) throw new TaskNotFoundError(id);
    return t;
  }

  /** Validate a creation body (HTTP bodies and plan tasks alike). */
  static validateCreate(body: unknown): TaskCreateParsed {
    const r = v.safeParse(TaskCreateSchema, body);
    if (!r.success) throw new InvalidTaskRequestError(describeIssues(r.issues));
    return r.output;
  }

  create(body: TaskCreate): Task {
    return this.createMany([body])[0]!;
  }

  /**
   * Create several tasks in one transaction. `depends_on` may name tasks of
   * the same batch or existing tasks; unknown ids, self-dependencies and
   * cycles are refused and nothing is created.
   */
  createMany(bodies: readonly TaskCreate[]): Task[] {
    const { parsed, ids, inBatch } = checkBatch(bodies);

    const insert = this.db.query(
      `INSERT INTO tasks (id, title, description, role, priority, scope, complexity, status, depends_on, model, effort, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'open', ?, ?, ?, ?, ?)`,
    );
    const created = this.db.transaction(() => {
      const ts = now();
      parsed.forEach((p, i) => {
        const id = ids[i]!;
        if (this.row(id)) throw new TaskExistsError(id);
        for (const dep of p.depends_on) {
          if (!inBatch.has(dep) && !this.row(dep)) {
            throw new InvalidTaskRequestError(`task '${id}' depends on unknown task '${dep}'`);
          }
        }
        insert.run(id, p.title, p.description, p.role, p.priority, p.scope, p.complexity, JSON.stringify(p.depends_on), p.model, p.effort, ts, ts);
      });
      return ids.map((id) => toTask(this.row(id)!));
    }).immediate();
    for (const t of created) this.emit(t, null);
    return created;
  }

  /** All tasks in creation order, optionally filtered and paged. */
  list(opts: ListOptions = {}): { tasks: Task[]; total: number } {
    const where = opts.status ? "WHERE status = ?" : "";
    const params: (string | number)[] = opts.status ? [opts.status] : [];
    const total = this.db.query<{ n: number }, (string | number)[]>(`SELECT COUNT(*) AS n FROM tasks ${where}`).get(...params)!.n;
    const limit = opts.limit ?? -1;
    const offset = opts.offset ?? 0;
    const rows = this.db
      .query<TaskRow, (string | number)[]>(`SELECT ${COLUMNS} FROM tasks ${where} ORDER BY seq ASC LIMIT ? OFFSET ?`)
      .all(...params, limit, offset);
    return { tasks: rows.map(toTask), total };
  }

  counts(): Record<TaskStatus, number> {
    const out = Object.fromEntries(TASK_STATUSES.map((s) => [s, 0])) as Record<TaskStatus, number>;
    for (const r of this.db.query<{ status: string; n: number }, []>("SELECT status, COUNT(*) AS n FROM tasks GROUP BY status").all()) {
      if (isTaskStatus(r.status)) out[r.status] = r.n;
    }
    return out;
  }

  /** Ready tasks (open, dependencies satisfied) in claim order, without claiming. */
  ready(limit = 1000): Task[] {
    return this.db.query<TaskRow, [number]>(READY_SQL).all(limit).map(toTask);
  }

  /**
   * Claim up to `limit` ready tasks for `agentId` atomically: the select and
   * the update run in one `BEGIN IMMEDIATE` transaction, and the update only
   * matches rows still open, so no task is ever claimed twice. Each claim
   * gets a claim id (its lease): `leaseS` seconds unless heartbeated, or no
   * expiry (null) for the serving process's own claims.
   */
  claimLeased(agentId: string | null, limit = 1, leaseS: number | null = null): { task: Task; lease: Lease }[] {
    const update = this.db.query(
      `UPDATE tasks SET status = 'claimed', assigned_agent = ?, attempts = attempts + 1, claimed_at = ?, updated_at = ?
       WHERE id = ? AND status = 'open'`,
    );
    const insert = this.db.query("INSERT INTO claims (claim_id, task_id, agent_id, claimed_at, lease_s, expires_at) VALUES (?, ?, ?, ?, ?, ?)");
    const out = this.db.transaction(() => {
      const ts = now();
      const got: { task: Task; lease: Lease }[] = [];
      for (const r of this.db.query<TaskRow, [number]>(READY_SQL).all(limit)) {
        if (update.run(agentId, ts, ts, r.id).changes !== 1) continue;
        const claimId = randomBytes(16).toString("hex");
        const expires = leaseS === null ? null : ts + leaseS;
        insert.run(claimId, r.id, agentId, ts, leaseS, expires);
        got.push({ task: toTask(this.row(r.id)!), lease: { task_id: r.id, claim_id: claimId, lease_expires_at: expires, lease_s: leaseS } });
      }
      return got;
    }).immediate();
    for (const c of out) this.emit(c.task, "open");
    return out;
  }

  /** `claimLeased` without the leases (in-process callers that never expire). */
  claim(agentId: string | null, limit = 1): Task[] {
    return this.claimLeased(agentId, limit, null).map((c) => c.task);
  }

  /** The active claim of a task, if any. */
  private activeClaim(taskId: string): ClaimRow | null {
    return this.db.query<ClaimRow, [string]>("SELECT * FROM claims WHERE task_id = ? AND ended_at IS NULL").get(taskId);
  }

  /** Refuse a change of a held task by anyone but the holder of its claim (inside a transaction). */
  private checkClaim(id: string, status: string, check: ClaimCheck): void {
    if (!check.enforce) return;
    const active = HELD_STATUSES.includes(status) ? this.activeClaim(id) : null;
    const presented = check.claimId ?? null;
    const presentedRow = presented === null ? null : this.db.query<ClaimRow, [string]>("SELECT * FROM claims WHERE claim_id = ?").get(presented);
    assertClaimHolder(id, check, active, presentedRow, now());
  }

  /** Extend a claim's lease by its lease time; the holder's heartbeat. */
  heartbeat(id: string, claimId: string): Lease {
    return this.db.transaction(() => {
      const r = this.row(id);
      if (!r) throw new TaskNotFoundError(id);
      this.checkClaim(id, r.status, { enforce: true, claimId });
      const c = this.activeClaim(id)!;
      const expires = c.lease_s === null ? null : now() + c.lease_s;
      this.db.query("UPDATE claims SET expires_at = ? WHERE claim_id = ?").run(expires, claimId);
      return { task_id: id, claim_id: claimId, lease_expires_at: expires, lease_s: c.lease_s };
    }).immediate();
  }

  /** Claims past their lease, put back to `open` (inside a transaction); returns what was expired. */
  private expireDueLeases(): ExpiredClaim[] {
    const ts = now();
    const due = this.db.query<ClaimRow, [number]>("SELECT * FROM claims WHERE ended_at IS NULL AND expires_at IS NOT NULL AND expires_at <= ?").all(ts);
    return this.requeueClaims(due, ts, "lease_expired");
  }

  private requeueClaims(rows: ClaimRow[], ts: number, reason: ExpiredClaim["reason"]): ExpiredClaim[] {
    const out: ExpiredClaim[] = [];
    for (const c of rows) {
      this.db.query("UPDATE claims SET ended_at = ?, end_reason = ? WHERE claim_id = ?").run(ts, reason, c.claim_id);
      const res = this.db
        .query("UPDATE tasks SET status = 'open', assigned_agent = NULL, updated_at = ? WHERE id = ? AND status IN ('claimed', 'in_progress')")
        .run(ts, c.task_id);
      if (res.changes === 1) out.push({ task_id: c.task_id, claim_id: c.claim_id, agent_id: c.agent_id, expired_at: ts, reason });
    }
    return out;
  }

  /** Tell listeners about tasks a committed requeue put back to open. */
  private emitRequeued(done: ExpiredClaim[]): ExpiredClaim[] {
    for (const e of done) {
      const t = this.get(e.task_id);
      if (t) this.emit(t, "claimed");
    }
    return done;
  }

  /** Put every claim whose lease ran out back to `open`. Returns them (to be journaled). */
  expireLeases(): ExpiredClaim[] {
    return this.emitRequeued(this.db.transaction(() => this.expireDueLeases()).immediate());
  }

  /**
   * Claims held by a serving process (no expiry) whose process is gone: a
   * server that starts on this store holds its lock, so no such holder is
   * alive. Back to `open`.
   */
  releaseProcessClaims(): ExpiredClaim[] {
    const done = this.db
      .transaction(() => {
        const rows = this.db.query<ClaimRow, []>("SELECT * FROM claims WHERE ended_at IS NULL AND expires_at IS NULL").all();
        return this.requeueClaims(rows, now(), "holder_gone");
      })
      .immediate();
    return this.emitRequeued(done);
  }

  /** Move a task along a legal transition (409-style error otherwise). */
  transition(
    id: string,
    to: TaskStatus,
    fields: TransitionFields = {},
    check: ClaimCheck = { enforce: false },
  ): Task {
    let previous: TaskStatus = "open";
    const task = this.db.transaction(() => {
      const r = this.row(id);
      if (!r) throw new TaskNotFoundError(id);
      this.checkClaim(id, r.status, check);
      previous = r.status as TaskStatus;
      if (!canTransition(previous, to)) throw new IllegalTransitionError(id, previous, to, TRANSITIONS[previous]);
      const ts = now();
      const { sets, params } = transitionUpdate(to, fields, ts);
      this.db.query(`UPDATE tasks SET ${sets.join(", ")} WHERE id = ?`).run(...params, id);
      // Leaving the held statuses ends the claim: its id no longer moves the task.
      if (HELD_STATUSES.includes(previous) && !HELD_STATUSES.includes(to)) {
        this.db.query("UPDATE claims SET ended_at = ?, end_reason = ? WHERE task_id = ? AND ended_at IS NULL").run(ts, to, id);
      }
      return toTask(this.row(id)!);
    }).immediate();
    this.emit(task, previous);
    return task;
  }

  complete(id: string, body: { result_summary?: string | null; cost_usd?: number } = {}, check: ClaimCheck = { enforce: false }): Task {
    return this.transition(id, "done", { result_summary: body.result_summary ?? null, cost_usd: body.cost_usd ?? 0 }, check);
  }

  fail(id: string, body: { reason?: string | null; cost_usd?: number } = {}, check: ClaimCheck = { enforce: false }): Task {
    return this.transition(id, "failed", { reason: body.reason ?? null, cost_usd: body.cost_usd ?? 0 }, check);
  }

  /** Sum of the recorded task costs (USD). */
  totalCost(): number {
    return this.db.query<{ c: number | null }, []>("SELECT SUM(cost_usd) AS c FROM tasks").get()!.c ?? 0;
  }

  /** Delete every task (a fresh run starts from an empty backlog). */
  clear(): void {
    this.db.transaction(() => {
      this.db.exec("DELETE FROM tasks");
      this.db.exec("DELETE FROM meta");
      this.db.exec("DELETE FROM claims");
    }).immediate();
  }

  getMeta(key: string): string | null {
    return this.db.query<{ value: string }, [string]>("SELECT value FROM meta WHERE key = ?").get(key)?.value ?? null;
  }

  setMeta(key: string, value: string): void {
    this.db.query("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(key, value);
  }
}

/**
 * A creation batch checked before any store is touched: every body valid,
 * ids given or generated, no duplicates, no task depending on itself, no
 * cycle inside the batch. (Dependencies on existing tasks are checked by
 * each store in its transaction.)
 */
export function checkBatch(bodies: readonly TaskCreate[]): { parsed: TaskCreateParsed[]; ids: string[]; inBatch: Map<string, number> } {
  const parsed = bodies.map((b, i) => {
    try {
      return TaskStore.validateCreate(b);
    } catch (err) {
      if (bodies.length > 1 && err instanceof InvalidTaskRequestError) throw new InvalidTaskRequestError(`task ${i + 1}: ${err.message}`);
      throw err;
    }
  });
  const ids = parsed.map((p) => p.id ?? newTaskId());
  const inBatch = new Map<string, number>();
  ids.forEach((id, i) => {
    if (inBatch.has(id)) throw new InvalidTaskRequestError(`duplicate task id '${id}' in the batch`);
    inBatch.set(id, i);
  });
  parsed.forEach((p, i) => {
    for (const dep of p.depends_on) if (dep === ids[i]) throw new InvalidTaskRequestError(`task '${ids[i]}' depends on itself`);
  });
  assertAcyclic(ids, parsed.map((p) => p.depends_on), inBatch);
  return { parsed, ids, inBatch };
}

/** Refuse dependency cycles inside a batch (Kahn's algorithm over batch edges). */
function assertAcyclic(ids: readonly string[], deps: readonly (readonly string[])[], inBatch: Map<string, number>): void {
  const indegree = ids.map(() => 0);
  const dependents = ids.map(() => [] as number[]);
  deps.forEach((ds, i) => {
    for (const d of ds) {
      const j = inBatch.get(d);
      if (j === undefined) continue;
      indegree[i]!++;
      dependents[j]!.push(i);
    }
  });
  const queue = indegree.flatMap((n, i) => (n === 0 ? [i] : []));
  let seen = 0;
  while (queue.length) {
    const i = queue.pop()!;
    seen++;
    for (const k of dependents[i]!) if (--indegree[k]! === 0) queue.push(k);
  }
  if (seen < ids.length) {
    const cyclic = ids.filter((_, i) => indegree[i]! > 0);
    throw new InvalidTaskRequestError(`dependency cycle among tasks: ${cyclic.join(", ")}`);
  }
}
