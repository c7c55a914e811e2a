import { jsonDoc } from "../../json-fields.ts";
import { UsageError } from "../../errors/index.ts";
import { paint } from "../../render/ansi.ts";
import { costLabel } from "../../render/cost.ts";
import { collectStatus, type SessionSummary, type StatusReport } from "../../session/status.ts";
import { defineCliCommand } from "../command.ts";
import { withOwnSignalHandling } from "../interrupt.ts";
import { outputFailure, printJson, printLines, stdoutClosed, writeStdout } from "../output.ts";
import { isTerminal } from "../../render/terminal.ts";
import { sanitizeCell, terminalWidth, truncateCells } from "../../render/table.ts";
import { watchLiveRun, type LiveRunSnapshot } from "../../orchestrator/live-watch.ts";
import { sddDirArgs } from "../args.ts";

/** `--stale-after MINUTES`: a positive integer (Python's `stale_after_minutes`). */
export function parseStaleAfter(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1) throw new UsageError(`--stale-after needs a positive number of minutes, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

export function describeAge(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)}s ago`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)}m ago`;
  if (seconds < 48 * 3600) return `${Math.round(seconds / 3600)}h ago`;
  return `${Math.round(seconds / 86400)}d ago`;
}

export function describeSession(s: SessionSummary): string {
  switch (s.status) {
    case "missing":
      return `none (no ${s.path})`;
    case "corrupt":
      return `${paint("red", "corrupt")} — ${s.warning ?? s.path} (a new run starts fresh)`;
    case "stale":
    case "ok": {
      const counts = `${s.completed} done, ${s.pending} pending, ${s.open} open`;
      const age = s.age_seconds === null ? "" : `saved ${describeAge(s.age_seconds)}, `;
      return s.status === "ok"
        ? `${paint("green", "resumable")} (${age}${counts})`
        : `${paint("yellow", "stale")} (${age}${counts}; too old to resume)`;
    }
  }
}

const STATUS_STYLE: Record<string, string> = { done: "green", failed: "red", in_progress: "cyan", claimed: "cyan", cancelled: "gray", blocked: "yellow" };

function render(r: StatusReport): string[] {
  const lines: string[] = [];
  const s = r.server;
  if (s.reachable) lines.push(`Server   ${paint("green", "up")}    ${s.url}${s.pid ? ` (pid ${s.pid})` : ""}`);
  else lines.push(`Server   ${paint("red", "down")}  ${s.url ? `${s.url}: ` : ""}${s.error ?? ""}`);
  if (r.run) {
    const run = r.run;
    const cost = `${costLabel(run.cost_usd, run.cost_known !== false, 2)}${run.budget_usd !== null ? ` of $${run.budget_usd.toFixed(2)}` : ""}`;
    lines.push(`Run      ${run.run_id ?? "(no run)"}  goal: ${run.goal ? JSON.stringify(run.goal) : "(none)"}  cost: ${cost}`);
    if (run.orchestrator) {
      const o = run.orchestrator;
      lines.push(`         orchestrator pid ${o.pid}, ${o.running_agents} agent(s) running${o.stopping ? ", stopping" : ""}`);
    }
    const counts = Object.entries(run.counts)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${n} ${k}`)
      .join(", ");
    lines.push(`Tasks    ${run.total} total${counts ? `: ${counts}` : ""}`);
  }
  if (r.tasks && r.tasks.length > 0) {
    const idW = Math.max(2, ...r.tasks.map((t) => t.id.length));
    const stW = Math.max(6, ...r.tasks.map((t) => t.status.length));
    lines.push(`  ${"ID".padEnd(idW)}  ${"STATUS".padEnd(stW)}  PRIO  TITLE`);
    for (const t of r.tasks) {
      const st = paint(STATUS_STYLE[t.status] ?? "", t.status.padEnd(stW));
      lines.push(`  ${t.id.padEnd(idW)}  ${st}  ${String(t.priority).padStart(4)}  ${t.title}`);
    }
  }
  lines.push(`Session  ${describeSession(r.session)}`);
  return lines;
}

/** One screen of `status --watch`: the run, then one line per running agent. */
export function renderLive(s: LiveRunSnapshot): string[] {
  if (!s.running) return [`Run      ${paint("dim", "no run in progress")}`];
  const t = s.tokens;
  const lines = [
    `Run      ${s.run_id}  ${s.agents.length} agent(s) running  tokens ${t.input} in / ${t.output} out  cost so far: ${costLabel(s.cost_usd, s.cost_known, 4)}`,
  ];
  if (s.agents.length === 0) return lines;
  const idW = Math.max(5, ...s.agents.map((a) => a.agent_id.length));
  const taskW = Math.max(4, ...s.agents.map((a) => a.task_id.length));
  lines.push(`  ${"AGENT".padEnd(idW)}  ${"TASK".padEnd(taskW)}  TOOLS  ${"TOKENS IN/OUT".padEnd(15)}  ${"COST".padEnd(9)}  LAST TOOL`);
  for (const a of s.agents) {
    const tok = a.tokens ? `${a.tokens.input}/${a.tokens.output}` : "-";
    const cost = a.cost_usd === null ? "unknown" : `$${a.cost_usd.toFixed(4)}`;
    const tool = a.last_tool ? `${a.last_tool.name} ${a.last_tool.status ?? "running"}: ${a.last_tool.input}` : "-";
    lines.push(sanitizeCell(`  ${a.agent_id.padEnd(idW)}  ${a.task_id.padEnd(taskW)}  ${String(a.tool_calls).padStart(5)}  ${tok.padEnd(15)}  ${cost.padEnd(9)}  ${tool}`).slice(0, 200));
  }
  return lines;
}

/**
 * `status --watch`: one JSON document per line per change under --as-json;
 * on a terminal the screen is redrawn in place, otherwise each change is
 * printed as a block. Ends when the run ends, or on SIGINT/SIGTERM (exit 0).
 */
function watch(sddDir: string | undefined, json: boolean): Promise<number> {
  return withOwnSignalHandling(async (abort) => {
    const tty = !json && isTerminal(1);
    let shown = 0;
    await watchLiveRun(
      sddDir ?? ".sdd",
      async (snap) => {
        if (json) await writeStdout(JSON.stringify({ ok: true, at: Date.now() / 1000, ...snap }) + "\n");
        else {
          // On a terminal each line fits its width, so the redraw below goes back exactly as many rows.
          const lines = tty ? renderLive(snap).map((l) => truncateCells(l, terminalWidth() - 1)) : renderLive(snap);
          // Redraw in place: back to the first line of the last screen, erase to the end.
          await writeStdout((tty && shown > 0 ? `\x1b[${shown}F\x1b[J` : shown > 0 ? "\n" : "") + lines.map((l) => l + "\n").join(""));
          shown = lines.length;
        }
        if (stdoutClosed() || outputFailure()) abort.abort();
      },
      abort.signal,
    );
    return 0;
  });
}

export default defineCliCommand({
  docs: {
    json: [
      jsonDoc({ example: "bernstein status" }, [
        ["ok", "true", "The status was read (a server that is down is not an error)"],
        ["server", "object", "The task server: {reachable, url, pid, source, error}"],
        ["run", "object | null", "The run the server is serving: run_id, goal, cost, counts, orchestrator …"],
        ["tasks", "object | null", "Its tasks by status"],
        ["session", "object", "The saved session: {status, resumable, path, saved_at, age_seconds, goal, completed, pending, open, cost_spent, warning}"],
      ]),
    ],
  },
  meta: { name: "status", description: "Show the task server, the run, its tasks and whether a resumable session exists" },
  args: {
    ...sddDirArgs,
    "stale-after": { type: "string", description: "Minutes after which a saved session counts as stale (default 30)" },
    watch: { type: "boolean", description: "Follow the run in progress: agents, their task, last tool call, tokens and cost so far, redrawn on each change (--as-json: one document per line per change); ends with the run or on Ctrl-C" },
  },
  async run({ args, json }) {
    if (args.watch) {
      if (args["stale-after"] !== undefined) throw new UsageError("--stale-after applies to the session summary, not to --watch", "flag_not_applicable");
      return watch(args["sdd-dir"], json);
    }
    const report = await collectStatus(args["sdd-dir"], { staleAfterMinutes: parseStaleAfter(args["stale-after"]) });
    if (json) await printJson({ ok: true, ...report });
    else await printLines(...render(report));
    return 0;
  },
});
