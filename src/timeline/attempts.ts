import { humanValue } from "../render/json.ts";
import { materialize } from "../pyjson/parse.ts";
import { PyRaw, type PyObject, type PyValue } from "../pyjson/types.ts";

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

/** What apply does with a tracked event (TRACKED's values): a number, so its cases are a jump, not string compares. */
const enum Tracked {
  Spawned,
  Claimed,
  Reaped,
  ReapedMany,
  RunCompleted,
  /** The outcome events, from here on: the attempt they name settles. */
  Completed,
  VerificationFailed,
  Retried,
  Failed,
  /** task_requeued, task_cancelled, task_result_discarded. */
  Cancelled,
}

/** The events push acts on, and what apply does with each. */
const TRACKED = new Map<string, Tracked>([
  ["agent_spawned", Tracked.Spawned],
  ["task_claimed", Tracked.Claimed],
  ["task_completed", Tracked.Completed],
  ["task_verification_failed", Tracked.VerificationFailed],
  ["task_retried", Tracked.Retried],
  ["task_failed", Tracked.Failed],
  ["task_requeued", Tracked.Cancelled],
  ["task_cancelled", Tracked.Cancelled],
  ["task_result_discarded", Tracked.Cancelled],
  ["agent_reaped", Tracked.Reaped],
  ["agents_reaped", Tracked.ReapedMany],
  ["run_completed", Tracked.RunCompleted],
]);

/**
 * A value as text (humanValue; nothing for a missing or null one). Ids are strings: they are answered here, and
 * humanValue is called only for another value. The engine inlines this at every read; a call it never made is not
 * compiled in with it, where humanValue's own calls, made for other callers, would be.
 */
const str = (v: PyValue | undefined): string => (typeof v === "string" ? v : v === undefined || v === null ? "" : humanValue(v));
const text = (row: PyObject, key: string): string => str(row.get(key));
/** A list member as a list: a huge row's large list is still its bytes (src/pyjson/row.ts). */
const listed = (v: PyValue | undefined): PyValue | undefined => (v instanceof PyRaw && v.kind === "array" ? materialize(v) : v);

/**
 * `failed_signals` as texts: a list's items, or the one value. A loop, not
 * `map`: the engine compiles map in with every callback it has been given anywhere.
 */
function texts(raw: PyValue | undefined): string[] {
  const v = listed(raw);
  if (v === undefined) return [];
  if (!Array.isArray(v)) return [str(v)];
  const out: string[] = [];
  for (let i = 0; i < v.length; i++) out.push(str(v[i]));
  return out;
}

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

  /** A row whose `event` reads as `event` (pyStr's text: a tracked name only when it is that string). */
  push(row: PyObject, event: string, index: number, t: number): void {
    // most rows (tool calls, ticks) are none of the tracker's: one lookup, and the
    // engine optimizes this small function apart from the cases below
    const kind = TRACKED.get(event);
    if (kind !== undefined) this.apply(kind, event, row, index, t);
  }

  /**
   * A row of one of the TRACKED events, handed on by kind. The agent id is
   * read once, here; each kind's reads are in its own method, so no one
   * function holds every case's reads (the engine compiles a function with
   * what it calls inlined, and one holding all of them compiled large).
   */
  private apply(kind: Tracked, event: string, row: PyObject, index: number, t: number): void {
    const agent = text(row, "agent_id");
    switch (kind) {
      case Tracked.Spawned:
        return this.spawned(agent, row);
      case Tracked.Reaped:
        return this.reap(agent, index, t);
      case Tracked.ReapedMany:
        return this.reapAll(row, index, t);
      case Tracked.RunCompleted:
        return this.closeAll(t, index);
      case Tracked.Claimed:
        return this.claim(agent, text(row, "task_id"), text(row, "model"), index, t);
      default:
        return this.outcome(kind, event, row, agent, index);
    }
  }

  /** `agent_spawned`: the agent's model and role, for the attempts it claims. */
  private spawned(agent: string, row: PyObject): void {
    if (this.agents.size < MAX_OPEN_ATTEMPTS || this.agents.has(agent)) this.agents.set(agent, { model: text(row, "model"), role: text(row, "role") });
  }

  /** `agents_reaped`: each agent it names. */
  private reapAll(row: PyObject, index: number, t: number): void {
    const ids = listed(row.get("agent_ids"));
    for (const id of Array.isArray(ids) ? ids : []) this.reap(str(id), index, t);
  }

  /** An outcome event (`kind` Tracked.Completed on): settles the attempt it names by its task_id and agent_id. */
  private outcome(kind: Tracked, event: string, row: PyObject, agent: string, index: number): void {
    const a = this.find(text(row, "task_id"), agent);
    switch (kind) {
      case Tracked.Completed:
        return this.settle(a, index, "done");
      case Tracked.VerificationFailed:
        if (a) a.signals = texts(row.get("failed_signals"));
        return this.settle(a, index, "failed");
      case Tracked.Retried:
        return this.settle(a, index, a?.outcome === "failed" ? "retried" : a?.outcome ?? "retried");
    }
    const reason = text(row, "reason");
    return kind === Tracked.Failed ? this.settle(a, index, "failed", reason) : this.settle(a, index, "cancelled", reason || event);
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
