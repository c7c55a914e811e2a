/**
 * The orchestrator of `bernstein run`: plan a goal into tasks on the task
 * store, run one agent subprocess per ready task (up to `max_agents` at
 * once), verify each result, retry or fail, track cost against the budget,
 * and record every decision in the run journal. It owns the in-process task
 * server, the session snapshot and the runtime files while it runs.
 *
 * Data flow per tick: reap finished attempts (task store -> run journal ->
 * step journal -> trace), then claim ready tasks and spawn agents. A tick
 * happens only when there is something to do (an attempt finished, or a
 * ready task and a free slot), so an idle keep-alive run writes nothing.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { errorMessage, UsageError, type ErrorCode } from "../errors/index.ts";
import { writeFileAtomic } from "../fsutil/atomic.ts";
import { EventJournal } from "../journal/writer.ts";
import { sealRun } from "../lineage/seal-run.ts";
import { pyFloat, type PyLike } from "../pyjson/types.ts";
import type { Task, StopOptions } from "../server/model.ts";
import { agentLogPath, ensurePrivateDir, ensureRuntimeDir, orchestratorInfoPath, PRIVATE_FILE_MODE } from "../server/paths.ts";
import { startTaskServer, type RunningServer } from "../server/server.ts";
import { openTaskStore } from "../server/open-store.ts";
import type { OrchestratorStore } from "../server/store-api.ts";
import type { PortChoice } from "../server/ports.ts";
import { IllegalTransitionError, TaskNotFoundError } from "../server/errors.ts";
import { decideResume, previousRunId, resumeBacklog, sessionId, type ResumeDecision } from "../session/resume.ts";
import { SessionSaver } from "../session/saver.ts";
import { notifyTask } from "../session/task-notifications.ts";
import { hasUnfinishedWork, sessionFromTasks } from "../session/state.ts";
import { TraceRecorder } from "../traces/writer.ts";
import { createAdapter, type AgentAdapter } from "./adapters.ts";
import { agentStartTime, killOrphanedAgents, removeAgentsFile, writeAgentsFile, type AgentEntry } from "./agents-file.ts";
import { startWatchdog } from "./watchdog.ts";
import { Attempt, retryDelayS, type AttemptResult } from "./attempt.ts";
import { PERMANENT_FAILURES } from "./result.ts";
import { DEFAULT_STOP_GRACE_S, gatesOf, loadConfig, modelOfRole, roleAgentConfig, verifyModeOf, VERIFY_MODES, type AgentConfig, type BernsteinConfig, type GateSpec, type VerifyMode } from "./config.ts";
import { attemptWorktreeNote, clearResumePoints, continuationPrompt, dropResumePoint, noteAttemptWorktree, readResumePoint, restoreSessionHomes, resumeDecision, resumeFailure, saveResumePoint, type ResumePoint } from "./resume.ts";
import { gitFacts, isGitWorkTree } from "./git.ts";
import { defaultVerifyMode, taskVerifyMode } from "./outcome.ts";
import { loadPlanFile, type Plan } from "./plan.ts";
import { agentPrompt, MANAGER_ROLE, managerDescription } from "./prompt.ts";
import { newRunId } from "./runid.ts";
import { removeStaleTempFiles } from "./tempfiles.ts";
import { appendAgentStep, finalizeTrace } from "./records.ts";
import { branchChangedFiles, changedFiles, snapshotWorkdir, type WorkdirSnapshot } from "./changes.ts";
import { branchHead, commitWorktree, continueWorktree, createWorktree, findRepo, mergeWorktree, reapLeftoverWorktrees, removeWorktree, worktreesRoot, type GitRepo, type MergeResult, type Worktree } from "./worktree.ts";
import { Wakeup } from "./wakeup.ts";
import { LiveAgent, removeLeftoverAgentDirs } from "./live-stream.ts";

/** Task store meta key prefix of a task's declared work-tree check. */
const VERIFY_META = "verify:";

export type RunOutcome = "completed" | "drained" | "failed" | "plan_failed" | "budget_exhausted" | "stopped" | "interrupted";

export interface OrchestratorOptions {
  /** The project directory agents work in (default: cwd). */
  workdir: string;
  sddDir: string;
  planPath: string | null;
  goal: string | null;
  configPath: string | null;
  maxAgents?: number;
  budgetUsd?: number | null;
  maxRetries?: number;
  /** Seconds between SIGTERM and SIGKILL to the agents on a stop (default: stop_grace_s of bernstein.yaml, 5). */
  graceS?: number;
  fresh: boolean;
  /** Start every attempt fresh: no stopped attempt's CLI session is continued (`run --fresh-agents`). */
  freshAgents?: boolean;
  keepAlive: boolean;
  /** Leave the journal unsealed when the run ends (`run --no-seal`). */
  noSeal?: boolean;
  host: string;
  port: PortChoice;
  /** A shared task store (`postgres://…`) instead of `<sdd>/runtime/tasks.db`. */
  storeUrl?: string;
  /** Progress lines (one per decision/event worth a human's attention). */
  report: (line: string) => void;
  warn: (line: string) => void;
}

export interface RunSummary {
  run_id: string;
  outcome: RunOutcome;
  resume: { decision: string; reason: string; message: string };
  done_previously: number;
  tasks: { total: number; done: number; failed: number; open: number; pending: number };
  cost_usd: number;
  /** False when an attempt of this run reported no cost (cost_usd is then the known part only). */
  cost_known: boolean;
  budget_usd: number | null;
  ticks: number;
  agents_spawned: number;
  journal: string;
  head: string;
  event_count: number;
  sealed: boolean;
  server_url: string;
  /** What stopped the run (`SIGTERM`, `POST /stop`, `SIGINT`), null when it was not stopped. */
  stopped_by: string | null;
  /** Tasks an agent failed for good in this run, with their failed signals (`auth`, `gate:tests`, …). */
  failures: { task_id: string; signals: string[] }[];
  /** Set when the run ended because of an error (plan_invalid, ...). */
  error: { code: ErrorCode; detail: string } | null;
}

interface RunningAgent {
  agentId: string;
  task: Task;
  attempt: Attempt;
  trace: TraceRecorder;
  model: string | null;
  effort: string | null;
  prompt: string;
  spawnTs: number;
  /** The agent process's start time (/proc), so a reaper never kills a reused pid. */
  procStart: number | null;
  /** Private per-attempt directory (prompt file, generated CLI homes); removed at reap. */
  attemptDir: string;
  /** The work tree at spawn, compared at reap for the trace's files (empty under worktree isolation). */
  treeBefore: WorkdirSnapshot;
  /** The attempt's own git worktree and branch (`isolation: worktree`), else null. */
  worktree: Worktree | null;
  /** Claim order in this run: under worktree isolation attempts are reaped, and so merged, in this order. */
  seq: number;
  /** The adapter of the task's role, and its configuration (`roles.<role>` over `agent:`). */
  adapter: AgentAdapter;
  agentConfig: AgentConfig;
  /** The resume point this attempt continues (the same CLI session), or null for a fresh attempt. */
  resumed: ResumePoint | null;
  /** Its stream read as it arrives: tool calls journaled live, live.json for `status --watch`. */
  live: LiveAgent;
}

/**
 * Environment values above this many bytes are left out (the prompt is in
 * BERNSTEIN_PROMPT_FILE and on stdin): Linux refuses a single string over
 * 128 KiB in execve (E2BIG), and a 100,000-character description of
 * multi-byte characters is larger than that.
 */
export const MAX_ENV_VALUE_BYTES = 64 * 1024;

function boundedEnv(value: string): string | undefined {
  return Buffer.byteLength(value, "utf8") <= MAX_ENV_VALUE_BYTES ? value : undefined;
}

function round4(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}

function safeRole(role: string): string {
  const r = role.replace(/[^A-Za-z0-9_.-]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 40);
  return r || "agent";
}

/** What became of an attempt's worktree branch (see Orchestrator.land). */
interface Landed {
  /** A successful attempt's merge into the project's branch; null otherwise. */
  merge: MergeResult | null;
  /** The branch's changed files (its diff from where it started). */
  files: string[];
  /** The branch stays (it holds work the project does not have). */
  keep: boolean;
  /** The branch head after the commit of the attempt's work. */
  head: string | null;
}
/** The key of `agent:`'s adapter among the per-role ones (no role is named so). */
const DEFAULT_ROLE = "\u0000agent";

export function newAgentId(role: string): string {
  return `${safeRole(role)}-${randomBytes(4).toString("hex")}`;
}

export class Orchestrator {
  private readonly o: OrchestratorOptions;
  private config!: BernsteinConfig;
  private configHash = "";
  private configFile: string | null = null;
  /** One adapter per task role (`roles:`; `agent:` for every other role), made on first use. */
  private readonly adapters = new Map<string, { adapter: AgentAdapter; config: AgentConfig }>();
  private resumeAgents = true;
  /** The run this one continues (resumed runs), for the resume points of attempts it left unreaped. */
  private previousRun: string | null = null;
  private gates: GateSpec[] = [];
  private plan: Plan | null = null;
  private goal = "";
  private maxAgents = 1;
  private maxRetries = 0;
  private budget: number | null = null;
  /** Seconds a signalled agent gets before SIGKILL (`--grace`, `stop_grace_s`). */
  private graceS = DEFAULT_STOP_GRACE_S;
  /** The work-tree check of a task that declares none (`verify`, else `changed` in a git work tree). */
  private verifyDefault: VerifyMode = "none";
  /** The project's repository when attempts work in their own worktrees (`isolation: worktree`), else null. */
  private repo: GitRepo | null = null;
  private claimSeq = 0;

  private store!: OrchestratorStore;
  /** Every task as this process last saw it commit, in creation order: the session snapshot reads it synchronously. */
  private readonly tasks = new Map<string, Task>();
  private server!: RunningServer;
  private journal!: EventJournal;
  private saver!: SessionSaver;
  private runId = "";
  private decision!: ResumeDecision;
  /** Resuming a session whose task store is empty: the plan file is the backlog (see planFromBacklog). */
  private fromBacklog = false;

  private readonly running = new Map<string, RunningAgent>();
  private readonly failures: RunSummary["failures"] = [];
  /**
   * Tasks waiting out a back-off after a transient provider failure (task id
   * -> when it goes back to the queue, ms). They stay in_progress, so nobody
   * claims them early; a stop or the end of the loop releases them at once.
   */
  private readonly backingOff = new Map<string, { dueAt: number; costUsd: number; summary: string | null }>();
  private readonly finished: { agent: RunningAgent; result: AttemptResult }[] = [];
  private spent = 0;
  private ticks = 0;
  private agentsSpawned = 0;
  private budgetHit = false;
  /** Attempts of this run whose cost nobody knows (cost_source unknown; a stopped attempt's is not counted, as for the budget). */
  private unknownCosts = 0;
  private planError: { code: ErrorCode; detail: string } | null = null;

  private stopping: { force: boolean; interrupted: boolean; reason: string } | null = null;
  private stopDeadline: ReturnType<typeof setTimeout> | null = null;
  /** Set once a stop has signalled the agents: an agent spawned while that stop was arriving is signalled too (ms before SIGKILL). */
  private signalledGraceMs: number | null = null;
  private readonly alarm = new Wakeup();

  constructor(opts: OrchestratorOptions) {
    this.o = { ...opts, workdir: resolve(opts.workdir) };
  }

  /** Load config and plan and check the adapter, before anything is started. */
  private prepare(): void {
    const loaded = loadConfig(this.o.configPath, this.o.configPath !== null);
    for (const w of loaded.warnings) this.o.warn(w);
    this.config = loaded.config;
    this.configHash = loaded.hash;
    this.configFile = loaded.path ? resolve(loaded.path) : null;
    this.plan = this.o.planPath ? loadPlanFile(this.o.planPath) : null;
    this.goal = this.o.goal ?? this.plan?.goal ?? this.config.goal ?? "";
    this.maxAgents = this.o.maxAgents ?? this.config.max_agents;
    this.maxRetries = this.o.maxRetries ?? this.config.max_retries;
    this.graceS = this.o.graceS ?? this.config.stop_grace_s;
    this.budget = this.o.budgetUsd !== undefined ? this.o.budgetUsd : this.config.budget_usd;
    this.gates = gatesOf(this.config);
    // `verify: changed` by default where git can see the project's changes: as for isolation, a
    // folder the repository ignores (a scratch workspace in a checkout) is outside git.
    const repo = isGitWorkTree(this.o.workdir) ? findRepo(this.o.workdir) : null;
    this.verifyDefault = defaultVerifyMode(verifyModeOf(this.config), this.config.agent.permission_mode, repo !== null && (repo.inHead || !repo.hasHead));
    this.resumeAgents = this.config.resume_agents && !this.o.freshAgents;
    // Every adapter the run may need is checked before anything starts: the default and each role's.
    this.adapterFor(DEFAULT_ROLE).adapter.check(this.o.workdir);
    for (const role of Object.keys(this.config.roles)) this.adapterFor(role).adapter.check(this.o.workdir);
    this.repo = this.isolation();
  }

  /** Worktree isolation: asked for (`isolation: worktree`) or, by default, whenever the project folder is in a git work tree with a commit. */
  private isolation(): GitRepo | null {
    if (this.config.isolation === "none") return null;
    const explicit = this.config.isolation === "worktree";
    const repo = findRepo(this.o.workdir);
    if (repo === null) {
      if (explicit) throw new UsageError(`isolation: worktree needs a git work tree, and ${this.o.workdir} is not in one (set isolation: none)`, "isolation_unavailable");
      return null;
    }
    if (!repo.hasHead) {
      const why = `the git repository at ${repo.top} has no commit yet, so agents cannot get their own worktree`;
      if (explicit) throw new UsageError(`isolation: worktree: ${why} (commit once, or set isolation: none)`, "isolation_unavailable");
      this.o.warn(`${why}: they share the project folder (commit once for per-agent worktrees, or set isolation: none to silence this)`);
      return null;
    }
    if (!repo.inHead) {
      // A folder the repository does not hold (ignored or untracked, like a scratch workspace in a checkout) is, for the project, outside git.
      if (explicit) throw new UsageError(`isolation: worktree: ${this.o.workdir} is not part of the last commit of ${repo.top}, so a worktree would not contain it (commit it, or set isolation: none)`, "isolation_unavailable");
      return null;
    }
    return { top: repo.top, prefix: repo.prefix };
  }

  // ---------------------------------------------------------------- public

  async run(): Promise<RunSummary> {
    this.prepare();
    ensureRuntimeDir(this.o.sddDir);
    this.store = await openTaskStore(this.o.sddDir, this.o.storeUrl);
    try {
      this.server = await startTaskServer({
        sddDir: this.o.sddDir,
        host: this.o.host,
        port: this.o.port,
        store: this.store,
        warn: this.o.warn,
      });
    } catch (err) {
      await this.store.close();
      throw err;
    }
    // From the first request on, /stop and /status talk to this run.
    this.server.setHooks({
      stop: (opts) => this.requestStop({ ...opts, reason: "POST /stop" }),
      status: () => ({
        run_id: this.runId || null,
        goal: this.goal,
        cost_usd: round4(this.spent),
        cost_known: this.unknownCosts === 0,
        budget_usd: this.budget,
        orchestrator: { pid: process.pid, running_agents: this.running.size, stopping: this.stopping !== null },
      }),
      // Lease expiries of HTTP clients' claims and cancellations go into the run journal.
      event: (name, payload) => {
        if (this.journal) this.record(name, payload);
        else this.o.warn(`task server: ${name} ${JSON.stringify(payload)} (before the run journal existed)`);
      },
    });
    try {
      return await this.runWithServer();
    } finally {
      await this.server.close();
      await this.store.close();
    }
  }

  /**
   * Ask the run to stop (SIGTERM, `POST /stop`, SIGINT). No task is claimed
   * any more; running agents may finish for `timeout_s` seconds, then their
   * process groups get SIGTERM and, `grace_s` (default: the run's
   * `--grace`/`stop_grace_s`) later, SIGKILL. `force` kills at once (SIGKILL
   * after 0.5 s). With `timeout_s: 0` the agents are signalled right away, so
   * the whole stop takes about the grace window.
   */
  requestStop(opts: StopOptions & { interrupted?: boolean; reason: string }): { accepted: boolean; detail: string; grace_s: number } {
    const graceS = opts.grace_s ?? this.graceS;
    if (this.stopping?.force && !opts.interrupted) return { accepted: true, detail: "already stopping (force)", grace_s: graceS };
    const force = opts.force || (this.stopping?.force ?? false);
    this.stopping = { force, interrupted: Boolean(opts.interrupted || this.stopping?.interrupted), reason: opts.reason };
    const signalAgents = (graceMs: number): void => {
      this.signalledGraceMs = graceMs;
      for (const a of this.running.values()) a.attempt.kill(graceMs);
    };
    let detail: string;
    if (force) {
      signalAgents(500);
      detail = "stopping now: agents are being killed";
    } else if (opts.timeout_s <= 0) {
      if (this.stopDeadline) clearTimeout(this.stopDeadline);
      this.stopDeadline = null;
      signalAgents(graceS * 1000);
      detail = `stopping now: running agents were sent SIGTERM and get ${graceS}s before SIGKILL`;
    } else {
      if (!this.stopDeadline) {
        this.stopDeadline = setTimeout(() => {
          this.o.report(`stop: timeout of ${opts.timeout_s}s reached, stopping the remaining agent(s) (SIGTERM, SIGKILL after ${graceS}s)`);
          signalAgents(graceS * 1000);
        }, opts.timeout_s * 1000);
      }
      detail = `stopping: no new tasks; running agents get ${opts.timeout_s}s to finish, then SIGTERM and ${graceS}s before SIGKILL`;
    }
    this.alarm.wake();
    return { accepted: true, detail, grace_s: graceS };
  }

  /** Save the session now (signal handlers). */
  saveNow(): void {
    this.saver?.flush();
  }

  // --------------------------------------------------------------- startup

  private async runWithServer(): Promise<RunSummary> {
    this.decision = decideResume({
      sddDir: this.o.sddDir,
      goal: this.goal,
      fresh: this.o.fresh,
      resumeEnabled: this.config.session.resume,
      staleAfterMinutes: this.config.session.stale_after_minutes,
    });
    // session.json is only the fast-resume snapshot: when it is unreadable or
    // missing, the task store still knows what is done and is never wiped for it.
    if (this.decision.action === "fresh" && (this.decision.reason === "corrupt" || this.decision.reason === "no_session")) {
      if (this.decision.reason === "corrupt") this.o.warn(`${this.decision.message.replace(/^fresh: /, "")}; it is ignored`);
      this.decision = await this.resumeFromStore(this.decision);
    }
    // A session with an empty task store (Python's start-up deletes its own, or tasks.db was removed):
    // as upstream, its work comes from the backlog (the plan file) and the saved ids decide what is skipped.
    this.fromBacklog = this.decision.action !== "fresh" && this.decision.state !== null && (await this.store.list({ limit: 1 })).total === 0;

    if (this.decision.action === "fresh" && !this.plan && !this.goal && !this.o.keepAlive) {
      throw new UsageError("nothing to do: give a PLAN file, --goal TEXT, or goal: in bernstein.yaml (or --keep-alive to wait for tasks)", "nothing_to_do");
    }

    // A resumed run names the run it continues (the latest run before it) and the session snapshot it resumed from.
    const previousRun = this.decision.action === "fresh" ? null : previousRunId(this.o.sddDir);
    this.previousRun = previousRun;
    const previousSession = this.decision.action === "fresh" || !this.decision.state || this.decision.reason.startsWith("session_") ? null : sessionId(this.decision.state.saved_at);
    this.runId = newRunId(this.o.sddDir);
    const git = gitFacts(this.o.workdir);
    const startedAt = Date.now() / 1000;
    this.journal = EventJournal.create(this.runId, {
      sddDir: this.o.sddDir,
      metadata: { started_at: startedAt, git_sha: git.sha, git_branch: git.branch, config_hash: this.configHash, seed_path: this.configFile },
    });
    this.o.report(`run ${this.runId} (journal ${this.journal.path})`);
    this.record("run_started", {
      run_id: this.runId,
      max_agents: this.maxAgents,
      budget_usd: this.budget === null ? null : pyFloat(this.budget),
      git_sha: git.sha,
      git_branch: git.branch,
      config_hash: this.configHash,
      ...(this.decision.action === "fresh" ? {} : { resumed_from_run: previousRun, resumed_from_session: previousSession }),
    });

    // Agents a crashed orchestrator left behind must not race the new run
    // (checked by pid + start time); then this run's own agents get a
    // watchdog that kills them if this process dies without cleaning up.
    const orphans = killOrphanedAgents(this.o.sddDir);
    if (orphans.length) {
      this.o.report(`stopped ${orphans.length} agent(s) left by a previous run: ${orphans.join(", ")}`);
      this.record("agents_reaped", { agent_ids: orphans, reason: "previous_run_died" });
    }
    writeAgentsFile(this.o.sddDir, []);
    startWatchdog(this.o.sddDir, this.runId, this.o.warn);
    removeStaleTempFiles([join(this.o.sddDir, "runtime"), join(this.o.sddDir, "traces")]);

    const st = this.decision.state;
    this.o.report(this.decision.message);
    this.record("session_resume", {
      decision: this.decision.action,
      reason: this.decision.reason,
      completed: st ? st.completed_task_ids.length : 0,
      pending: st ? st.pending_task_ids.length : 0,
      open: st ? st.open_task_ids.length : 0,
    });

    // Worktrees a killed run left are reaped first: their work is then committed on their kept branches, which the
    // resume points of the tasks requeued below continue on.
    this.tryWrite(() => this.reapWorktrees(), "worktrees");

    if (this.decision.action === "fresh") {
      await this.store.clear();
      // A fresh run's tasks are new: no stopped session of an earlier run is theirs.
      this.tryWrite(() => clearResumePoints(this.o.sddDir), "resume points");
      this.spent = 0;
    } else {
      this.spent = st?.cost_spent ?? 0;
      await this.requeueOrphanedTasks();
    }
    // The folders (stream file, prompt, CLI homes) of agents no run owns go, once a killed
    // attempt's stream has been read for its resume point (requeueOrphanedTasks).
    const leftovers = removeLeftoverAgentDirs(this.o.sddDir);
    if (leftovers.length) this.o.report(`removed the runtime folders of ${leftovers.length} agent(s) no run owns: ${leftovers.join(", ")}`);
    await this.store.setMeta("run_id", this.runId);
    await this.store.setMeta("goal", this.goal);

    this.tasks.clear();
    for (const t of (await this.store.list()).tasks) this.tasks.set(t.id, t);
    this.saver = new SessionSaver({
      sddDir: this.o.sddDir,
      snapshot: () => sessionFromTasks([...this.tasks.values()], this.goal, this.spent),
      onError: (err) => this.o.warn(`could not save the session: ${errorMessage(err)}`),
    });
    const unsubscribe = this.store.onChange((task, previous) => {
      this.tasks.set(task.id, task);
      this.saver.notify();
      // A task created by a client (e.g. `bernstein replay <task>`) is new work.
      if (previous === null || task.status === "open") this.alarm.wake();
    });

    writeFileAtomic(
      orchestratorInfoPath(this.o.sddDir),
      JSON.stringify({ pid: process.pid, run_id: this.runId, server_url: this.server.url }, null, 2) + "\n",
      { mode: 0o600 },
    );

    try {
      if (this.decision.action === "drained" && !this.o.keepAlive && !(this.fromBacklog && this.plan)) {
        this.o.report(`${this.decision.state!.completed_task_ids.length} done previously`);
      } else {
        await this.planIfNeeded();
        this.saver.flush();
        await this.loop();
      }
      return await this.finish();
    } finally {
      // An error left agents running: they must not outlive the run.
      for (const a of this.running.values()) a.attempt.kill(200);
      // Nor their worktrees (the next run's reaper takes any this cannot remove while an agent still dies).
      if (this.repo && this.running.size > 0) {
        await Promise.race([Promise.all([...this.running.values()].map((a) => a.attempt.done)), Bun.sleep(1000)]);
        this.tryWrite(() => this.reapWorktrees(), "worktrees");
      }
      unsubscribe();
      if (this.stopDeadline) clearTimeout(this.stopDeadline);
      this.saver.close();
      try {
        unlinkSync(orchestratorInfoPath(this.o.sddDir));
      } catch {
        /* already gone */
      }
      // agents.json goes like server.json once no agent is left; agents still
      // dying (an error path) stay recorded so the next run reaps them.
      if (this.running.size === 0) removeAgentsFile(this.o.sddDir);
    }
  }

  /**
   * Resume from the task store itself (same goal): done work stays done.
   * Only `--fresh` (or a changed goal, a stale session, `session.resume:
   * false`) clears the store.
   */
  private async resumeFromStore(unreadable: ResumeDecision): Promise<ResumeDecision> {
    const tasks = (await this.store.list()).tasks;
    if (tasks.length === 0) return unreadable;
    const storedGoal = (await this.store.getMeta("goal")) ?? "";
    if (storedGoal !== this.goal) {
      return { ...unreadable, reason: "goal_changed", message: `${unreadable.message}; the task store holds another goal's tasks: fresh because the goal changed` };
    }
    const state = sessionFromTasks(tasks, storedGoal, await this.store.totalCost());
    const why = unreadable.reason === "corrupt" ? "the saved session is unreadable" : "no saved session";
    const done = state.completed_task_ids.length;
    const reason = unreadable.reason === "corrupt" ? "session_unreadable" : "session_missing";
    if (hasUnfinishedWork(state)) {
      return { action: "resume", reason, state, message: `resumed from the task store (${why}): ${done} done previously, ${state.pending_task_ids.length} pending, ${state.open_task_ids.length} open` };
    }
    return { action: "drained", reason, state, message: `resumed from the task store (${why}): ${done} done previously, nothing left to do` };
  }

  /** Tasks claimed or in progress when the last run died: their agents are gone. */
  private async requeueOrphanedTasks(): Promise<void> {
    for (const status of ["claimed", "in_progress", "orphaned"] as const) {
      for (const t of (await this.store.list({ status })).tasks) {
        await this.store.transition(t.id, "open", {});
        this.record("task_requeued", { task_id: t.id, agent_id: t.assigned_agent, reason: "agent_gone" });
        if (t.assigned_agent) this.tryWrite(() => this.recoverResumePoint(t), "resume point");
      }
    }
  }

  /**
   * Remove the worktrees a run that did not end cleanly (`kill -9`) left
   * under `.sdd/worktrees/`; branches with work on them are kept. Also
   * when this run is not isolated (the config changed since).
   */
  private reapWorktrees(): void {
    const repo = this.repo ?? (existsSync(worktreesRoot(this.o.sddDir)) ? findRepo(this.o.workdir) : null);
    if (!repo) return;
    const { removed, kept } = reapLeftoverWorktrees(repo, this.o.sddDir);
    if (removed.length === 0) return;
    this.record("worktrees_reaped", { paths: removed, branches_kept: kept });
    this.o.report(`removed ${removed.length} worktree(s) left by an earlier run${kept.length ? `; branch(es) with work kept: ${kept.join(", ")}` : ""}`);
  }

  /**
   * An attempt whose orchestrator died (kill -9) was never reaped: its CLI's
   * stream is still in its attempt directory. When that names a session the
   * adapter can continue, the task gets a resume point as a stopped attempt would.
   */
  private recoverResumePoint(t: Task): void {
    const agentId = t.assigned_agent!;
    if (!/^[A-Za-z0-9_.-]+$/.test(agentId) || readResumePoint(this.o.sddDir, t.id) !== null) return;
    const attemptDir = join(this.o.sddDir, "runtime", "agents", agentId);
    const stream = join(attemptDir, "stdout.jsonl");
    const { adapter } = this.adapterFor(t.role);
    if (!adapter.canResume || !existsSync(stream)) return;
    const parsed = adapter.parseOutput(readFileSync(stream, "utf8"));
    if (parsed.sessionId === null) return;
    // Under isolation its work was committed on its branch by the worktree reaper, which ran first; the branch is gone when it held none.
    const note = attemptWorktreeNote(attemptDir);
    const repo = note ? (this.repo ?? findRepo(this.o.workdir)) : null;
    const head = note && repo ? branchHead(repo, note.branch) : null;
    saveResumePoint(
      this.o.sddDir,
      {
        task_id: t.id,
        agent_id: agentId,
        adapter: adapter.name,
        session_id: parsed.sessionId,
        run_id: this.previousRun ?? "",
        steps_done: parsed.toolCalls.filter((c) => c.status !== null).map((c) => c.name),
        model: t.model,
        stopped_at: Date.now() / 1000,
        ...(note ? (head !== null ? { branch: note.branch, head, base: note.base, worktree: note.path } : { branch: null, head: null, base: null }) : {}),
      },
      attemptDir,
    );
  }

  /** Resume with an empty store: the plan file's tasks minus those the session saved as done; never a manager task (no re-planning). */
  private async planFromBacklog(): Promise<void> {
    const done = this.decision.state!.completed_task_ids.length;
    if (!this.plan) {
      this.o.report(`Resuming from previous session (${done} task(s) already completed — skipping re-planning); the task store is empty and there is no plan file: nothing to do`);
      return;
    }
    const { tasks: wanted, skipped } = resumeBacklog(this.plan.tasks, this.decision.state!);
    const tasks = await this.store.createMany(wanted);
    await this.declareVerify(this.plan);
    this.record("plan_loaded", { source: "plan_file_resume", path: this.o.planPath, task_count: tasks.length, task_ids: tasks.map((t) => t.id), skipped_task_ids: skipped });
    this.o.report(`resume: ${tasks.length} task(s) from ${this.o.planPath}, ${skipped.length} skipped as done previously (${done} done in the saved session)`);
  }

  /** The tasks' own work-tree checks (`verify:`, `read_only:`), kept in the store's meta so a resumed run knows them. */
  private async declareVerify(plan: Plan): Promise<void> {
    for (const [id, mode] of Object.entries(plan.verify)) await this.store.setMeta(`${VERIFY_META}${id}`, mode);
  }

  /** The work-tree check of one task: its declaration, else the run's default. */
  private async verifyFor(task: Task): Promise<VerifyMode> {
    const declared = await this.store.getMeta(`${VERIFY_META}${task.id}`);
    return taskVerifyMode((VERIFY_MODES as readonly string[]).includes(declared ?? "") ? (declared as VerifyMode) : null, this.verifyDefault);
  }

  /** Plan from the plan file, or the manager agent, when the store has no tasks. */
  private async planIfNeeded(): Promise<void> {
    if (this.fromBacklog) return this.planFromBacklog();
    if ((await this.store.list({ limit: 1 })).total > 0) {
      const c = await this.store.counts();
      this.o.report(`backlog: ${c.open} open, ${c.done} done, ${c.failed} failed`);
      return;
    }
    if (this.plan) {
      const tasks = await this.store.createMany(this.plan.tasks);
      await this.declareVerify(this.plan);
      this.record("plan_loaded", { source: "plan_file", path: this.o.planPath, task_count: tasks.length, task_ids: tasks.map((t) => t.id) });
      this.o.report(`plan: ${tasks.length} task(s) from ${this.o.planPath}`);
      return;
    }
    if (this.goal) {
      const t = await this.store.create({
        id: `plan-${randomBytes(4).toString("hex")}`,
        title: `Plan: ${this.goal}`.slice(0, 500),
        description: managerDescription(this.goal),
        role: MANAGER_ROLE,
        priority: 0,
      });
      this.record("plan_requested", { task_id: t.id, goal: this.goal });
      this.o.report(`plan: no PLAN file given; the manager agent will decompose the goal (task ${t.id})`);
      return;
    }
    if (!this.o.keepAlive) {
      throw new UsageError("nothing to do: give a PLAN file, --goal TEXT, or goal: in bernstein.yaml (or --keep-alive to wait for tasks)", "nothing_to_do");
    }
    this.o.report("no tasks yet: waiting for tasks (--keep-alive)");
  }

  // ------------------------------------------------------------------ loop

  private canClaim(): boolean {
    return this.stopping === null && !this.budgetHit && this.planError === null;
  }

  private async loop(): Promise<void> {
    try {
      await this.loopUntilDone();
    } finally {
      // Whatever ended the loop (done, stop, budget, a failed plan), no task stays parked in a back-off.
      await this.releaseBackoffs(true);
    }
  }

  /** Put tasks whose back-off is over (all of them with `all`) back in the queue; how many went back. */
  private async releaseBackoffs(all: boolean): Promise<number> {
    let n = 0;
    for (const [id, wait] of [...this.backingOff]) {
      if (!all && wait.dueAt > Date.now()) continue;
      this.backingOff.delete(id);
      try {
        await this.store.transition(id, "open", { cost_usd: wait.costUsd, result_summary: wait.summary });
        if (this.stopping !== null) this.record("task_requeued", { task_id: id, agent_id: null, reason: "stopped" });
        n++;
      } catch (err) {
        // A client cancelled or moved the task meanwhile: it is no longer ours to requeue.
        if (!(err instanceof IllegalTransitionError || err instanceof TaskNotFoundError)) throw err;
      }
    }
    return n;
  }

  private async loopUntilDone(): Promise<void> {
    for (;;) {
      this.alarm.clear();
      if (this.backingOff.size > 0) await this.releaseBackoffs(this.stopping !== null);
      const capacity = this.maxAgents - this.busy();
      const ready = this.canClaim() && capacity > 0 ? await this.store.ready(capacity) : [];
      if (this.nextReap() >= 0 || ready.length > 0) {
        this.ticks++;
        this.record("tick_start", { tick: this.ticks });
        for (let i = this.nextReap(); i >= 0; i = this.nextReap()) await this.reap(this.finished.splice(i, 1)[0]!);
        if (this.canClaim()) await this.spawnReady();
        continue;
      }
      if (this.running.size > 0) {
        await this.alarm.sleep(1000);
        continue;
      }
      if (this.backingOff.size > 0 && this.canClaim()) {
        const next = Math.min(...[...this.backingOff.values()].map((w) => w.dueAt));
        await this.alarm.sleep(Math.max(10, Math.min(1000, next - Date.now())));
        continue;
      }
      // Nothing running and nothing ready.
      if (this.stopping || this.budgetHit || this.planError) return;
      if ((await this.failBlockedTasks()) > 0) continue;
      if (this.o.keepAlive) {
        await this.alarm.sleep(500);
        continue;
      }
      const c = await this.store.counts();
      // Tasks claimed by another client: wait for them to finish.
      if (c.claimed + c.in_progress + c.orphaned + c.waiting_for_subtasks > 0 || (c.open > 0 && (await this.store.ready(1)).length > 0)) {
        await this.alarm.sleep(500);
        continue;
      }
      return;
    }
  }

  /** Agents holding a slot: under worktree isolation a finished attempt waiting for its turn to merge holds none. */
  private busy(): number {
    return this.running.size - (this.repo ? this.finished.length : 0);
  }

  /**
   * Which finished attempt to reap next (an index into `finished`, -1 for
   * none). Without isolation: the first to finish. Under worktree isolation
   * attempts are reaped, and their branches merged, in claim order (the
   * plan's order for tasks ready together): an attempt that finished early
   * waits until every attempt claimed before it has been reaped, so which
   * of several agents editing one file is merged first does not depend on
   * which finished first.
   */
  private nextReap(): number {
    if (this.finished.length === 0) return -1;
    if (!this.repo) return 0;
    let first = Infinity;
    for (const a of this.running.values()) first = Math.min(first, a.seq);
    return this.finished.findIndex((f) => f.agent.seq === first);
  }

  /** Open tasks that wait on a failed or cancelled dependency can never run: fail them. */
  private async failBlockedTasks(): Promise<number> {
    const all = (await this.store.list()).tasks;
    const status = new Map(all.map((t) => [t.id, t.status]));
    let n = 0;
    for (const t of all) {
      if (t.status !== "open") continue;
      const dead = t.depends_on.find((d) => status.get(d) === "failed" || status.get(d) === "cancelled" || !status.has(d));
      if (!dead) continue;
      if (n === 0) {
        this.ticks++;
        this.record("tick_start", { tick: this.ticks });
      }
      const reason = `dependency ${dead} ${status.get(dead) ?? "is missing"}`;
      await this.store.fail(t.id, { reason });
      status.set(t.id, "failed");
      this.record("task_failed", { task_id: t.id, agent_id: null, reason });
      this.o.report(`failed ${t.id}: ${reason}`);
      n++;
    }
    return n;
  }

  private modelFor(task: Task): string | null {
    return task.model ?? modelOfRole(this.config, task.role) ?? this.config.models.roles[task.role] ?? this.config.models.roles.default ?? null;
  }

  /** The adapter of a task role: `roles.<role>` over `agent:`. */
  private adapterFor(role: string): { adapter: AgentAdapter; config: AgentConfig } {
    const key = Object.hasOwn(this.config.roles, role) ? role : DEFAULT_ROLE;
    let a = this.adapters.get(key);
    if (!a) {
      const config = roleAgentConfig(this.config, role);
      a = { adapter: createAdapter(config, this.o.workdir), config };
      this.adapters.set(key, a);
    }
    return a;
  }

  private agentEnv(task: Task, agentId: string, model: string | null, effort: string | null, prompt: string, promptFile: string, workdir: string, agentConfig: AgentConfig): Record<string, string | undefined> {
    return {
      ...process.env,
      ...agentConfig.env,
      BERNSTEIN_RUN_ID: this.runId,
      BERNSTEIN_TASK_ID: task.id,
      BERNSTEIN_TASK_TITLE: task.title,
      BERNSTEIN_TASK_DESCRIPTION: boundedEnv(task.description),
      BERNSTEIN_ROLE: task.role,
      BERNSTEIN_AGENT_ID: agentId,
      BERNSTEIN_MODEL: model ?? "",
      BERNSTEIN_EFFORT: effort ?? "",
      BERNSTEIN_ATTEMPT: String(task.attempts),
      BERNSTEIN_PROMPT: boundedEnv(prompt),
      BERNSTEIN_PROMPT_FILE: promptFile,
      BERNSTEIN_SDD_DIR: resolve(this.o.sddDir),
      BERNSTEIN_WORKDIR: workdir,
      BERNSTEIN_SERVER_URL: this.server.url,
    };
  }

  private async spawnReady(): Promise<void> {
    while (this.busy() < this.maxAgents && this.canClaim()) {
      const [claimed] = await this.store.claim(null, 1);
      if (!claimed) return;
      const { adapter, config: agentConfig } = this.adapterFor(claimed.role);
      // A stopped attempt's CLI session is continued when it can be (resume.ts); otherwise the task starts fresh, said why.
      let decided = resumeDecision(readResumePoint(this.o.sddDir, claimed.id), { enabled: this.resumeAgents, adapter: adapter.name, canResume: adapter.canResume });
      let resumed = decided !== null && "resume" in decided ? decided.resume : null;
      let worktree: Worktree | null = null;
      // Under isolation the session's earlier work is on its kept branch: the resumed attempt works on a checkout of it, or starts fresh.
      if (resumed && typeof resumed.branch === "string") {
        const kept = { branch: resumed.branch, head: resumed.head!, base: resumed.base!, path: resumed.worktree ?? null };
        const on = this.repo ? continueWorktree(this.repo, this.o.sddDir, this.runId, claimed.id, kept) : { refused: "isolation_off" as const, detail: `the session's work is on branch ${kept.branch}, and this run gives agents no worktree (isolation: none)` };
        if ("refused" in on) {
          decided = { fallback: on.refused, point: resumed, detail: on.detail };
          resumed = null;
        } else {
          worktree = on.worktree;
        }
      }
      const agentId = resumed?.agent_id ?? newAgentId(claimed.role);
      const task = await this.store.transition(claimed.id, "in_progress", { assigned_agent: agentId });
      if (this.repo && worktree === null) {
        try {
          worktree = createWorktree(this.repo, this.o.sddDir, this.runId, task.id);
        } catch (err) {
          const reason = `worktree_failed: ${errorMessage(err)}`.slice(0, 2000);
          await this.store.fail(task.id, { reason });
          this.failures.push({ task_id: task.id, signals: ["worktree_failed"] });
          this.record("task_failed", { task_id: task.id, agent_id: agentId, reason });
          this.o.report(`failed ${task.id}: ${reason}`);
          continue;
        }
      }
      // Where the agent works: its worktree's copy of the project folder, or the project folder itself.
      const workdir = worktree ? worktree.cwd : this.o.workdir;
      const model = this.modelFor(task);
      const effort = task.effort;
      const prompt = resumed ? continuationPrompt(task, resumed) : agentPrompt(task, this.goal, workdir);
      // Absolute: an agent under worktree isolation runs elsewhere than the project folder .sdd is relative to.
      const attemptDir = join(resolve(this.o.sddDir), "runtime", "agents", agentId);
      ensurePrivateDir(attemptDir);
      if (resumed) this.tryWrite(() => restoreSessionHomes(this.o.sddDir, task.id, attemptDir), "resumed session's CLI home");
      const promptFile = join(attemptDir, "prompt.txt");
      writeFileSync(promptFile, prompt, { mode: PRIVATE_FILE_MODE });
      const invocation = adapter.invocation({
        prompt,
        promptFile,
        model,
        effort,
        taskId: task.id,
        agentId,
        title: task.title,
        workdir,
        attemptDir,
        resumeSessionId: resumed?.session_id ?? null,
      });
      const logPath = agentLogPath(this.o.sddDir, agentId);
      const env = { ...this.agentEnv(task, agentId, model, effort, prompt, promptFile, workdir, agentConfig), ...invocation.env };
      const spawnTs = Date.now() / 1000;

      this.record("agent_spawned", {
        agent_id: agentId,
        role: task.role,
        model,
        provider: adapter.name,
        task_ids: [task.id],
        agent_source: "adapter",
        // After upstream's keys: the adapter that runs the agent (replay shows it in DETAIL).
        adapter: adapter.name,
      });
      this.record("task_claimed", { task_id: task.id, agent_id: agentId, model });
      if (worktree) {
        // A resumed attempt's worktree is its stopped predecessor's branch, continued from the head it left.
        this.record("task_worktree", { task_id: task.id, agent_id: agentId, branch: worktree.branch, path: worktree.path, base: worktree.base, ...(resumed?.head ? { continues: resumed.head } : {}) });
        // Where this attempt works, for a run that recovers it after a kill -9 (recoverResumePoint).
        this.tryWrite(() => noteAttemptWorktree(attemptDir, worktree!), "attempt worktree note");
      }
      if (resumed) {
        this.record("task_resumed", {
          task_id: task.id,
          agent_id: agentId,
          adapter: adapter.name,
          session_id: resumed.session_id,
          steps_done: resumed.steps_done.length,
          tools_done: resumed.steps_done,
          stopped_in_run: resumed.run_id || null,
        });
        this.o.report(`resuming ${task.id} in ${adapter.name} session ${resumed.session_id} (${resumed.steps_done.length} tool call(s) already done)`);
      } else if (decided !== null && "fallback" in decided) {
        this.record("task_resume_fallback", { task_id: task.id, agent_id: agentId, session_id: decided.point?.session_id ?? null, reason: decided.fallback, detail: decided.detail });
        this.o.report(`${task.id} starts fresh (${decided.fallback}): ${decided.detail}`);
        this.tryWrite(() => dropResumePoint(this.o.sddDir, task.id), "resume point");
      }

      // The work tree before the agent starts: the trace lists what changed from it (under isolation: the branch's diff).
      const treeBefore: WorkdirSnapshot = worktree ? new Map() : snapshotWorkdir(this.o.workdir);
      const verify = await this.verifyFor(task);
      const trace = new TraceRecorder(this.o.sddDir, {
        taskIds: [task.id],
        sessionId: agentId,
        role: task.role,
        model,
        effort,
        spawnTs,
        logPath,
        tasks: [task],
        settings: { adapter: adapter.name, run_id: this.runId, attempt: task.attempts, max_retries: this.maxRetries },
        adapter: adapter.name,
      });
      this.tryWrite(() => trace.writeSpawn(), "trace");

      const live = new LiveAgent({
        sddDir: this.o.sddDir,
        runId: this.runId,
        agentId,
        taskId: task.id,
        taskTitle: task.title,
        role: task.role,
        model,
        effort,
        adapter: adapter.name,
        parse: (stdout) => adapter.parseOutput(stdout),
        prices: this.config.models.prices,
        warn: this.o.warn,
      });
      const attempt = new Attempt({
        task,
        agentId,
        model,
        effort,
        prompt,
        adapter,
        invocation,
        env,
        workdir,
        logPath,
        timeoutMs: agentConfig.timeout_s * 1000,
        gates: task.role === MANAGER_ROLE ? [] : this.gates,
        isManager: task.role === MANAGER_ROLE,
        prices: this.config.models.prices,
        onStdout: live.onStdout,
        verify,
        // `verify: changed` compares the attempt's own tree before and after: its worktree under isolation
        treeBefore: worktree && verify === "changed" ? snapshotWorkdir(workdir) : treeBefore,
        // What the session changed before it was stopped counts for it too (committed on the branch it continues).
        changedBefore: worktree && resumed?.head ? branchChangedFiles(worktree.cwd, worktree.base, resumed.head) : [],
      });
      const procStart = attempt.pid === null ? null : agentStartTime(attempt.pid);
      const agent: RunningAgent = { agentId, task, attempt, trace, model, effort, prompt, spawnTs, procStart, attemptDir, treeBefore, worktree, seq: ++this.claimSeq, adapter, agentConfig, resumed, live };
      this.running.set(agentId, agent);
      // A stop that signalled the agents while this one was being claimed covers it too.
      if (this.signalledGraceMs !== null) attempt.kill(this.signalledGraceMs);
      this.agentsSpawned++;
      this.writeAgents();
      this.o.report(`spawned ${agentId} on ${task.id} "${task.title}"${model ? ` (model ${model})` : ""}`);
      void attempt.done.then((result) => {
        this.finished.push({ agent, result });
        this.alarm.wake();
      });
    }
  }

  private writeAgents(): void {
    const entries: AgentEntry[] = [];
    for (const a of this.running.values()) {
      if (a.attempt.pid !== null) {
        entries.push({ agent_id: a.agentId, pid: a.attempt.pid, task_id: a.task.id, run_id: this.runId, started_at: a.spawnTs, proc_start: a.procStart });
      }
    }
    this.tryWrite(() => writeAgentsFile(this.o.sddDir, entries), "agents.json");
  }

  // ------------------------------------------------------------------ reap

  private async reap({ agent, result }: { agent: RunningAgent; result: AttemptResult }): Promise<void> {
    this.running.delete(agent.agentId);
    // Before the step journal is written: no live row may come after the reaper's rows.
    agent.live.close();
    this.writeAgents();
    const task = agent.task;
    this.spent += result.costUsd;
    if (result.costSource === "unknown" && result.outcome !== "killed") this.unknownCosts++;
    const summary = result.planError ?? result.resultSummary;
    // A task a client moved meanwhile (cancelled, say) is no longer ours to merge: its branch is kept.
    const ours = agent.worktree !== null && result.outcome === "success" ? (await this.store.get(task.id))?.status === "in_progress" : true;
    const landed = this.land(agent, result, ours);
    try {
      await this.settle(agent, result, summary, landed);
    } catch (err) {
      // A client moved the task (cancelled it, say) while the agent worked.
      if (!(err instanceof IllegalTransitionError || err instanceof TaskNotFoundError)) throw err;
      const now = await this.store.get(task.id);
      this.record("task_result_discarded", { task_id: task.id, agent_id: agent.agentId, status: now?.status ?? null, outcome: result.outcome });
      this.o.warn(`${task.id} became '${now?.status ?? "missing"}' while ${agent.agentId} worked on it: its result is discarded`);
    }
    this.record("agent_usage", {
      agent_id: agent.agentId,
      task_id: task.id,
      model: agent.model,
      cost_usd: pyFloat(result.costUsd),
      cost_source: result.costSource,
      input_tokens: result.tokens?.input ?? null,
      cached_input_tokens: result.tokens?.cached ?? null,
      output_tokens: result.tokens?.output ?? null,
      session_id: result.sessionId,
      tool_calls: result.toolCalls.length,
    });
    this.record("agent_reaped", { agent_id: agent.agentId });
    this.tryWrite(() => this.keepOrDropResumePoint(agent, result, landed), "resume point");
    try {
      rmSync(agent.attemptDir, { recursive: true, force: true });
    } catch (err) {
      this.o.warn(`could not remove ${agent.attemptDir}: ${errorMessage(err)}`);
    }
    this.tryWrite(
      () =>
        appendAgentStep({
          sddDir: this.o.sddDir,
          agentId: agent.agentId,
          adapter: agent.adapter.name,
          recordedArgv: agent.attempt.spec.invocation.recordedArgv,
          workdir: this.o.workdir,
          task,
          model: agent.model,
          effort: agent.effort,
          prompt: agent.prompt,
          result,
          summary,
          toolCallsJournaled: agent.live.toolCallsJournaled,
        }),
      "step journal",
    );
    if (agent.worktree) {
      const wt = agent.worktree;
      // A failed or stopped attempt's work stays on its branch for inspection (a conflict's was named above).
      if (landed.keep && !(result.outcome === "success" && landed.merge && !landed.merge.ok)) {
        this.record("task_branch_kept", { task_id: task.id, agent_id: agent.agentId, branch: wt.branch, commit: landed.head, outcome: result.outcome });
      }
      this.tryWrite(() => removeWorktree(this.repo!, wt, !landed.keep), `worktree ${wt.path}`);
    }
    const settled = (await this.store.get(task.id)) ?? task;
    const files = agent.worktree ? landed.files : changedFiles(agent.treeBefore, snapshotWorkdir(this.o.workdir), this.o.workdir);
    this.tryWrite(() => finalizeTrace(agent.trace, result, summary, settled, agent.adapter.name, files), "trace");
    // For whoever waits on the run (a parent agent, a chat bridge): one row per finished attempt.
    this.tryWrite(
      () =>
        notifyTask(this.o.sddDir, {
          task_id: task.id,
          session_id: this.runId,
          status: result.outcome === "success" ? "completed" : result.outcome === "killed" ? "killed" : "failed",
          summary: summary ?? "",
          result: result.outcome === "success" ? "" : result.failedSignals.join(", "),
          usage: {
            agent_id: agent.agentId,
            model: agent.model,
            cost_usd: result.costSource === "unknown" ? null : pyFloat(result.costUsd),
            input_tokens: result.tokens?.input ?? null,
            output_tokens: result.tokens?.output ?? null,
          },
        }),
      "task notification",
    );
    this.saver.notify();
    if (this.budget !== null && !this.budgetHit && (this.spent >= this.budget || (result.costSource === "unknown" && result.outcome !== "killed"))) {
      // A cost nobody knows cannot be held against the budget: stop claiming rather than count it as 0.
      const unknown = this.spent < this.budget;
      this.budgetHit = true;
      this.record("budget_exhausted", { spent_usd: pyFloat(round4(this.spent)), budget_usd: pyFloat(this.budget), ...(unknown ? { cost_unknown: task.id } : {}) });
      this.o.report(
        unknown
          ? `the cost of ${task.id} is unknown (${agent.model ?? "the default model"} has no price in bernstein.yaml models.prices): the budget of $${this.budget.toFixed(2)} cannot be enforced, no new tasks`
          : `budget of $${this.budget.toFixed(2)} reached ($${this.spent.toFixed(4)} spent): no new tasks`,
      );
    }
  }

  /**
   * Under worktree isolation: commit what the attempt left in its worktree
   * on its branch, and merge a successful attempt's branch into the
   * project's current branch. The branch is kept (`keep`) when it holds
   * work the project does not: a failed, stopped or conflicting attempt's.
   */
  private land(agent: RunningAgent, result: AttemptResult, mergeable: boolean): Landed {
    const wt = agent.worktree;
    if (!wt) return { merge: null, files: [], keep: false, head: null };
    let head: string;
    try {
      head = commitWorktree(wt, `bernstein: ${agent.task.id} by ${agent.agentId} (${result.outcome})\n\n${agent.task.title}`);
    } catch (err) {
      const message = `could not commit the worktree: ${errorMessage(err)}`;
      return { merge: result.outcome === "success" ? { ok: false, conflicts: [], message } : null, files: [], keep: true, head: null };
    }
    const files = branchChangedFiles(wt.cwd, wt.base, head);
    if (result.outcome !== "success" || !mergeable) return { merge: null, files, keep: head !== wt.base, head };
    let merge: MergeResult;
    try {
      merge = mergeWorktree(this.repo!, wt, `bernstein: merge ${agent.task.id} (${agent.agentId})`);
    } catch (err) {
      merge = { ok: false, conflicts: [], message: errorMessage(err) };
    }
    return { merge, files, keep: !merge.ok, head };
  }

  /**
   * A stopped attempt whose CLI named its session leaves a resume point (its
   * session homes moved out of the attempt directory); any other outcome
   * ends the task's session: the point goes.
   */
  private keepOrDropResumePoint(agent: RunningAgent, result: AttemptResult, landed: Landed): void {
    const sessionId = result.sessionId ?? agent.resumed?.session_id ?? null;
    const wt = agent.worktree;
    // Under isolation the session's work is what its branch holds; work that could not be committed cannot be continued.
    const resumable = wt === null || !landed.keep || landed.head !== null;
    if (result.outcome === "killed" && sessionId !== null && agent.adapter.canResume && resumable) {
      saveResumePoint(
        this.o.sddDir,
        {
          task_id: agent.task.id,
          agent_id: agent.agentId,
          adapter: agent.adapter.name,
          session_id: sessionId,
          run_id: this.runId,
          // Tool calls whose result came back are done; one the stop interrupted is not.
          steps_done: [...(agent.resumed?.steps_done ?? []), ...result.toolCalls.filter((c) => c.status !== null).map((c) => c.name)],
          model: agent.model,
          stopped_at: result.endedAt,
          // The kept branch the next attempt continues on (none when the session wrote nothing: a fresh worktree is the same).
          ...(wt ? (landed.keep ? { branch: wt.branch, head: landed.head, base: wt.base, worktree: wt.path } : { branch: null, head: null, base: null }) : {}),
        },
        agent.attemptDir,
      );
    } else {
      dropResumePoint(this.o.sddDir, agent.task.id);
    }
  }

  /** Apply an attempt's outcome to the task store and the run journal. */
  private async settle(agent: RunningAgent, result: AttemptResult, summary: string | null, landed: Landed): Promise<void> {
    const task = agent.task;
    if (agent.resumed && this.stopping === null) {
      // A CLI that could not continue its session: the task goes back for a fresh attempt, said why (not a failed try).
      const f = result.agentFailure;
      const text = [f?.reason ?? "", f?.stderr_tail ?? "", result.resultSummary ?? ""].join("\n");
      const why = resumeFailure(result, text);
      if (why !== null) {
        const detail = (f?.reason ?? result.resultSummary ?? result.failedSignals.join(", ")).slice(0, 500);
        await this.store.transition(task.id, "open", { cost_usd: result.costUsd, result_summary: summary });
        this.record("task_resume_fallback", { task_id: task.id, agent_id: agent.agentId, session_id: agent.resumed.session_id, reason: why, detail });
        this.o.report(`${agent.adapter.name} could not continue session ${agent.resumed.session_id} of ${task.id} (${why}): ${detail}; the task starts fresh`);
        return;
      }
    }
    const wt = agent.worktree;
    if (result.outcome === "success" && wt && landed.merge && !landed.merge.ok) {
      // The work is done but cannot land: the task fails (no retry would land it either) and the branch stays.
      const m = landed.merge;
      const reason = `merge_conflict: ${m.conflicts.length ? m.conflicts.join(", ") : m.message} (branch ${wt.branch} kept)`.slice(0, 2000);
      this.record("task_merge_conflict", { task_id: task.id, agent_id: agent.agentId, branch: wt.branch, commit: landed.head, conflicts: m.conflicts, detail: m.message });
      this.record("task_verification_failed", { task_id: task.id, failed_signals: ["merge_conflict"] });
      await this.store.fail(task.id, { reason, cost_usd: result.costUsd });
      this.failures.push({ task_id: task.id, signals: ["merge_conflict"] });
      this.record("task_failed", { task_id: task.id, agent_id: agent.agentId, reason, branch: wt.branch });
      this.o.report(`failed ${task.id}: ${reason}`);
      return;
    }
    if (result.outcome === "success") {
      if (wt && landed.merge?.ok) {
        this.record("task_merged", { task_id: task.id, agent_id: agent.agentId, branch: wt.branch, merge: landed.merge.mode, commit: landed.merge.commit, files: landed.files });
      }
      await this.store.complete(task.id, { result_summary: summary, cost_usd: result.costUsd });
      // cost_usd is run-cumulative, as upstream writes it (spec: run-journal §9; the timeline reads it so);
      // task_cost_usd is this attempt's own cost, null when unknown.
      this.record("task_completed", {
        task_id: task.id,
        agent_id: agent.agentId,
        cost_usd: pyFloat(round4(this.spent)),
        task_cost_usd: result.costSource === "unknown" ? null : pyFloat(result.costUsd),
        cost_source: result.costSource,
      });
      const cost = result.costSource === "unknown" ? " (cost unknown)" : result.costUsd ? ` ($${result.costUsd.toFixed(4)})` : "";
      this.o.report(`done ${task.id} by ${agent.agentId}${summary ? `: ${summary}` : ""}${cost}`);
      if (result.plan) await this.acceptPlan(task, result.plan);
      return;
    }
    if (result.outcome === "killed") {
      await this.store.transition(task.id, "open", { cost_usd: result.costUsd });
      this.record("task_requeued", { task_id: task.id, agent_id: agent.agentId, reason: "stopped" });
      this.o.report(`stopped ${agent.agentId}; ${task.id} goes back to the queue`);
      return;
    }
    const cls = result.failureClass;
    if (result.agentFailure) {
      const f = result.agentFailure;
      this.record("agent_failed", {
        task_id: task.id,
        agent_id: agent.agentId,
        exit_code: f.exit_code,
        signal: result.failedSignals[0] ?? null,
        reason: f.reason,
        stderr_tail: f.stderr_tail,
        log_path: f.log_path,
        ...(cls ? { failure_class: cls } : {}),
      });
      this.o.report(`agent ${agent.agentId} failed on ${task.id} (${result.failedSignals.join(", ")}): ${f.reason}${f.stderr_tail ? `\n  stderr: ${f.stderr_tail.split("\n").join("\n          ")}` : ""}\n  log: ${f.log_path}`);
    }
    this.record("task_verification_failed", { task_id: task.id, failed_signals: result.failedSignals });
    const current = await this.store.require(task.id);
    // A rejected key or request gets the same answer every time: fail now, whatever max_retries says.
    const permanent = cls !== null && PERMANENT_FAILURES.includes(cls);
    if (!permanent && cls !== null && current.attempts <= this.maxRetries && this.stopping === null) {
      // Rate limit, 5xx, network: wait (back-off, Retry-After) before the task goes back to the queue.
      const delay = retryDelayS(current.attempts, result.retryAfterS);
      this.backingOff.set(task.id, { dueAt: Date.now() + delay * 1000, costUsd: result.costUsd, summary });
      this.record("task_retried", { task_id: task.id, failure_class: cls, delay_s: pyFloat(Math.round(delay * 1000) / 1000) });
      const asked = result.retryAfterS !== null ? ` (the provider asked for ${result.retryAfterS}s)` : "";
      this.o.report(`attempt failed for ${task.id} (${cls}): retry ${current.attempts} of ${this.maxRetries} in ${delay.toFixed(1)}s${asked}`);
    } else if (!permanent && current.attempts <= this.maxRetries && this.stopping === null) {
      await this.store.transition(task.id, "open", { cost_usd: result.costUsd, result_summary: summary });
      this.record("task_retried", { task_id: task.id });
      this.o.report(`${result.agentFailure ? "attempt failed" : "verification failed"} for ${task.id} (${result.failedSignals.join(", ")}): retry ${current.attempts} of ${this.maxRetries}`);
    } else if (!permanent && this.stopping !== null && current.attempts <= this.maxRetries) {
      // Stopping: do not retry now, but leave the task for a resumed run.
      await this.store.transition(task.id, "open", { cost_usd: result.costUsd, result_summary: summary });
      this.record("task_requeued", { task_id: task.id, agent_id: agent.agentId, reason: "stopped" });
    } else {
      const kept = wt && landed.keep ? ` (branch ${wt.branch} kept)` : "";
      const reason = `${result.failedSignals.join(", ")}${kept}${summary ? `: ${summary}` : ""}`.slice(0, 2000);
      await this.store.fail(task.id, { reason, cost_usd: result.costUsd });
      this.failures.push({ task_id: task.id, signals: result.failedSignals });
      this.record("task_failed", { task_id: task.id, agent_id: agent.agentId, reason, ...(wt && landed.keep ? { branch: wt.branch } : {}) });
      this.o.report(`failed ${task.id} after ${current.attempts} attempt(s)${permanent ? ` (${cls}: not retried)` : ""}: ${reason}`);
      if (task.role === MANAGER_ROLE) {
        const why = result.planError ?? `the manager agent failed (${result.failedSignals.join(", ")})`;
        // Without a plan file the goal went to the manager: say so, an operator may have expected a plan file to be read.
        const context = this.o.planPath === null ? `no PLAN file was given (bernstein run PLAN), so the manager agent planned the goal; ` : "";
        this.planError = { code: "plan_invalid", detail: `${context}${why}` };
      }
    }
  }

  private async acceptPlan(managerTask: Task, plan: Plan): Promise<void> {
    try {
      const tasks = await this.store.createMany(plan.tasks);
      await this.declareVerify(plan);
      this.record("plan_loaded", { source: "manager", path: null, task_count: tasks.length, task_ids: tasks.map((t) => t.id) });
      this.o.report(`plan: ${tasks.length} task(s) from the manager agent`);
    } catch (err) {
      this.planError = { code: "plan_invalid", detail: `the manager's plan was refused by the task store: ${errorMessage(err)}` };
      this.record("task_failed", { task_id: managerTask.id, agent_id: managerTask.assigned_agent, reason: this.planError.detail });
    }
  }

  private tryWrite(fn: () => void, what: string): void {
    try {
      fn();
    } catch (err) {
      this.o.warn(`could not write the ${what}: ${errorMessage(err)}`);
    }
  }

  private record(event: string, payload: Record<string, PyLike>): void {
    this.journal.record(event, payload);
  }

  // ---------------------------------------------------------------- finish

  private async outcome(): Promise<RunOutcome> {
    if (this.stopping?.interrupted) return "interrupted";
    if (this.planError) return "plan_failed";
    // A stop only counts when it left work behind; a backlog that drained
    // before the stop took effect is judged like any finished run.
    if (this.stopping && (await this.workLeft()) > 0) return "stopped";
    const c = await this.store.counts();
    // A backlog that drained earlier with failures is still not a success.
    if (this.decision.action === "drained" && !this.o.keepAlive) return c.failed > 0 ? "failed" : "drained";
    if (this.budgetHit && c.open + c.claimed + c.in_progress > 0) return "budget_exhausted";
    if (c.failed > 0) return "failed";
    return "completed";
  }

  /** Tasks that could still run: open, claimed, in progress, orphaned, waiting. */
  private async workLeft(): Promise<number> {
    const c = await this.store.counts();
    return c.open + c.claimed + c.in_progress + c.orphaned + c.waiting_for_subtasks + c.blocked + c.planned;
  }

  private async finish(): Promise<RunSummary> {
    const outcome = await this.outcome();
    const fingerprint = this.journal.head();
    // The run's total (upstream's run_completed has no cost; these two keys follow its own).
    this.record("run_completed", { run_id: this.runId, ticks: this.ticks, fingerprint, outcome, cost_usd: pyFloat(round4(this.spent)), cost_known: this.unknownCosts === 0 });
    const head = this.journal.head();
    const count = this.journal.count();
    const path = this.journal.path;
    this.journal.close();
    let sealed = false;
    if (outcome === "stopped" || outcome === "interrupted") {
      // Work is left: a seal would commit to a journal the run is not done with.
      this.o.report(`journal left unsealed (the run stopped with work left); once it is complete: bernstein journal seal ${this.runId}`);
    } else if (!this.o.noSeal) {
      try {
        await sealRun(this.o.sddDir, this.runId);
        sealed = true;
      } catch (err) {
        this.o.warn(`could not seal the journal: ${errorMessage(err)}`);
      }
    }
    this.saver.flush();
    const c = await this.store.counts();
    return {
      run_id: this.runId,
      outcome,
      resume: { decision: this.decision.action, reason: this.decision.reason, message: this.decision.message },
      done_previously: this.decision.state?.completed_task_ids.length ?? 0,
      tasks: {
        total: Object.values(c).reduce((a, b) => a + b, 0),
        done: c.done + c.closed,
        failed: c.failed,
        open: c.open,
        pending: c.claimed + c.in_progress,
      },
      cost_usd: round4(this.spent),
      cost_known: this.unknownCosts === 0,
      budget_usd: this.budget,
      ticks: this.ticks,
      agents_spawned: this.agentsSpawned,
      journal: path,
      head,
      event_count: count,
      sealed,
      server_url: this.server.url,
      stopped_by: this.stopping?.reason ?? null,
      failures: this.failures,
      error: this.planError,
    };
  }
}

/**
 * Exit code of a finished run: 0 only when the backlog drained with no
 * failure; a stop that left tasks behind is 1 (`run_incomplete`), or 143
 * when the stop was a SIGTERM (the shell's code for "terminated"), and
 * Ctrl-C is 130.
 */
export function exitCodeOf(outcome: RunOutcome, stoppedBy: string | null = null): number {
  switch (outcome) {
    case "completed":
    case "drained":
      return 0;
    case "interrupted":
      return 130;
    case "stopped":
      return stoppedBy === "SIGTERM" ? 143 : 1;
    case "plan_failed":
      return 3;
    default:
      return 1;
  }
}

