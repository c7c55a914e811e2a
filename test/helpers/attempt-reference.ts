/**
 * The attempts of a run as src/timeline/attempts.ts documents them, written
 * the plain way (Maps and arrays, an object per attempt, nothing reused):
 * the reference the tracker's allocation-free indexes are tested against.
 */
import type { Attempt, Outcome } from "../../src/timeline/attempts.ts";

export interface ReferenceEvent {
  event: string;
  agent?: string;
  task?: string;
  model?: string;
  role?: string;
  reason?: string;
  signals?: string[];
  agents?: string[];
}

const OPEN_MAX = 65536;
const QUEUE = 256;
const EVENTS_MAX = 32;

export function referenceAttempts(events: ReferenceEvent[], times: number[], end: number): { attempts: Attempt[]; count: number; untracked: number } {
  const out: Attempt[] = [];
  const spawned = new Map<string, { model: string; role: string }>();
  /** Open attempts by agent and task, in the order they opened. */
  const open = new Map<string, Attempt>();
  const key = (agent: string, task: string) => JSON.stringify([agent, task]);
  /** Each task's latest claim while that attempt is open. */
  const latestClaim = new Map<string, Attempt>();
  const closed: Attempt[] = [];
  let count = 0;
  let untracked = 0;
  const note = (a: Attempt, i: number) => {
    if (a.events.length < EVENTS_MAX && a.events[a.events.length - 1] !== i) a.events.push(i);
  };
  const close = (a: Attempt, t: number, index: number | null, outcome: Outcome) => {
    open.delete(key(a.agent, a.task));
    if (latestClaim.get(a.task) === a) latestClaim.delete(a.task);
    a.end = Math.max(a.start, t);
    a.outcome = outcome;
    a.closeIndex = index;
    if (index !== null) note(a, index);
    closed.push(a);
    if (closed.length > QUEUE) out.push(closed.shift()!);
  };
  const reap = (agent: string, i: number, t: number) => {
    for (const a of [...open.values()].filter((o) => o.agent === agent)) close(a, t, i, a.outcome);
    spawned.delete(agent);
  };
  const closeAll = (t: number, i: number | null) => {
    for (const a of [...open.values()]) close(a, t, i, a.outcome === "unknown" ? "unfinished" : a.outcome);
  };
  const find = (task: string, agent: string): Attempt | undefined => {
    if (agent) {
      const a = open.get(key(agent, task));
      if (a) return a;
    }
    const latest = latestClaim.get(task);
    if (latest && (!agent || latest.agent === agent)) return latest;
    return closed.findLast((c) => c.task === task && (!agent || c.agent === agent));
  };
  const settle = (a: Attempt | undefined, i: number, outcome: Outcome, reason = "") => {
    if (!a) return;
    a.outcome = outcome;
    if (reason) a.reason = reason;
    note(a, i);
  };
  events.forEach((e, i) => {
    const t = times[i]!;
    const agent = e.agent ?? "";
    const task = e.task ?? "";
    switch (e.event) {
      case "agent_spawned":
        if (spawned.size < OPEN_MAX || spawned.has(agent)) spawned.set(agent, { model: e.model ?? "", role: e.role ?? "" });
        return;
      case "task_claimed": {
        const previous = open.get(key(agent, task));
        if (previous) {
          close(previous, t, null, previous.outcome === "unknown" ? "unfinished" : previous.outcome);
          previous.closeIndex = i;
        }
        if (open.size >= OPEN_MAX) {
          untracked++;
          return;
        }
        const info = spawned.get(agent);
        const a: Attempt = { agent, task, model: e.model || info?.model || "", role: info?.role ?? "", start: t, end: t, outcome: "unknown", signals: [], reason: "", events: [], closeIndex: null };
        note(a, i);
        open.set(key(agent, task), a);
        latestClaim.set(task, a);
        count++;
        return;
      }
      case "agent_reaped":
        return reap(agent, i, t);
      case "agents_reaped":
        for (const id of e.agents ?? []) reap(id, i, t);
        return;
      case "run_completed":
        return closeAll(t, i);
      case "task_completed":
        return settle(find(task, agent), i, "done");
      case "task_verification_failed": {
        const a = find(task, agent);
        if (a) a.signals = [...(e.signals ?? [])];
        return settle(a, i, "failed");
      }
      case "task_retried": {
        const a = find(task, agent);
        return settle(a, i, a?.outcome === "failed" ? "retried" : (a?.outcome ?? "retried"));
      }
      case "task_failed":
        return settle(find(task, agent), i, "failed", e.reason ?? "");
      case "task_requeued":
      case "task_cancelled":
      case "task_result_discarded":
        return settle(find(task, agent), i, "cancelled", e.reason || e.event);
    }
  });
  closeAll(end, null);
  out.push(...closed.splice(0));
  return { attempts: out, count, untracked };
}
