/**
 * The task store on PostgreSQL (Bun.sql), for several `bernstein server`
 * processes, on one or many hosts, serving one backlog.
 *
 * - The schema is versioned (`bernstein_schema`); migrations run at start
 *   under a transaction-scoped advisory lock, so servers starting together
 *   apply each one exactly once.
 * - A claim is one statement: a CTE selects ready tasks `FOR UPDATE SKIP
 *   LOCKED`, updates them and inserts their claims, so two servers never hand
 *   out one task and never wait on each other's rows.
 * - The lease rules are the SQLite store's (./claim-rules.ts), applied to rows
 *   read `FOR UPDATE` in the same transaction; expiry re-queues in SQL.
 * - Creating or re-opening a task sends `NOTIFY bernstein_tasks` (delivered on
 *   commit): claimers waiting for work (`wait_s`) wake up at once, on every
 *   server, instead of polling.
 * - A lost connection (server restart `57P01`, closed socket, refused) is
 *   retried with back-off for up to RETRY_BUDGET_MS. Every call is one
 *   transaction, so a retried call either applied once or not at all; a
 *   call whose COMMIT was sent but not acknowledged may have applied, and
 *   its retry then answers as for any repeated request (e.g. 409 for a
 *   second completion).
 */
import { SQL } from "bun";
import { assertClaimHolder, HELD_STATUSES, transitionUpdate, type ClaimCheck, type ClaimRow, type TransitionFields } from "./claim-rules.ts";
import { IllegalTransitionError, InvalidTaskRequestError, TaskExistsError, TaskNotFoundError } from "./errors.ts";
import { SATISFIED_STATUSES, TASK_STATUSES, TRANSITIONS, canTransition, isTaskStatus, type Task, type TaskCreate, type TaskStatus } from "./model.ts";
import { storeSchema } from "./schema.ts";
import { redactPassword } from "./store-url.ts";
import { checkBatch, COLUMNS, toTask, type TaskRow } from "./store.ts";
import { TaskChanges, type ExpiredClaim, type Lease, type ListOptions, type OrchestratorStore, type TaskChangeListener } from "./store-api.ts";

const CHANNEL = "bernstein_tasks";
/** How long a call keeps retrying a lost connection before it fails. */
export const RETRY_BUDGET_MS = 20_000;
/** At start a database that does not answer is more likely a wrong URL than a restart: give up sooner. */
const OPEN_RETRY_BUDGET_MS = 3_000;

/**
 * Each entry is applied once, in order, and recorded in bernstein_schema.
 * Migration 1 is the schema as first released; test/server/schema.test.ts
 * pins its text, so a change to the shared tables must come as a new entry.
 */
export const MIGRATIONS: readonly string[] = [storeSchema("postgres")];

/** Any fixed 64-bit key: the advisory lock that serialises migrations. */
const MIGRATION_LOCK = 7261_0019_2023n;

/** Columns as selected: depends_on as JSON text, as the SQLite rows carry it. */
const SELECT = COLUMNS.replace("depends_on", "depends_on::text AS depends_on");
const SATISFIED = SATISFIED_STATUSES.map((s) => `'${s}'`).join(", ");

/** A task is ready when it is open and every dependency exists and is satisfied (alias `t`). */
const READY_WHERE = `t.status = 'open'
    AND NOT EXISTS (
      SELECT 1 FROM jsonb_array_elements_text(t.depends_on) d(dep)
      LEFT JOIN tasks x ON x.id = d.dep
      WHERE x.id IS NULL OR x.status NOT IN (${SATISFIED})
    )`;

const CLAIM_SQL = `
WITH ready AS (
  SELECT t.id FROM tasks t
  WHERE ${READY_WHERE}
  ORDER BY t.priority ASC, t.seq ASC
  LIMIT $1
  FOR UPDATE OF t SKIP LOCKED
), claimed AS (
  UPDATE tasks t SET status = 'claimed', assigned_agent = $2, attempts = t.attempts + 1, claimed_at = $3, updated_at = $3
  FROM ready WHERE t.id = ready.id
  RETURNING t.*
), leases AS (
  INSERT INTO claims (claim_id, task_id, agent_id, claimed_at, lease_s, expires_at)
  SELECT replace(gen_random_uuid()::text, '-', ''), c.id, $2, $3, $4, $5 FROM claimed c
  RETURNING claim_id, task_id, expires_at
)
SELECT ${COLUMNS.split(", ").map((c) => (c === "depends_on" ? "c.depends_on::text AS depends_on" : `c.${c}`)).join(", ")}, l.claim_id, l.expires_at AS lease_expires_at
FROM claimed c JOIN leases l ON l.task_id = c.id
ORDER BY c.priority ASC, c.seq ASC`;

function now(): number {
  return Date.now() / 1000;
}

/** `?` placeholders (shared SQL fragments) to PostgreSQL's `$n`, numbered from `first`. */
function numbered(sql: string, first = 1): string {
  let n = first;
  return sql.replace(/\?/g, () => `$${n++}`);
}

const CONNECTION_CODES = new Set(["57P01", "57P02", "57P03", "08000", "08001", "08003", "08004", "08006", "ERR_POSTGRES_CONNECTION_CLOSED", "ERR_POSTGRES_CONNECTION_TIMEOUT", "ECONNREFUSED", "ECONNRESET", "EPIPE"]);

/** A failure of the connection, not of the statement: worth a retry on a fresh connection. */
export function isConnectionLoss(err: unknown): boolean {
  const e = err as { code?: unknown; errno?: unknown; message?: unknown };
  const code = typeof e?.code === "string" ? e.code : "";
  const errno = typeof e?.errno === "string" ? e.errno : "";
  if (CONNECTION_CODES.has(code) || CONNECTION_CODES.has(errno)) return true;
  return /connection (was )?(closed|refused|reset|terminated)|terminating connection|the database system is (starting up|shutting down)|ECONNREFUSED|Failed to connect/i.test(String(e?.message ?? ""));
}

type Tx = SQL;

export class PgTaskStore implements OrchestratorStore {
  readonly kind = "postgres" as const;
  readonly location: string;
  private readonly sql: SQL;
  private readonly waiters = new Set<() => void>();
  private readonly changes = new TaskChanges();
  private unlisten: (() => Promise<void>) | null = null;
  private closed = false;

  private constructor(url: string) {
    this.location = redactPassword(url);
    // A small pool per server: the claim is one statement, and the database is shared by several servers.
    this.sql = new SQL({ url, max: 8, idleTimeout: 30, connectionTimeout: 5 });
  }

  /** Connect, apply pending migrations, and listen for new work. */
  static async open(url: string): Promise<PgTaskStore> {
    const store = new PgTaskStore(url);
    try {
      await store.retrying(() => store.migrate(), OPEN_RETRY_BUDGET_MS);
      const sub = await store.retrying(() => store.sql.listen(CHANNEL, () => store.wake()), OPEN_RETRY_BUDGET_MS);
      store.unlisten = () => sub.unlisten();
    } catch (err) {
      await store.sql.close().catch(() => {});
      throw err;
    }
    return store;
  }

  private async migrate(): Promise<void> {
    await this.sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
      await tx`CREATE TABLE IF NOT EXISTS bernstein_schema (version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)`;
      const [{ v }] = await tx`SELECT COALESCE(MAX(version), 0)::int AS v FROM bernstein_schema`;
      for (let i = v; i < MIGRATIONS.length; i++) {
        await tx.unsafe(MIGRATIONS[i]!);
        await tx`INSERT INTO bernstein_schema (version, applied_at) VALUES (${i + 1}, ${now()})`;
      }
    });
  }

  /** The schema version the database is at (for status and tests). */
  async schemaVersion(): Promise<number> {
    const [{ v }] = await this.retrying(() => this.sql`SELECT COALESCE(MAX(version), 0)::int AS v FROM bernstein_schema`);
    return v;
  }

  /** Changes committed through this object (not those of other servers on the database). */
  onChange(listener: TaskChangeListener): () => void {
    return this.changes.on(listener);
  }

  private emit(task: Task, previous: TaskStatus | null): void {
    this.changes.emit(task, previous);
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }

  waitForWork(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }

  /** Run `fn` (one transaction), again on a fresh connection while the connection is what failed. */
  private async retrying<T>(fn: () => Promise<T>, budgetMs = RETRY_BUDGET_MS): Promise<T> {
    const deadline = Date.now() + budgetMs;
    let delay = 50;
    for (;;) {
      try {
        return await fn();
      } catch (err) {
        if (this.closed || !isConnectionLoss(err) || Date.now() + delay > deadline) throw err;
        await Bun.sleep(delay);
        delay = Math.min(delay * 2, 1000);
      }
    }
  }

  private tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.retrying(() => this.sql.begin((tx) => fn(tx as unknown as Tx)) as Promise<T>);
  }

  private async row(tx: Tx, id: string, lock = false): Promise<TaskRow | null> {
    const rows = await tx.unsafe(`SELECT ${SELECT} FROM tasks WHERE id = $1${lock ? " FOR UPDATE" : ""}`, [id]);
    return (rows[0] as TaskRow | undefined) ?? null;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.wake();
    await this.unlisten?.().catch(() => {});
    await this.sql.close({ timeout: 5 });
  }

  async get(id: string): Promise<Task | null> {
    const r = await this.retrying(() => this.row(this.sql, id));
    return r ? toTask(r) : null;
  }

  async require(id: string): Promise<Task> {
    const t = await this.get(id);
    if (!t) throw new TaskNotFoundError(id);
    return t;
  }

  async create(body: TaskCreate): Promise<Task> {
    return (await this.createMany([body]))[0]!;
  }

  /** As TaskStore.createMany: one transaction, dependencies within the batch or existing, no cycles. */
  async createMany(bodies: readonly TaskCreate[]): Promise<Task[]> {
    const created = await this.insertMany(bodies);
    for (const t of created) this.emit(t, null);
    return created;
  }

  private async insertMany(bodies: readonly TaskCreate[]): Promise<Task[]> {
    const { parsed, ids, inBatch } = checkBatch(bodies);
    return this.tx(async (tx) => {
      const ts = now();
      const out: Task[] = [];
      for (let i = 0; i < parsed.length; i++) {
        const p = parsed[i]!;
        const id = ids[i]!;
        for (const dep of p.depends_on) {
          if (!inBatch.has(dep) && !(await this.row(tx, dep))) throw new InvalidTaskRequestError(`task '${id}' depends on unknown task '${dep}'`);
        }
        const rows = await tx.unsafe(
          `INSERT INTO tasks (id, title, description, role, priority, scope, complexity, status, depends_on, model, effort, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, 'open', $8::text::jsonb, $9, $10, $11, $11)
           ON CONFLICT (id) DO NOTHING
           RETURNING ${SELECT}`,
          [id, p.title, p.description, p.role, p.priority, p.scope, p.complexity, JSON.stringify(p.depends_on), p.model, p.effort, ts],
        );
        if (rows.length === 0) throw new TaskExistsError(id);
        out.push(toTask(rows[0] as TaskRow));
      }
      await tx`SELECT pg_notify(${CHANNEL}, 'created')`;
      return out;
    });
  }

  async list(opts: ListOptions = {}): Promise<{ tasks: Task[]; total: number }> {
    return this.retrying(async () => {
      const where = opts.status ? "WHERE status = $1" : "";
      const params: (string | number | null)[] = opts.status ? [opts.status] : [];
      const [{ n }] = await this.sql.unsafe(`SELECT COUNT(*)::int AS n FROM tasks ${where}`, params);
      const p = params.length;
      const rows = await this.sql.unsafe(`SELECT ${SELECT} FROM tasks ${where} ORDER BY seq ASC LIMIT $${p + 1} OFFSET $${p + 2}`, [
        ...params,
        opts.limit ?? null,
        opts.offset ?? 0,
      ]);
      return { tasks: (rows as TaskRow[]).map(toTask), total: n as number };
    });
  }

  async counts(): Promise<Record<TaskStatus, number>> {
    const out = Object.fromEntries(TASK_STATUSES.map((s) => [s, 0])) as Record<TaskStatus, number>;
    const rows = await this.retrying(() => this.sql`SELECT status, COUNT(*)::int AS n FROM tasks GROUP BY status`);
    for (const r of rows as { status: string; n: number }[]) if (isTaskStatus(r.status)) out[r.status] = r.n;
    return out;
  }

  async claimLeased(agentId: string | null, limit = 1, leaseS: number | null = null): Promise<{ task: Task; lease: Lease }[]> {
    const rows = await this.retrying(async () => {
      const ts = now();
      return (await this.sql.unsafe(CLAIM_SQL, [limit, agentId, ts, leaseS, leaseS === null ? null : ts + leaseS])) as (TaskRow & {
        claim_id: string;
        lease_expires_at: number | null;
      })[];
    });
    const out = rows.map((r) => ({ task: toTask(r), lease: { task_id: r.id, claim_id: r.claim_id, lease_expires_at: r.lease_expires_at, lease_s: leaseS } }));
    for (const c of out) this.emit(c.task, "open");
    return out;
  }

  async claim(agentId: string | null, limit = 1): Promise<Task[]> {
    return (await this.claimLeased(agentId, limit, null)).map((c) => c.task);
  }

  /** Ready tasks (open, dependencies satisfied) in claim order, without claiming. */
  async ready(limit = 1000): Promise<Task[]> {
    const rows = await this.retrying(() =>
      this.sql.unsafe(
        `SELECT ${SELECT} FROM tasks t WHERE ${READY_WHERE} ORDER BY t.priority ASC, t.seq ASC LIMIT $1`,
        [limit],
      ),
    );
    return (rows as TaskRow[]).map(toTask);
  }

  /** Tell listeners about tasks a committed requeue put back to open. */
  private async emitRequeued(done: ExpiredClaim[]): Promise<ExpiredClaim[]> {
    if (this.changes.size === 0) return done;
    for (const e of done) {
      const t = await this.get(e.task_id);
      if (t) this.emit(t, "claimed");
    }
    return done;
  }

  private async activeClaim(tx: Tx, taskId: string): Promise<ClaimRow | null> {
    const rows = await tx`SELECT * FROM claims WHERE task_id = ${taskId} AND ended_at IS NULL`;
    return (rows[0] as ClaimRow | undefined) ?? null;
  }

  private async checkClaim(tx: Tx, id: string, status: string, check: ClaimCheck): Promise<void> {
    if (!check.enforce) return;
    const active = HELD_STATUSES.includes(status) ? await this.activeClaim(tx, id) : null;
    const presented = check.claimId ?? null;
    const presentedRow = presented === null ? null : (((await tx`SELECT * FROM claims WHERE claim_id = ${presented}`)[0] as ClaimRow | undefined) ?? null);
    assertClaimHolder(id, check, active, presentedRow, now());
  }

  async heartbeat(id: string, claimId: string): Promise<Lease> {
    return this.tx(async (tx) => {
      const r = await this.row(tx, id, true);
      if (!r) throw new TaskNotFoundError(id);
      await this.checkClaim(tx, id, r.status, { enforce: true, claimId });
      const c = (await this.activeClaim(tx, id))!;
      const expires = c.lease_s === null ? null : now() + c.lease_s;
      await tx`UPDATE claims SET expires_at = ${expires} WHERE claim_id = ${claimId}`;
      return { task_id: id, claim_id: claimId, lease_expires_at: expires, lease_s: c.lease_s };
    });
  }

  /** End the given claims and put their tasks back to open, in SQL; a claim another server ended first is skipped. */
  private async requeue(tx: Tx, where: string, params: unknown[], reason: ExpiredClaim["reason"]): Promise<ExpiredClaim[]> {
    const ts = now();
    const ended = (await tx.unsafe(
      `WITH due AS (SELECT claim_id FROM claims WHERE ended_at IS NULL AND ${where} FOR UPDATE SKIP LOCKED),
       ended AS (UPDATE claims c SET ended_at = $${params.length + 1}, end_reason = $${params.length + 2} FROM due WHERE c.claim_id = due.claim_id
                 RETURNING c.claim_id, c.task_id, c.agent_id),
       reopened AS (UPDATE tasks t SET status = 'open', assigned_agent = NULL, updated_at = $${params.length + 1}
                    FROM ended WHERE t.id = ended.task_id AND t.status IN ('claimed', 'in_progress') RETURNING t.id)
       SELECT e.claim_id, e.task_id, e.agent_id FROM ended e JOIN reopened r ON r.id = e.task_id`,
      [...params, ts, reason],
    )) as { claim_id: string; task_id: string; agent_id: string | null }[];
    if (ended.length > 0) await tx`SELECT pg_notify(${CHANNEL}, 'requeued')`;
    return ended.map((e) => ({ task_id: e.task_id, claim_id: e.claim_id, agent_id: e.agent_id, expired_at: ts, reason }));
  }

  async expireLeases(): Promise<ExpiredClaim[]> {
    return this.emitRequeued(await this.tx((tx) => this.requeue(tx, "expires_at IS NOT NULL AND expires_at <= $1", [now()], "lease_expired")));
  }

  /**
   * Claims with no expiry belong to an orchestrator's own process; a
   * standalone server on a shared database cannot tell whether their holder
   * lives (it may be on another host), so it leaves them alone. Claims made
   * over HTTP always carry a lease and expire instead.
   */
  async releaseProcessClaims(): Promise<ExpiredClaim[]> {
    return [];
  }

  async transition(id: string, to: TaskStatus, fields: TransitionFields = {}, check: ClaimCheck = { enforce: false }): Promise<Task> {
    let previous: TaskStatus = "open";
    const task = await this.tx(async (tx) => {
      const r = await this.row(tx, id, true);
      if (!r) throw new TaskNotFoundError(id);
      await this.checkClaim(tx, id, r.status, check);
      previous = r.status as TaskStatus;
      if (!canTransition(previous, to)) throw new IllegalTransitionError(id, previous, to, TRANSITIONS[previous]);
      const ts = now();
      const { sets, params } = transitionUpdate(to, fields, ts);
      const rows = await tx.unsafe(`UPDATE tasks SET ${numbered(sets.join(", "))} WHERE id = $${params.length + 1} RETURNING ${SELECT}`, [...params, id]);
      if (HELD_STATUSES.includes(previous) && !HELD_STATUSES.includes(to)) {
        await tx`UPDATE claims SET ended_at = ${ts}, end_reason = ${to} WHERE task_id = ${id} AND ended_at IS NULL`;
      }
      if (to === "open") await tx`SELECT pg_notify(${CHANNEL}, 'reopened')`;
      return toTask(rows[0] as TaskRow);
    });
    this.emit(task, previous);
    return task;
  }

  complete(id: string, body: { result_summary?: string | null; cost_usd?: number } = {}, check: ClaimCheck = { enforce: false }): Promise<Task> {
    return this.transition(id, "done", { result_summary: body.result_summary ?? null, cost_usd: body.cost_usd ?? 0 }, check);
  }

  fail(id: string, body: { reason?: string | null; cost_usd?: number } = {}, check: ClaimCheck = { enforce: false }): Promise<Task> {
    return this.transition(id, "failed", { reason: body.reason ?? null, cost_usd: body.cost_usd ?? 0 }, check);
  }

  async totalCost(): Promise<number> {
    const [{ c }] = await this.retrying(() => this.sql`SELECT COALESCE(SUM(cost_usd), 0)::float8 AS c FROM tasks`);
    return c as number;
  }

  async getMeta(key: string): Promise<string | null> {
    const rows = await this.retrying(() => this.sql`SELECT value FROM meta WHERE key = ${key}`);
    return (rows[0]?.value as string | undefined) ?? null;
  }

  async setMeta(key: string, value: string): Promise<void> {
    await this.retrying(() => this.sql`INSERT INTO meta (key, value) VALUES (${key}, ${value}) ON CONFLICT (key) DO UPDATE SET value = excluded.value`);
  }

  /** Delete every task (tests; a fresh backlog). */
  async clear(): Promise<void> {
    await this.tx(async (tx) => {
      await tx`DELETE FROM tasks`;
      await tx`DELETE FROM meta`;
      await tx`DELETE FROM claims`;
    });
  }
}
