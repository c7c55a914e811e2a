import { humanValue } from "../render/json.ts";
import { materialize } from "../pyjson/parse.ts";
import { PyRaw, type PyObject, type PyValue } from "../pyjson/types.ts";
import { KeyedTable, textHash } from "./keyed-table.ts";

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
 *
 * The tracker allocates nothing per event once warm (a page's pass reads
 * hundreds of thousands, and what it allocates the engine collects late,
 * standing in the resident set): its indexes are open-addressing tables
 * and intrusive lists, not Maps (which allocate per key added), and an
 * attempt handed to `emit` is used again for a later claim, so `emit`
 * reads it during the call only.
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

/** No signals yet: one shared empty list (a verification failure assigns its own). */
const NO_SIGNALS: readonly string[] = [];

/** An attempt while it is tracked: the Attempt `emit` is given, and its places in the tracker's lists. */
class TrackedAttempt implements Attempt {
  agent = "";
  task = "";
  model = "";
  role = "";
  start = 0;
  end = 0;
  outcome: Outcome = "unknown";
  signals = NO_SIGNALS as string[];
  reason = "";
  events: number[] = [];
  closeIndex: number | null = null;
  /** textHash of agent and task (the tables' keys). */
  agentHash = 0;
  taskHash = 0;
  /** The agent's record while the attempt is open, and its neighbours among that agent's open attempts (in the order they opened). */
  owner: AgentRecord | null = null;
  prevOfAgent: TrackedAttempt | null = null;
  nextOfAgent: TrackedAttempt | null = null;
  /** Its neighbours among the run's open attempts, in the order they opened. */
  prevOpen: TrackedAttempt | null = null;
  nextOpen: TrackedAttempt | null = null;
}

/** An agent spawned and not yet reaped, or with attempts open. */
class AgentRecord {
  agent = "";
  hash = 0;
  /** Spawned (agent_spawned seen, no reap since): its model and role are the ones to use. */
  spawned = false;
  model = "";
  role = "";
  /** Its open attempts, in the order they opened. */
  first: TrackedAttempt | null = null;
  last: TrackedAttempt | null = null;
}

const pairHash = (agentHash: number, taskHash: number): number => Math.imul(agentHash ^ 0x9e3779b9, 0x85ebca6b) ^ taskHash;
const byAgent = (r: AgentRecord, agent: string): boolean => r.agent === agent;
const byPair = (a: TrackedAttempt, agent: string, task: string): boolean => a.task === task && a.agent === agent;
const byTask = (a: TrackedAttempt, task: string): boolean => a.task === task;
/** Attempts and agent records kept for reuse, at most. */
const POOL = 1024;

export class AttemptTracker {
  /** Agents spawned and not reaped, or with open attempts. */
  private readonly agents = new KeyedTable<AgentRecord, string>(byAgent);
  private spawnedAgents = 0;
  /** Open attempts by agent and task. */
  private readonly open = new KeyedTable<TrackedAttempt, string, string>(byPair);
  /** The open attempt of each task (the latest claim). */
  private readonly openByTask = new KeyedTable<TrackedAttempt, string>(byTask);
  /** The run's open attempts in the order they opened (closeAll's order), linked through prevOpen/nextOpen. */
  private firstOpen: TrackedAttempt | null = null;
  private lastOpen: TrackedAttempt | null = null;
  private openCount = 0;
  private readonly closed: TrackedAttempt[] = [];
  private readonly freeAttempts: TrackedAttempt[] = [];
  private readonly freeAgents: AgentRecord[] = [];
  /** Claims beyond MAX_OPEN_ATTEMPTS, not drawn. */
  untracked = 0;
  count = 0;

  /** `emit`: each attempt once it can change no more; it is the tracker's again after the call (copy what is kept). */
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

  /** `agent_spawned`: the agent's model and role, for the attempts it claims (for at most MAX_OPEN_ATTEMPTS agents at once). */
  private spawned(agent: string, row: PyObject): void {
    const h = textHash(agent);
    let r = this.agents.get(h, agent, "");
    if (!r?.spawned) {
      if (this.spawnedAgents >= MAX_OPEN_ATTEMPTS) return;
      r ??= this.newAgent(agent, h);
      r.spawned = true;
      this.spawnedAgents++;
    }
    r.model = text(row, "model");
    r.role = text(row, "role");
  }

  /** `agents_reaped`: each agent it names. */
  private reapAll(row: PyObject, index: number, t: number): void {
    const ids = listed(row.get("agent_ids"));
    if (!Array.isArray(ids)) return;
    for (let i = 0; i < ids.length; i++) this.reap(str(ids[i]), index, t);
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
    while (this.closed.length > 0) this.release(this.closed.shift()!);
  }

  private claim(agent: string, task: string, model: string, index: number, t: number): void {
    const agentHash = textHash(agent);
    const taskHash = textHash(task);
    const previous = this.open.get(pairHash(agentHash, taskHash), agent, task);
    if (previous) {
      this.close(previous, t, null, previous.outcome === "unknown" ? "unfinished" : previous.outcome);
      previous.closeIndex = index;
    }
    if (this.openCount >= MAX_OPEN_ATTEMPTS) {
      this.untracked++;
      return;
    }
    const owner = this.agents.get(agentHash, agent, "") ?? this.newAgent(agent, agentHash);
    const a = this.freeAttempts.pop() ?? new TrackedAttempt();
    a.agent = agent;
    a.task = task;
    a.agentHash = agentHash;
    a.taskHash = taskHash;
    a.model = model || (owner.spawned ? owner.model : "") || "";
    a.role = owner.spawned ? owner.role : "";
    a.start = a.end = t;
    a.outcome = "unknown";
    a.signals = NO_SIGNALS as string[];
    a.reason = "";
    a.events.length = 0;
    a.closeIndex = null;
    this.note(a, index);
    // last among its agent's open attempts, and the run's
    a.owner = owner;
    a.prevOfAgent = owner.last;
    if (owner.last) owner.last.nextOfAgent = a;
    else owner.first = a;
    owner.last = a;
    a.prevOpen = this.lastOpen;
    if (this.lastOpen) this.lastOpen.nextOpen = a;
    else this.firstOpen = a;
    this.lastOpen = a;
    this.openCount++;
    this.open.add(pairHash(agentHash, taskHash), a);
    const shadowed = this.openByTask.get(taskHash, task, "");
    if (shadowed) this.openByTask.remove(taskHash, shadowed);
    this.openByTask.add(taskHash, a);
    this.count++;
  }

  /** The attempt an outcome event names: by agent and task, else the task's open attempt, else its last closed one. */
  private find(task: string, agent: string): TrackedAttempt | undefined {
    const taskHash = textHash(task);
    if (agent) {
      const a = this.open.get(pairHash(textHash(agent), taskHash), agent, task);
      if (a) return a;
    }
    const open = this.openByTask.get(taskHash, task, "");
    if (open && (!agent || open.agent === agent)) return open;
    for (let i = this.closed.length - 1; i >= 0; i--) {
      const c = this.closed[i]!;
      if (c.task === task && (!agent || c.agent === agent)) return c;
    }
    return undefined;
  }

  private settle(a: TrackedAttempt | undefined, index: number, outcome: Outcome, reason = ""): void {
    if (!a) return;
    a.outcome = outcome;
    if (reason) a.reason = reason;
    this.note(a, index);
  }

  /** Close the agent's open attempts (in the order they opened); its model and role are forgotten. */
  private reap(agent: string, index: number, t: number): void {
    const h = textHash(agent);
    const r = this.agents.get(h, agent, "");
    if (!r) return;
    for (let a = r.first; a !== null; ) {
      const next = a.nextOfAgent;
      this.close(a, t, index, a.outcome);
      a = next;
    }
    if (r.spawned) {
      r.spawned = false;
      this.spawnedAgents--;
    }
    this.dropAgentIfIdle(r);
  }

  private closeAll(t: number, index: number | null): void {
    for (let a = this.firstOpen; a !== null; ) {
      const next = a.nextOpen;
      this.close(a, t, index, a.outcome === "unknown" ? "unfinished" : a.outcome);
      a = next;
    }
  }

  private close(a: TrackedAttempt, t: number, index: number | null, outcome: Outcome): void {
    const owner = a.owner!;
    if (a.prevOfAgent) a.prevOfAgent.nextOfAgent = a.nextOfAgent;
    else owner.first = a.nextOfAgent;
    if (a.nextOfAgent) a.nextOfAgent.prevOfAgent = a.prevOfAgent;
    else owner.last = a.prevOfAgent;
    if (a.prevOpen) a.prevOpen.nextOpen = a.nextOpen;
    else this.firstOpen = a.nextOpen;
    if (a.nextOpen) a.nextOpen.prevOpen = a.prevOpen;
    else this.lastOpen = a.prevOpen;
    a.owner = a.prevOfAgent = a.nextOfAgent = a.prevOpen = a.nextOpen = null;
    this.openCount--;
    this.open.remove(pairHash(a.agentHash, a.taskHash), a);
    this.openByTask.remove(a.taskHash, a);
    this.dropAgentIfIdle(owner);
    a.end = Math.max(a.start, t);
    a.outcome = outcome;
    a.closeIndex = index;
    if (index !== null) this.note(a, index);
    this.closed.push(a);
    if (this.closed.length > CLOSED_QUEUE) this.release(this.closed.shift()!);
  }

  /** Hand `a` to emit; it is then free for a later claim. */
  private release(a: TrackedAttempt): void {
    this.emit(a);
    if (this.freeAttempts.length < POOL) this.freeAttempts.push(a);
  }

  private newAgent(agent: string, hash: number): AgentRecord {
    const r = this.freeAgents.pop() ?? new AgentRecord();
    r.agent = agent;
    r.hash = hash;
    r.spawned = false;
    r.model = r.role = "";
    r.first = r.last = null;
    this.agents.add(hash, r);
    return r;
  }

  /** An agent neither spawned (unreaped) nor with an open attempt is no longer held. */
  private dropAgentIfIdle(r: AgentRecord): void {
    if (r.spawned || r.first !== null || !this.agents.remove(r.hash, r)) return;
    if (this.freeAgents.length < POOL) this.freeAgents.push(r);
  }

  private note(a: Attempt, index: number): void {
    if (a.events.length >= MAX_ATTEMPT_EVENTS || a.events.at(-1) === index) return;
    a.events.push(index);
  }
}
