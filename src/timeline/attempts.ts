import { humanValue } from "../render/json.ts";
import type { PyObject, PyValue } from "../pyjson/types.ts";

/**
 * Task attempts from the run journal's events, one pass, bounded memory:
 * an attempt opens at `task_claimed` (agent × task) and closes when its
 * agent is reaped (`agent_reaped`, `agents_reaped`), at `run_completed`, or
 * at the end of the journal (still running when the journal ends). The
 * outcome comes from the events between: `task_completed` → done,
 * `task_verification_failed` → failed (its `failed_signals` kept), then
 * `task_retried` → retried; `task_requeued`, `task_cancelled`,
 * `task_result_discarded` → cancelled. Only open attempts and a short queue
 * of closed ones (a `task_retried` may follow the reap) are held; every
 * other attempt has been handed to `emit`.
 */
export type Outcome = "done" | "failed" | "retried" | "cancelled" | "unfinished" | "unknown";

export interface Attempt {
  agent: string;
  task: string;
  model: string;
  role: string;
  /** Milliseconds since the run's time base. */
  start: number;
  end: number;
  outcome: Outcome;
  /** `failed_signals` of the attempt's verification failure. */
  signals: string[];
  /** The reason a failure, requeue or cancel recorded. */
  reason: string;
  /** Indices of the attempt's events (claim, outcome, reap), at most MAX_ATTEMPT_EVENTS. */
  events: number[];
  /** Index of the event that closed it (reap, run_completed, a new claim); null: open at the journal's end. */
  closeIndex: number | null;
}

const MAX_ATTEMPT_EVENTS = 32;
/** Closed attempts kept back from `emit` for outcome events recorded after the reap. */
const CLOSED_QUEUE = 256;
/** Open attempts tracked at once; a journal that claims more without reaping gets the rest counted, not drawn. */
export const MAX_OPEN_ATTEMPTS = 65536;

/** The events push acts on (apply's cases). */
const TRACKED = new Set([
  "agent_spawned",
  "task_claimed",
  "task_completed",
  "task_verification_failed",
  "task_retried",
  "task_failed",
  "task_requeued",
  "task_cancelled",
  "task_result_discarded",
  "agent_reaped",
  "agents_reaped",
  "run_completed",
]);

const str = (v: PyValue | undefined): string => (v === undefined || v === null ? "" : humanValue(v));
const text = (row: PyObject, key: string): string => str(row.get(key));

export class AttemptTracker {
  /** Open attempts by agent, then task (an agent's in the order they opened): no key string is made per event. */
  private readonly open = new Map<string, Map<string, Attempt>>();
  /** Every open attempt, in the order they opened (closeAll's order). */
  private readonly openOrder = new Set<Attempt>();
  /** The open attempt of each task (the latest claim). */
  private readonly openByTask = new Map<string, Attempt>();
  private readonly agents = new Map<string, { model: string; role: string }>();
  private readonly closed: Attempt[] = [];
  /** Claims beyond MAX_OPEN_ATTEMPTS, not drawn. */
  untracked = 0;
  count = 0;

  constructor(private readonly emit: (a: Attempt) => void) {}

  push(row: PyObject, index: number, t: number): void {
    // most rows (tool calls, ticks) are none of the tracker's: one lookup, and the
    // engine optimizes this small function apart from the cases below
    const event = str(row.get("event"));
    if (TRACKED.has(event)) this.apply(event, row, index, t);
  }

  /**
   * A row of one of the TRACKED events. The ids are read once, before the
   * cases: a read made in each case is compiled once per case, and this
   * function, run for every tracked row, grows to many times its size.
   */
  private apply(event: string, row: PyObject, index: number, t: number): void {
    const agent = text(row, "agent_id");
    switch (event) {
      case "agent_spawned":
        if (this.agents.size < MAX_OPEN_ATTEMPTS || this.agents.has(agent)) this.agents.set(agent, { model: text(row, "model"), role: text(row, "role") });
        return;
      case "agent_reaped":
        return this.reap(agent, index, t);
      case "agents_reaped": {
        const ids = row.get("agent_ids");
        for (const id of Array.isArray(ids) ? ids : []) this.reap(str(id), index, t);
        return;
      }
      case "run_completed":
        return this.closeAll(t, index);
    }
    const task = text(row, "task_id");
    if (event === "task_claimed") return this.claim(agent, task, text(row, "model"), index, t);
    // the outcome events: the attempt they name by its task_id and agent_id
    const a = this.find(task, agent);
    switch (event) {
      case "task_completed":
        return this.settle(a, index, "done");
      case "task_verification_failed": {
        const signals = row.get("failed_signals");
        if (a) a.signals = Array.isArray(signals) ? signals.map(str) : signals === undefined ? [] : [str(signals)];
        return this.settle(a, index, "failed");
      }
      case "task_retried":
        return this.settle(a, index, a?.outcome === "failed" ? "retried" : a?.outcome ?? "retried");
      case "task_failed":
        return this.settle(a, index, "failed", text(row, "reason"));
      default:
        // task_requeued, task_cancelled, task_result_discarded
        return this.settle(a, index, "cancelled", text(row, "reason") || event);
    }
  }

  /** The end of the journal: attempts still open were running when it ends. */
  finish(t: number): void {
    this.closeAll(t, null);
    for (const a of this.closed.splice(0)) this.emit(a);
  }

  private claim(agent: string, task: string, model: string, index: number, t: number): void {
    const previous = this.open.get(agent)?.get(task);
    if (previous) {
      this.close(previous, t, null, previous.outcome === "unknown" ? "unfinished" : previous.outcome);
      previous.closeIndex = index;
    }
    if (this.openOrder.size >= MAX_OPEN_ATTEMPTS) {
      this.untracked++;
      return;
    }
    const info = this.agents.get(agent);
    const a: Attempt = { agent, task, model: model || info?.model || "", role: info?.role ?? "", start: t, end: t, outcome: "unknown", signals: [], reason: "", events: [], closeIndex: null };
    this.note(a, index);
    const mine = this.open.get(agent);
    if (mine) mine.set(task, a);
    else this.open.set(agent, new Map([[task, a]]));
    this.openOrder.add(a);
    this.openByTask.set(task, a);
    this.count++;
  }

  /** The attempt an outcome event names: by agent and task, else the task's open attempt, else its last closed one. */
  private find(task: string, agent: string): Attempt | undefined {
    if (agent) {
      const a = this.open.get(agent)?.get(task);
      if (a) return a;
    }
    const open = this.openByTask.get(task);
    if (open && (!agent || open.agent === agent)) return open;
    for (let i = this.closed.length - 1; i >= 0; i--) {
      const c = this.closed[i]!;
      if (c.task === task && (!agent || c.agent === agent)) return c;
    }
    return undefined;
  }

  private settle(a: Attempt | undefined, index: number, outcome: Outcome, reason = ""): void {
    if (!a) return;
    a.outcome = outcome;
    if (reason) a.reason = reason;
    this.note(a, index);
  }

  private reap(agent: string, index: number, t: number): void {
    // (close deletes each from the map being walked: a Map's iteration allows it)
    const mine = this.open.get(agent);
    if (mine) for (const a of mine.values()) this.close(a, t, index, a.outcome);
    this.agents.delete(agent);
  }

  private closeAll(t: number, index: number | null): void {
    for (const a of this.openOrder) this.close(a, t, index, a.outcome === "unknown" ? "unfinished" : a.outcome);
  }

  private close(a: Attempt, t: number, index: number | null, outcome: Outcome): void {
    const mine = this.open.get(a.agent);
    if (mine?.get(a.task) === a) {
      mine.delete(a.task);
      if (mine.size === 0) this.open.delete(a.agent);
    }
    this.openOrder.delete(a);
    if (this.openByTask.get(a.task) === a) this.openByTask.delete(a.task);
    a.end = Math.max(a.start, t);
    a.outcome = outcome;
    a.closeIndex = index;
    if (index !== null) this.note(a, index);
    this.closed.push(a);
    if (this.closed.length > CLOSED_QUEUE) this.emit(this.closed.shift()!);
  }

  private note(a: Attempt, index: number): void {
    if (a.events.length >= MAX_ATTEMPT_EVENTS || a.events.at(-1) === index) return;
    a.events.push(index);
  }
}
