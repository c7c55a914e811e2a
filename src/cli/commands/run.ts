import { jsonDoc } from "../../json-fields.ts";
import { InputError, UsageError, type ErrorCode } from "../../errors/index.ts";
import { exitCodeOf, Orchestrator, type RunSummary } from "../../orchestrator/orchestrator.ts";
import { costLabel } from "../../render/cost.ts";
import { DEFAULT_HOST } from "../../server/server.ts";
import { parsePort } from "../../server/ports.ts";
import { defineCliCommand } from "../command.ts";
import { log } from "../log.ts";
import { giveUpStdoutAfter, printJson, printLines, writeStderr, writeStdoutSync } from "../output.ts";
import { paint } from "../../render/ansi.ts";
import { sddDirArgs } from "../args.ts";
import { parseTimeoutSeconds } from "../stop-report.ts";

function positiveInt(raw: string | undefined, flag: string): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1) throw new UsageError(`${flag} must be a positive integer, got '${raw}'`);
  return Number(raw);
}

function nonNegativeInt(raw: string | undefined, flag: string): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw.trim())) throw new UsageError(`${flag} must be a non-negative integer, got '${raw}'`);
  return Number(raw);
}

function usd(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(n) || n < 0) throw new UsageError(`--budget must be a non-negative number of USD, got '${raw}'`);
  return n;
}

function leftDetail(s: RunSummary): string {
  const left = s.tasks.open + s.tasks.pending;
  return `stopped by ${s.stopped_by ?? "a stop request"} with ${left} task(s) not done (${s.tasks.done} done, ${s.tasks.failed} failed); run again to resume`;
}

/** Which tasks failed and why, in short: `some tasks failed for good: U (auth), E (invalid_request)`. */
function failedDetail(s: RunSummary): string {
  const shown = s.failures.slice(0, 10).map((f) => `${f.task_id} (${f.signals.join(", ")})`);
  const more = s.failures.length > shown.length ? `, and ${s.failures.length - shown.length} more` : "";
  return shown.length ? `some tasks failed for good: ${shown.join(", ")}${more}` : "some tasks failed for good";
}

const NEGATIVE_CODES: Record<string, [ErrorCode, string | ((s: RunSummary) => string)]> = {
  stopped: ["run_incomplete", leftDetail],
  failed: ["tasks_failed", failedDetail],
  budget_exhausted: ["budget_exhausted", "the budget was reached before all tasks were done"],
  interrupted: ["interrupted", "interrupted (Ctrl-C); the session was saved, run again to resume"],
};

function summaryLines(s: RunSummary): string[] {
  const t = s.tasks;
  const style = s.outcome === "completed" || s.outcome === "drained" ? "bold bright_green" : s.outcome === "stopped" ? "bright_yellow" : "bold bright_red";
  return [
    `${paint(style, `run ${s.run_id} ${s.outcome}`)}: ${t.done} done, ${t.failed} failed, ${t.open + t.pending} left; cost ${costLabel(s.cost_usd, s.cost_known)}${s.budget_usd !== null ? ` of $${s.budget_usd.toFixed(2)}` : ""}; ${s.ticks} tick(s), ${s.agents_spawned} agent(s)`,
    `journal ${s.journal} (${s.event_count} events, head ${s.head.slice(0, 16)}…${s.sealed ? ", sealed" : ""})`,
  ];
}

export default defineCliCommand({
  docs: {
    exits: { 0: "the backlog drained with no failed task", 1: "failed tasks (tasks_failed) or a stop that left tasks undone (run_incomplete)", 2: "usage error or refusal", 3: "no such plan, or a plan or config that cannot be read" },
    json: [
      jsonDoc({ example: "bernstein run plan.yaml --fresh" }, [
        ["ok", "boolean", "The backlog drained with no failed task"],
        ["error?", "string", "The error code (docs/errors.md), when not ok"],
        ["detail?", "string", "One line saying what failed, when not ok"],
        ["run_id", "string", "The run"],
        ["outcome", "string", "How it ended (drained, failed, stopped …)"],
        ["resume", "object", "Whether it resumed a session: {decision, reason, message}"],
        ["done_previously", "number", "Tasks done before this run"],
        ["tasks", "object", "{total, done, failed, open, pending}"],
        ["cost_usd", "number", "Cost of this run's attempts"],
        ["cost_known", "boolean", "Every attempt reported its cost"],
        ["budget_usd", "number | null", "The budget"],
        ["ticks", "number", "Scheduler ticks"],
        ["agents_spawned", "number", "Agents started"],
        ["journal", "string", "The run's journal.jsonl"],
        ["head", "string", "Its head hash"],
        ["event_count", "number", "Its events"],
        ["sealed", "boolean", "It was sealed"],
        ["server_url", "string", "The task server used"],
        ["stopped_by", "string | null", "What stopped it (SIGTERM, POST /stop, SIGINT)"],
        ["failures", "object[]", "Tasks failed for good: {task_id, signals}"],
      ]),
    ],
  },
  meta: { name: "run", description: "Plan a goal into tasks and run agents on them, recording the run journal" },
  args: {
    plan: { type: "positional", required: false, description: "Plan file (YAML list of tasks with depends_on)" },
    goal: { type: "string", description: "Goal to plan (a manager agent decomposes it when no PLAN is given)" },
    "max-agents": { type: "string", description: "Agents running at once (default: max_agents of bernstein.yaml, 3)" },
    budget: { type: "string", description: "Stop claiming tasks once this many USD are spent" },
    "max-retries": { type: "string", description: "Retries of a task whose verification failed (default: max_retries, 2)" },
    grace: {
      type: "string",
      description: "On a stop (SIGTERM, bernstein stop), seconds agents get between SIGTERM and SIGKILL (default: stop_grace_s of bernstein.yaml, 5)",
    },
    fresh: { type: "boolean", description: "Ignore the saved session and start from scratch" },
    "fresh-agents": { type: "boolean", description: "Redo stopped tasks from scratch instead of continuing their agents' CLI sessions (resume_agents: false for this run)" },
    "keep-alive": { type: "boolean", description: "After the backlog drains, keep serving and run new tasks until stopped" },
    "no-seal": {
      type: "boolean",
      description: "Do not seal the journal when the run ends (neither seal.json nor the lineage-spine entry; 'journal seal RUN' seals it later)",
    },
    config: { type: "string", description: "Config file (default: bernstein.yaml if present)" },
    ...sddDirArgs,
    host: { type: "string", default: DEFAULT_HOST, description: "Address of the task server" },
    port: { type: "string", default: "auto", description: "Task server port: auto (per state dir, free fallback), 0 (any) or N" },
    store: { type: "string", description: "Task store: postgres://user:pass@host:port/db (default: BERNSTEIN_STORE, else <sdd>/runtime/tasks.db)" },
  },
  async run({ args, json }) {
    const progress = (line: string) => {
      if (json) writeStderr(line + "\n");
      else writeStdoutSync(line + "\n");
    };
    const orch = new Orchestrator({
      workdir: process.cwd(),
      sddDir: args["sdd-dir"],
      planPath: args.plan ?? null,
      goal: args.goal ?? null,
      configPath: args.config ?? null,
      maxAgents: positiveInt(args["max-agents"], "--max-agents"),
      budgetUsd: usd(args.budget),
      maxRetries: nonNegativeInt(args["max-retries"], "--max-retries"),
      graceS: args.grace === undefined ? undefined : parseTimeoutSeconds(args.grace, "grace"),
      fresh: Boolean(args.fresh),
      freshAgents: Boolean(args["fresh-agents"]),
      keepAlive: Boolean(args["keep-alive"]),
      // citty reads `--no-seal` as the negation of `seal`
      noSeal: Boolean(args["no-seal"]) || (args as Record<string, unknown>).seal === false,
      host: args.host,
      port: parsePort(args.port),
      storeUrl: args.store ?? (process.env.BERNSTEIN_STORE || undefined),
      report: progress,
      warn: (m) => log.warn(m),
    });

    let interrupts = 0;
    let signalled = false;
    const onSigint = () => {
      interrupts++;
      signalled = true;
      if (interrupts === 1) writeStderr("\nCtrl+C received - saving state...\n");
      orch.saveNow();
      orch.requestStop({ force: true, timeout_s: 0, grace_s: null, interrupted: true, reason: "SIGINT" });
    };
    // A container's stop: agents are signalled at once and get the grace window, then the state is saved and the run exits 143.
    const onSigterm = () => {
      signalled = true;
      orch.requestStop({ force: false, timeout_s: 0, grace_s: null, reason: "SIGTERM" });
    };
    process.on("SIGINT", onSigint);
    process.on("SIGTERM", onSigterm);
    let summary: RunSummary;
    try {
      summary = await orch.run();
    } finally {
      process.off("SIGINT", onSigint);
      process.off("SIGTERM", onSigterm);
    }
    // stopped by a signal: the summary below must not wait on a reader who stopped reading
    if (signalled) giveUpStdoutAfter();

    const code = exitCodeOf(summary.outcome, summary.stopped_by);
    const { error, ...facts } = summary;
    if (error) {
      if (!json) await printLines(...summaryLines(summary));
      throw new InputError(error.code, error.detail, facts);
    }
    if (json) {
      const neg = NEGATIVE_CODES[summary.outcome];
      const detail = neg && (typeof neg[1] === "string" ? neg[1] : neg[1](summary));
      await printJson(code === 0 || !neg ? { ok: code === 0, ...facts } : { ok: false, error: neg[0], detail, ...facts });
    } else {
      await printLines(...summaryLines(summary));
      if (summary.outcome === "stopped") log.warn(`run_incomplete: ${leftDetail(summary)}`);
    }
    return code;
  },
});
