import { jsonFields } from "../../json-fields.ts";
import { UsageError } from "../../errors/index.ts";
import { paint } from "../../render/ansi.ts";
import { costLabel } from "../../render/cost.ts";
import { collectStatus, type SessionSummary, type StatusReport } from "../../session/status.ts";
import { defineCliCommand } from "../command.ts";
import { printJson, printLines } from "../output.ts";
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

export default defineCliCommand({
  docs: {
    json: [
    {
      example: "bernstein status",
      fields: jsonFields([
        ["ok", "true", "The status was read (a server that is down is not an error)"],
        ["server", "object", "The task server: {reachable, url, pid, source, error}"],
        ["run", "object | null", "The run the server is serving: run_id, goal, cost, counts, orchestrator …"],
        ["tasks", "object | null", "Its tasks by status"],
        ["session", "object", "The saved session: {status, resumable, path, saved_at, age_seconds, goal, completed, pending, open, cost_spent, warning}"],
      ]),
    },
    ],
  },
  meta: { name: "status", description: "Show the task server, the run, its tasks and whether a resumable session exists" },
  args: {
    ...sddDirArgs,
    "stale-after": { type: "string", description: "Minutes after which a saved session counts as stale (default 30)" },
  },
  async run({ args, json }) {
    const report = await collectStatus(args["sdd-dir"], { staleAfterMinutes: parseStaleAfter(args["stale-after"]) });
    if (json) await printJson({ ok: true, ...report });
    else await printLines(...render(report));
    return 0;
  },
});
