/**
 * One agent attempt at one task: spawn the agent, wait for it, read its
 * result, then verify (gates for ordinary tasks, the JSON plan for the
 * manager's planning task). The attempt only computes an outcome; the
 * orchestrator records it (task store, journals, trace) when it reaps.
 */
import type { GateSpec, VerifyMode } from "./config.ts";
import { changedFiles, snapshotWorkdir, type WorkdirSnapshot } from "./changes.ts";
import { changeEvidence, refusalOf, type Evidence } from "./outcome.ts";
import type { AgentAdapter, AgentInvocation } from "./adapters.ts";
import { runGates, type GateRun } from "./gates.ts";
import { planFromAgentOutput, type Plan } from "./plan.ts";
import { priced, type AgentReport, type FailureClass, type Price, type ToolCall, type AssistantMessage } from "./result.ts";
import { classifyFailure, lastLines, providerMessage, retryAfterIn } from "./adapters/events.ts";
import { spawnLogged, type RunningProcess } from "./process.ts";
import type { Task } from "../server/model.ts";
import { errorMessage } from "../errors/index.ts";

export interface AttemptSpec {
  task: Task;
  agentId: string;
  model: string | null;
  effort: string | null;
  prompt: string;
  adapter: AgentAdapter;
  invocation: AgentInvocation;
  env: Record<string, string | undefined>;
  workdir: string;
  logPath: string;
  timeoutMs: number;
  gates: readonly GateSpec[];
  /** The planning task: its output must be a JSON task list. */
  isManager: boolean;
  /** `models.prices`: the cost of agents that report tokens only. */
  prices: Record<string, Price>;
  /** The agent's stdout as it arrives (live-stream.ts), for CLIs whose stream goes to a file. */
  onStdout?: (chunk: Uint8Array) => void;
  /** This task's work-tree check (`changed`: an answer that left the tree as it was fails `no_change`). */
  verify?: VerifyMode;
  /** The work tree before the agent started, compared with it after for `verify: changed`. */
  treeBefore?: WorkdirSnapshot;
  /** Files a resumed session changed in its earlier attempts (committed on the branch it continues): they count for `verify: changed`. */
  changedBefore?: readonly string[];
}

/** An agent that failed by itself (exit code, signal, timeout, spawn error), as reported. */
export interface AgentFailure {
  exit_code: number | null;
  /** Its own reason: the CLI's error message, else the last lines of its stderr. */
  reason: string;
  stderr_tail: string;
  log_path: string;
}

export type AttemptOutcome = "success" | "failed" | "killed";

export interface AttemptResult extends AgentReport {
  outcome: AttemptOutcome;
  exitCode: number | null;
  /** The assistant's text messages between the tool calls, when the adapter reads them. */
  messages: AssistantMessage[];
  /** Set when the agent process itself failed (not a gate, not its answer). */
  agentFailure: AgentFailure | null;
  /**
   * Why a failed attempt failed: `exit_code:N`, `timeout`, `spawn_error`, `gate:<name>`, `plan_invalid`,
   * or what the adapter read from the output: `permission_denied`, `agent_error`, `no_result`, `invalid_cost`;
   * or what the outcome evidence says (outcome.ts): `permission_denied`, `no_write_tool`, `no_change`;
   * a provider failure of a known class is its class instead (`auth`, `invalid_request`, `rate_limited`, …).
   */
  failedSignals: string[];
  /** The provider failure behind a failed attempt, when the agent's output or stderr says which. */
  failureClass: FailureClass | null;
  gates: GateRun["results"];
  plan: Plan | null;
  /** The manager's malformed answer, explained. */
  planError: string | null;
  startedAt: number;
  endedAt: number;
}

export class Attempt {
  readonly spec: AttemptSpec;
  readonly done: Promise<AttemptResult>;
  private agent: RunningProcess;
  private gate: RunningProcess | null = null;
  private killed = false;

  constructor(spec: AttemptSpec) {
    this.spec = spec;
    this.agent = spawnLogged({
      argv: spec.invocation.argv,
      env: spec.env,
      cwd: spec.workdir,
      stdin: spec.invocation.stdin,
      logPath: spec.logPath,
      timeoutMs: spec.timeoutMs,
      ...(spec.invocation.stdoutPath ? { stdoutPath: spec.invocation.stdoutPath } : {}),
      ...(spec.onStdout ? { onStdout: spec.onStdout } : {}),
    });
    this.done = this.run();
  }

  get pid(): number | null {
    return this.agent.pid;
  }

  /** Stop the agent (and a running gate) now; the attempt resolves as `killed`. */
  kill(graceMs?: number): void {
    this.killed = true;
    this.agent.kill(graceMs);
    this.gate?.kill(graceMs);
  }

  /** What speaks against a success the agent reported (see outcome.ts), or null. */
  private evidence(toolCalls: ToolCall[]): Evidence | null {
    const refused = refusalOf(toolCalls);
    if (refused) return refused;
    const { verify, treeBefore, workdir, changedBefore = [] } = this.spec;
    if (verify !== "changed" || !treeBefore) return null;
    return changeEvidence([...changedBefore, ...changedFiles(treeBefore, snapshotWorkdir(workdir), workdir)]);
  }

  private async run(): Promise<AttemptResult> {
    const r = await this.agent.done;
    const base = {
      exitCode: r.exitCode,
      gates: [] as GateRun["results"],
      plan: null as Plan | null,
      planError: null as string | null,
      startedAt: r.startedAt,
    };
    const output = this.spec.adapter.parseOutput(r.stdout);
    const parsed = priced(this.spec.adapter.complete ? this.spec.adapter.complete(output, this.spec.env) : output, this.spec.model, this.spec.prices);
    const result = {
      ...base,
      resultSummary: parsed.resultSummary,
      costUsd: parsed.costUsd,
      costSource: parsed.costSource,
      tokens: parsed.tokens,
      sessionId: parsed.sessionId,
      reportedModel: parsed.reportedModel,
      toolCalls: parsed.toolCalls,
      messages: parsed.messages ?? [],
      agentFailure: null as AgentFailure | null,
      failureClass: null as FailureClass | null,
      retryAfterS: null as number | null,
    };
    const now = () => Date.now() / 1000;
    if (this.killed || r.killed) return { ...result, outcome: "killed", failedSignals: ["stopped"], endedAt: r.endedAt };
    /** `classify`: read the provider failure from the parsed output ("parsed"), and from stderr too ("stderr"). */
    const agentFailed = (signal: string, reason: string, classify: "no" | "parsed" | "stderr" = "no"): AttemptResult => {
      const stderrTail = lastLines(r.stderr);
      const said = reason || (stderrTail ? providerMessage(stderrTail.split("\n").at(-1)!) : "") || "no message on stdout or stderr";
      const agentFailure = { exit_code: r.exitCode, reason: said, stderr_tail: stderrTail, log_path: this.spec.logPath };
      // A CLI that exited non-zero: its parsed error says which provider failure it was, else its stderr may.
      const both = `${said}\n${stderrTail}`;
      const failureClass = classify === "no" ? null : (parsed.errorClass ?? (classify === "stderr" ? classifyFailure(both) : null));
      const retryAfterS = failureClass === null ? null : (parsed.retryAfterS ?? retryAfterIn(both));
      const failedSignals = [failureClass ?? signal];
      return { ...result, agentFailure, failureClass, retryAfterS, resultSummary: `${said} (log: ${this.spec.logPath})`, outcome: "failed", failedSignals, endedAt: r.endedAt };
    };
    if (r.spawnError !== null) return agentFailed("spawn_error", `could not start the agent: ${r.spawnError}`);
    if (r.timedOut) return agentFailed("timeout", `the agent did not finish within ${this.spec.timeoutMs / 1000}s (agent.timeout_s) and was killed`);
    if (r.exitCode !== 0) {
      const signal = r.exitCode === null ? `signal:${r.signal ?? "unknown"}` : `exit_code:${r.exitCode}`;
      // Only the provider CLIs' stderr is read for a provider failure: a script's own errors are its business.
      const cli = this.spec.adapter.name !== "script" && this.spec.adapter.name !== "command";
      return agentFailed(signal, parsed.failureDetail ?? "", r.exitCode === null ? "no" : cli ? "stderr" : "parsed");
    }
    // Exit 0 is not enough: the adapter read a failure (denied tools, an
    // error result, no result, an invalid cost) from the agent's own output.
    if (parsed.failure !== null) {
      const failedSignals = [parsed.errorClass ?? parsed.failure];
      return { ...result, failureClass: parsed.errorClass, retryAfterS: parsed.retryAfterS, resultSummary: parsed.failureDetail, outcome: "failed", failedSignals, endedAt: r.endedAt };
    }
    // An answer is not evidence: a refused tool call, or an unchanged tree where a change was due, fails the attempt.
    const evidence = this.spec.isManager ? null : this.evidence(parsed.toolCalls);
    if (evidence) return { ...result, resultSummary: evidence.detail, outcome: "failed", failedSignals: [evidence.signal], endedAt: r.endedAt };
    if (this.spec.isManager) {
      try {
        // The plan is in the answer's text, not in the CLI's JSON wrapper around it.
        const plan = planFromAgentOutput(parsed.answerText ?? r.stdout, `manager agent ${this.spec.agentId}`);
        return { ...result, plan, resultSummary: `planned ${plan.tasks.length} task(s)`, outcome: "success", failedSignals: [], endedAt: r.endedAt };
      } catch (err) {
        return { ...result, planError: errorMessage(err), outcome: "failed", failedSignals: ["plan_invalid"], endedAt: r.endedAt };
      }
    }
    if (this.spec.gates.length === 0) return { ...result, outcome: "success", failedSignals: [], endedAt: r.endedAt };
    const g = await runGates(this.spec.gates, {
      cwd: this.spec.workdir,
      env: this.spec.env,
      logPath: this.spec.logPath,
      track: (p) => {
        this.gate = p;
        if (p && this.killed) p.kill();
      },
    });
    if (this.killed) return { ...result, gates: g.results, outcome: "killed", failedSignals: ["stopped"], endedAt: now() };
    // A failed gate is the result: what the agent said it did is not repeated as if it were.
    const failedGate = g.failedSignals.length ? g.results.at(-1) : undefined;
    return {
      ...result,
      ...(failedGate ? { resultSummary: gateFailure(failedGate, this.spec.logPath) } : {}),
      gates: g.results,
      outcome: g.failedSignals.length ? "failed" : "success",
      failedSignals: g.failedSignals,
      endedAt: now(),
    };
  }
}

/** One line for a failed verification gate (its output is in the agent's log). */
export function gateFailure(gate: GateRun["results"][number], logPath: string): string {
  return `verify gate '${gate.name}' ${gate.timed_out ? "timed out" : gate.exit_code === null ? "was killed" : `exited ${gate.exit_code}`}; its output is in ${logPath}`;
}

/** Back-off of a transient provider failure: 2 s doubling per attempt, capped at 60 s, jittered to 50–100 %. */
export const BACKOFF_BASE_S = 2;
export const BACKOFF_MAX_S = 60;
/** A provider's Retry-After is honoured up to this long; a longer wait is better left to a later run. */
export const RETRY_AFTER_MAX_S = 300;

/**
 * Seconds to wait before retry number `retry` (1 = the first retry) of an
 * attempt that failed transiently: the jittered exponential back-off, but
 * never less than the provider's Retry-After (bounded by RETRY_AFTER_MAX_S).
 */
export function retryDelayS(retry: number, retryAfterS: number | null, random: () => number = Math.random): number {
  const backoff = Math.min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2 ** Math.max(0, retry - 1)) * (0.5 + 0.5 * random());
  return retryAfterS === null ? backoff : Math.max(backoff, Math.min(retryAfterS, RETRY_AFTER_MAX_S));
}
