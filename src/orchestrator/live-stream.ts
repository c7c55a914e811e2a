/**
 * Live agents: an agent's CLI stream read as it arrives, not after the
 * process exits. process.ts hands over each stretch of stdout while the
 * agent runs (and copies it into the agent log at the same moment); here it
 * is cut at line ends and the adapter's own parser (the one that reads the
 * whole stream at the end) is run over everything seen so far, so what is
 * shown live is exactly what the final parse will say of that prefix.
 *
 *  - every tool call whose result the CLI has reported is appended to the
 *    agent's step journal (chained by steps/writer.ts, held open for the
 *    attempt, fsynced per batch),
 *    in call order, as the same row the reaper would write; the reaper then
 *    writes only the calls not yet journaled (records.ts), so a complete
 *    stream leaves the same step journal as before;
 *  - `<sdd>/runtime/agents/<id>/live.json` holds the agent's task, tool-call
 *    count, last tool call, tokens and cost so far (rewritten atomically on
 *    each change): what `bernstein status --watch` shows.
 *
 * A folder `<sdd>/runtime/agents/<id>` whose agent is gone (its run was
 * killed) is removed by the next run (`removeLeftoverAgentDirs`).
 */
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { errorMessage } from "../errors/index.ts";
import { writeFileAtomic } from "../fsutil/atomic.ts";
import { StepJournal, type StepInput } from "../steps/writer.ts";
import { priced, type AgentResult, type Price, type ToolCall } from "./result.ts";
import { toolCallStep } from "./records.ts";
import { readAgentsFile } from "./agents-file.ts";

/** The live state file in an agent's runtime folder. */
export const LIVE_FILE = "live.json";
/** Past this much stream text the live view stops (the reaper writes the rest, from the tail it reads as always). */
export const MAX_LIVE_TEXT = 16 * 1024 * 1024;

export function agentRuntimeDir(sddDir: string, agentId: string): string {
  return join(sddDir, "runtime", "agents", agentId);
}

/** What an agent has reported so far. */
export interface LiveProgress {
  tool_calls: number;
  /** The latest tool call: its name, input (bounded) and status (null while it runs). */
  last_tool: { name: string; input: string; status: string | null } | null;
  tokens: { input: number; cached_input: number; output: number } | null;
  /** USD so far: the CLI's own figure, else tokens x models.prices; null when unknown. */
  cost_usd: number | null;
  cost_source: string;
  session_id: string | null;
}

/** One agent's live.json. */
export interface LiveAgentState extends LiveProgress {
  agent_id: string;
  run_id: string;
  task_id: string;
  task_title: string;
  role: string;
  model: string | null;
  adapter: string;
  updated_at: number;
}

export interface LiveStreamOptions {
  /** The adapter's parser of a whole stream. */
  parse: (stdout: string) => AgentResult;
  model: string | null;
  prices: Record<string, Price>;
  /** Tool calls whose result arrived, in call order, each reported once. */
  onToolCalls: (calls: ToolCall[]) => void;
  /** The progress changed. */
  onProgress: (p: LiveProgress) => void;
  /** Least time between two parses (default MIN_PARSE_INTERVAL_MS; 0: parse at every line end, for tests). */
  minIntervalMs?: number;
}

/** Parse no more often than this, nor more often than every 10x the last parse took (a long stream is re-read whole). */
export const MIN_PARSE_INTERVAL_MS = 100;

/**
 * Feeds a CLI's stream to its parser line by line as it arrives. Parsing is
 * throttled (at most once per MIN_PARSE_INTERVAL_MS); a stretch that
 * arrives meanwhile is parsed by a timer, or by `close()`'s caller never:
 * after close nothing is reported, so whoever reads `toolCallsFinished`
 * after closing sees the final count.
 */
export class LiveStream {
  private readonly decoder = new TextDecoder();
  private text = "";
  private parsedTo = -1;
  private finished = 0;
  private last = "";
  private stopped = false;
  private nextParseAt = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly o: LiveStreamOptions) {}

  /** Tool calls reported through onToolCalls so far. */
  get toolCallsFinished(): number {
    return this.finished;
  }

  push(chunk: Uint8Array): void {
    if (this.stopped) return;
    this.text += this.decoder.decode(chunk, { stream: true });
    if (this.text.length > MAX_LIVE_TEXT) {
      this.close();
      return;
    }
    if (this.text.lastIndexOf("\n") <= this.parsedTo) return;
    const wait = this.nextParseAt - performance.now();
    if (wait <= 0) this.parse();
    else this.timer ??= setTimeout(() => {
      this.timer = null;
      this.parse();
    }, wait);
  }

  /** Stop: no further reports (a pending parse is dropped; the caller writes what is left). */
  close(): void {
    this.stopped = true;
    this.text = "";
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private parse(): void {
    if (this.stopped) return;
    const end = this.text.lastIndexOf("\n");
    if (end <= this.parsedTo) return;
    this.parsedTo = end;
    const t0 = performance.now();
    const r = priced(this.o.parse(this.text.slice(0, end + 1)), this.o.model, this.o.prices);
    const took = performance.now() - t0;
    const min = this.o.minIntervalMs ?? MIN_PARSE_INTERVAL_MS;
    this.nextParseAt = min === 0 ? 0 : performance.now() + Math.max(min, 10 * took);
    const calls = r.toolCalls;
    const ready: ToolCall[] = [];
    while (this.finished < calls.length && calls[this.finished]!.status !== null) ready.push(calls[this.finished++]!);
    if (ready.length > 0) this.o.onToolCalls(ready);
    const lastCall = calls.at(-1);
    const t = r.tokens;
    const progress: LiveProgress = {
      tool_calls: calls.length,
      last_tool: lastCall ? { name: lastCall.name, input: lastCall.input, status: lastCall.status } : null,
      tokens: t ? { input: t.input, cached_input: t.cached, output: t.output } : null,
      cost_usd: r.costSource === "unknown" ? null : r.costUsd,
      cost_source: r.costSource,
      session_id: r.sessionId,
    };
    const key = JSON.stringify(progress);
    if (key === this.last) return;
    this.last = key;
    this.o.onProgress(progress);
  }
}

export interface LiveAgentOptions {
  sddDir: string;
  runId: string;
  agentId: string;
  taskId: string;
  taskTitle: string;
  role: string;
  model: string | null;
  effort: string | null;
  adapter: string;
  parse: (stdout: string) => AgentResult;
  prices: Record<string, Price>;
  warn: (line: string) => void;
}

/** One running agent's live recording: step-journal rows and live.json, from its stream. */
export class LiveAgent {
  private readonly stream: LiveStream;
  private readonly journaled: StepInput[] = [];
  private journalBroken = false;
  /** The agent's step journal, open from the first live batch until close(). */
  private steps: StepJournal | null = null;
  private state: LiveAgentState;

  constructor(private readonly o: LiveAgentOptions) {
    this.state = {
      agent_id: o.agentId,
      run_id: o.runId,
      task_id: o.taskId,
      task_title: o.taskTitle,
      role: o.role,
      model: o.model,
      adapter: o.adapter,
      tool_calls: 0,
      last_tool: null,
      tokens: null,
      cost_usd: null,
      cost_source: "unknown",
      session_id: null,
      updated_at: Date.now() / 1000,
    };
    this.stream = new LiveStream({
      parse: o.parse,
      model: o.model,
      prices: o.prices,
      onToolCalls: (calls) => this.journal(calls),
      onProgress: (p) => {
        this.state = { ...this.state, ...p, updated_at: Date.now() / 1000 };
        this.writeState();
      },
    });
    this.writeState();
  }

  /** For SpawnSpec.onStdout. */
  readonly onStdout = (chunk: Uint8Array): void => this.stream.push(chunk);

  /** The steps of the attempt's first tool calls, in the step journal already (final once `close()` was called). */
  get toolCallsJournaled(): readonly StepInput[] {
    return this.journaled;
  }

  /** The attempt ended: no more live rows, and the step journal is let go (the reaper writes the rest). */
  close(): void {
    this.stream.close();
    this.letGo();
  }

  private journal(calls: ToolCall[]): void {
    if (this.journalBroken) return;
    try {
      // Opened at the first batch and held (with its writer's lock) until close: opening revalidates every row, and
      // reopening for each batch made a long attempt's every tool call cost a walk of the whole journal.
      const j = (this.steps ??= StepJournal.open(this.o.sddDir, this.o.agentId));
      for (const call of calls) {
        const step = toolCallStep(call, this.o.taskId, this.o.model, this.o.effort);
        j.append(step);
        this.journaled.push(step);
      }
      j.sync(); // each batch durable as it is written
    } catch (err) {
      // The rest is written at reap, as without a live stream.
      this.journalBroken = true;
      this.o.warn(`could not append ${this.o.agentId}'s tool calls live to its step journal: ${errorMessage(err)}`);
      this.letGo();
    }
  }

  /** Close the step journal; a close that fails is warned of, never thrown into the stream's reader or the reaper (each batch was synced). */
  private letGo(): void {
    const steps = this.steps;
    this.steps = null;
    try {
      steps?.close();
    } catch (err) {
      this.o.warn(`could not close ${this.o.agentId}'s step journal after its live rows: ${errorMessage(err)}`);
    }
  }

  private writeState(): void {
    try {
      writeFileAtomic(join(agentRuntimeDir(this.o.sddDir, this.o.agentId), LIVE_FILE), JSON.stringify(this.state) + "\n", { mode: 0o600 });
    } catch {
      /* the folder is gone (reaped): nothing to show any more */
    }
  }
}

/** The live state of every agent agents.json lists as running (an agent without a readable live.json is listed bare). */
export function readLiveAgents(sddDir: string): LiveAgentState[] {
  const out: LiveAgentState[] = [];
  for (const a of readAgentsFile(sddDir)) {
    let live: Partial<LiveAgentState> = {};
    try {
      live = JSON.parse(readFileSync(join(agentRuntimeDir(sddDir, a.agent_id), LIVE_FILE), "utf8")) as Partial<LiveAgentState>;
    } catch {
      /* not written yet, or reaped meanwhile */
    }
    out.push({
      agent_id: a.agent_id,
      run_id: a.run_id,
      task_id: a.task_id,
      task_title: live.task_title ?? "",
      role: live.role ?? "",
      model: live.model ?? null,
      adapter: live.adapter ?? "",
      tool_calls: live.tool_calls ?? 0,
      last_tool: live.last_tool ?? null,
      tokens: live.tokens ?? null,
      cost_usd: live.cost_usd ?? null,
      cost_source: live.cost_source ?? "unknown",
      session_id: live.session_id ?? null,
      updated_at: live.updated_at ?? a.started_at,
    });
  }
  return out;
}

/**
 * Remove `<sdd>/runtime/agents/<id>` folders (stream file, prompt, generated
 * CLI homes) no running agent owns: a run killed with its agents leaves them.
 * Called by a new run after it reaped the orphaned agents; returns the ids.
 */
export function removeLeftoverAgentDirs(sddDir: string, keep: ReadonlySet<string> = new Set()): string[] {
  const root = join(sddDir, "runtime", "agents");
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names.sort()) {
    if (keep.has(name)) continue;
    try {
      rmSync(join(root, name), { recursive: true, force: true });
      removed.push(name);
    } catch {
      /* left for the next run */
    }
  }
  return removed;
}
