import { join } from "node:path";
import * as v from "valibot";
import { f, toPlain } from "./files.ts";
import { appendJsonLine, readJsonLines, type AppendOptions, type ReadRowsResult } from "./jsonl-log.ts";

/**
 * Task notifications: one row when a task's agent finishes, fails or is
 * killed, for whoever waits on the session (a parent agent, a chat bridge).
 * `.sdd/runtime/task_notifications.jsonl`, rotated at 10 MiB.
 */
export const NOTIFICATION_STATUSES = ["completed", "failed", "killed"] as const;
export type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];

export interface TaskNotification {
  task_id: string;
  session_id: string;
  status: NotificationStatus;
  summary: string;
  result: string;
  /** Token/cost usage as reported by the agent (free-form object). */
  usage: Record<string, unknown>;
  ts: number;
}

/** An unknown status reads back as `failed`: never report success that was not recorded. */
const statusSchema = v.fallback(v.picklist(NOTIFICATION_STATUSES), "failed");

export const TaskNotificationSchema = v.object({
  task_id: v.string(),
  session_id: v.optional(v.string(), ""),
  status: v.optional(statusSchema, "failed"),
  summary: v.optional(v.string(), ""),
  result: v.optional(v.string(), ""),
  usage: v.optional(v.record(v.string(), v.unknown()), () => ({})),
  ts: v.optional(v.number(), 0),
});

export function taskNotificationsPath(sddDir: string): string {
  return join(sddDir, "runtime", "task_notifications.jsonl");
}

export type NewTaskNotification = Pick<TaskNotification, "task_id" | "session_id" | "status"> &
  Partial<Omit<TaskNotification, "task_id" | "session_id" | "status">>;

/** Append one notification (ts defaults to now); returns the row written. */
export function notifyTask(sddDir: string, n: NewTaskNotification, options: AppendOptions = {}): TaskNotification {
  const row: TaskNotification = {
    task_id: n.task_id,
    session_id: n.session_id,
    status: v.parse(statusSchema, n.status),
    summary: n.summary ?? "",
    result: n.result ?? "",
    usage: n.usage ?? {},
    ts: n.ts ?? Date.now() / 1000,
  };
  appendJsonLine(
    taskNotificationsPath(sddDir),
    {
      task_id: row.task_id,
      session_id: row.session_id,
      status: row.status,
      summary: row.summary,
      result: row.result,
      usage: row.usage as never,
      ts: f(row.ts),
    },
    options,
  );
  return row;
}

/** Every readable notification, oldest first; optionally only one task's. */
export function readTaskNotifications(sddDir: string, taskId?: string): ReadRowsResult<TaskNotification> {
  const read = readJsonLines(taskNotificationsPath(sddDir), (row) => {
    const r = v.safeParse(TaskNotificationSchema, toPlain(row));
    return r.success ? r.output : null;
  });
  return taskId === undefined ? read : { ...read, rows: read.rows.filter((r) => r.task_id === taskId) };
}
