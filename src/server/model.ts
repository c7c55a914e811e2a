/**
 * The task model shared by the task server, its HTTP client and the
 * orchestrator: statuses, the legal status transitions (spec §11), the
 * record the server returns, and the valibot schemas of every request body.
 */
import * as v from "valibot";

export const TASK_STATUSES = [
  "planned",
  "open",
  "claimed",
  "in_progress",
  "done",
  "closed",
  "failed",
  "blocked",
  "waiting_for_subtasks",
  "cancelled",
  "orphaned",
  "pending_approval",
] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** Allowed targets per status; statuses absent here are terminal. */
export const TRANSITIONS: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  planned: ["open", "cancelled", "failed"],
  open: ["claimed", "waiting_for_subtasks", "cancelled", "failed"],
  claimed: ["in_progress", "open", "done", "failed", "cancelled", "waiting_for_subtasks", "blocked"],
  in_progress: ["done", "failed", "blocked", "waiting_for_subtasks", "open", "cancelled", "orphaned"],
  orphaned: ["done", "failed", "open"],
  blocked: ["open", "cancelled", "failed"],
  waiting_for_subtasks: ["done", "blocked", "cancelled", "failed"],
  failed: ["open"],
  done: ["closed", "failed"],
  closed: [],
  cancelled: [],
  pending_approval: [],
};

export function isTaskStatus(s: string): s is TaskStatus {
  return (TASK_STATUSES as readonly string[]).includes(s);
}

export function canTransition(from: TaskStatus, to: TaskStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** A dependency counts as satisfied once its task reached one of these. */
export const SATISFIED_STATUSES: readonly TaskStatus[] = ["done", "closed"];
/** Statuses from which a task can never again satisfy a dependency. */
export const DEAD_STATUSES: readonly TaskStatus[] = ["failed", "cancelled"];

/** Task ids are path components (traces, logs): keep them filename-safe. */
export const TASK_ID_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/** What the server returns for a task (`TaskResponse`). Keys in this order. */
export interface Task {
  id: string;
  title: string;
  description: string;
  role: string;
  tenant_id: string;
  priority: number;
  scope: string;
  complexity: string;
  status: TaskStatus;
  depends_on: string[];
  model: string | null;
  effort: string | null;
  assigned_agent: string | null;
  result_summary: string | null;
  fail_reason: string | null;
  /** USD this task's agent runs cost (summed over attempts). */
  cost_usd: number;
  /** How many times the task was claimed (1 on the first run, 2 after a retry, ...). */
  attempts: number;
  /** Unix seconds (float). */
  created_at: number;
  updated_at: number;
  claimed_at: number | null;
  completed_at: number | null;
}

const ID_SCHEMA = v.pipe(
  v.string(),
  v.regex(TASK_ID_PATTERN, "must match ^[A-Za-z0-9_.-]{1,64}$"),
  v.check((s) => s !== "." && s !== "..", "must not be '.' or '..'"),
);
const SHORT_TEXT = v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(200, "must be at most 200 characters"));

/** Body of `POST /tasks` (FastAPI's `TaskCreate`); unknown fields are refused. */
export const TaskCreateSchema = v.strictObject({
  /** Extension: a caller-chosen id (plan files name their tasks); generated when absent. */
  id: v.optional(ID_SCHEMA),
  title: v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(500, "must be at most 500 characters")),
  description: v.optional(v.pipe(v.string(), v.maxLength(100_000, "must be at most 100000 characters")), ""),
  role: v.optional(SHORT_TEXT, "auto"),
  priority: v.optional(v.pipe(v.number(), v.integer("must be an integer"), v.minValue(0), v.maxValue(100)), 2),
  scope: v.optional(SHORT_TEXT, "medium"),
  complexity: v.optional(SHORT_TEXT, "medium"),
  model: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(1000, "must be at most 1000 characters"))), null),
  effort: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(1000, "must be at most 1000 characters"))), null),
  depends_on: v.optional(v.pipe(v.array(ID_SCHEMA), v.maxLength(1000)), []),
});
export type TaskCreate = v.InferInput<typeof TaskCreateSchema>;
export type TaskCreateParsed = v.InferOutput<typeof TaskCreateSchema>;

/** Body of `POST /tasks/claim`. */
export const ClaimSchema = v.strictObject({
  agent_id: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(200))), null),
  limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100)), 1),
  /** Wait up to this many seconds for work when none is ready (woken by the store, no polling). */
  wait_s: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(30)), 0),
});
export type ClaimRequest = v.InferInput<typeof ClaimSchema>;

const COST = v.pipe(v.number(), v.minValue(0, "must not be negative"), v.finite("must be finite"));

/** The lease a claim returned; required to complete, fail or move a claimed task. */
const CLAIM_ID = v.optional(v.nullable(v.pipe(v.string(), v.maxLength(200))), null);

/** Body of `POST /tasks/{id}/complete`. */
export const CompleteSchema = v.strictObject({
  result_summary: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(100_000))), null),
  cost_usd: v.optional(COST, 0),
  claim_id: CLAIM_ID,
});

/** Body of `POST /tasks/{id}/heartbeat`. */
export const HeartbeatSchema = v.strictObject({ claim_id: v.pipe(v.string(), v.maxLength(200)) });
export type CompleteRequest = v.InferInput<typeof CompleteSchema>;

/** Body of `POST /tasks/{id}/fail`. */
export const FailSchema = v.strictObject({
  reason: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(100_000))), null),
  cost_usd: v.optional(COST, 0),
  claim_id: CLAIM_ID,
});
export type FailRequest = v.InferInput<typeof FailSchema>;

/** Body of `POST /tasks/{id}/status` (any other legal transition). */
export const StatusChangeSchema = v.strictObject({
  status: v.picklist(TASK_STATUSES, `must be one of ${TASK_STATUSES.join(", ")}`),
  reason: v.optional(v.nullable(v.string()), null),
  claim_id: CLAIM_ID,
});
export type StatusChangeRequest = v.InferInput<typeof StatusChangeSchema>;

/** Body of `POST /stop` (and `POST /shutdown`). */
export const StopSchema = v.strictObject({
  force: v.optional(v.boolean(), false),
  timeout_s: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(86_400)), 30),
  /** Seconds between SIGTERM and SIGKILL to the agents once they are signalled; null: the run's own (`--grace`, `stop_grace_s`). */
  grace_s: v.optional(v.nullable(v.pipe(v.number(), v.minValue(0), v.maxValue(86_400))), null),
});
export type StopRequest = v.InferInput<typeof StopSchema>;
export type StopOptions = v.InferOutput<typeof StopSchema>;

/** `GET /status`. */
export interface ServerStatus {
  run_id: string | null;
  goal: string;
  total: number;
  counts: Record<TaskStatus, number>;
  cost_usd: number;
  /** False when the attached run had an attempt whose cost is unknown (cost_usd is then the known part); true without a run to say otherwise. */
  cost_known: boolean;
  budget_usd: number | null;
  orchestrator: { pid: number; running_agents: number; stopping: boolean } | null;
  server: { pid: number; url: string; started_at: number };
}

/** One line per problem: `title: must not be empty; depends_on[0]: ...`. */
export function describeIssues(issues: readonly v.BaseIssue<unknown>[]): string {
  return issues
    .map((issue) => {
      const path = v.getDotPath(issue);
      if (issue.type === "strict_object" && issue.expected === "never" && path) return `unknown field '${path}'`;
      if (issue.kind === "schema" && issue.input === undefined && path) return `${path}: is required`;
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join("; ");
}
