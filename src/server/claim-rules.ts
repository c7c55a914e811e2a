/**
 * The rules every task store enforces, whatever engine holds the rows
 * (SQLite here, PostgreSQL for several servers): who may move a held task,
 * and what a status change writes. Both stores call these inside their own
 * transaction, on the rows they read there.
 */
import { ClaimMismatchError, LeaseExpiredError } from "./errors.ts";
import type { TaskStatus } from "./model.ts";

/** Statuses in which a task belongs to the holder of its claim. */
export const HELD_STATUSES: readonly string[] = ["claimed", "in_progress"];

/** What a caller presents to change a held task: `enforce` (HTTP) requires the task's current claim id. */
export interface ClaimCheck {
  enforce: boolean;
  claimId?: string | null;
}

/** A row of the claims table. */
export interface ClaimRow {
  claim_id: string;
  task_id: string;
  agent_id: string | null;
  lease_s: number | null;
  expires_at: number | null;
  ended_at: number | null;
  end_reason: string | null;
}

/**
 * Refuse a change of a held task by anyone but the holder of its claim.
 * `active` is the task's open claim (when the task is held), `presentedRow`
 * the claim the caller's id names (if it exists at all).
 */
export function assertClaimHolder(
  id: string,
  check: ClaimCheck,
  active: ClaimRow | null,
  presentedRow: ClaimRow | null,
  now: number,
): void {
  if (!check.enforce) return;
  const presented = check.claimId ?? null;
  if (active && presented === active.claim_id) {
    // Overdue but not yet swept: expired all the same (the sweeper puts it back to open).
    if (active.expires_at !== null && active.expires_at <= now) throw new LeaseExpiredError(id, presented, active.expires_at);
    return;
  }
  if (presented !== null) {
    const c = presentedRow;
    if (c && c.task_id === id && c.end_reason === "lease_expired") throw new LeaseExpiredError(id, presented, c.ended_at);
    if (active || (c && c.task_id === id)) throw new ClaimMismatchError(id, active ? "the claim_id is not this task's current claim" : "that claim has ended");
    if (!active) return;
  }
  if (active) throw new ClaimMismatchError(id, "the task is claimed: send the claim_id its claim returned");
}

export interface TransitionFields {
  reason?: string | null;
  result_summary?: string | null;
  cost_usd?: number;
  assigned_agent?: string | null;
}

/** The `SET` list (with `?` placeholders) and its parameters for moving a task from `previous` to `to`. */
export function transitionUpdate(to: TaskStatus, fields: TransitionFields, ts: number): { sets: string[]; params: (string | number | null)[] } {
  const sets = ["status = ?", "updated_at = ?"];
  const params: (string | number | null)[] = [to, ts];
  if (to === "done" || to === "failed" || to === "cancelled" || to === "closed") {
    sets.push("completed_at = ?");
    params.push(ts);
  }
  if (to === "open") {
    // Back in the queue: it belongs to no agent any more.
    sets.push("assigned_agent = NULL", "completed_at = NULL");
  }
  if (fields.reason !== undefined) {
    sets.push("fail_reason = ?");
    params.push(fields.reason);
  }
  if (fields.result_summary !== undefined) {
    sets.push("result_summary = ?");
    params.push(fields.result_summary);
  }
  if (fields.cost_usd !== undefined && fields.cost_usd !== 0) {
    sets.push("cost_usd = cost_usd + ?");
    params.push(fields.cost_usd);
  }
  if (fields.assigned_agent !== undefined && to !== "open") {
    sets.push("assigned_agent = ?");
    params.push(fields.assigned_agent);
  }
  return { sets, params };
}
