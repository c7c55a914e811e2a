/**
 * Tiny project directories for e2e runs: a bernstein.yaml, a plan, and a
 * shell agent that appends `start`/`end` lines to a shared ledger, so tests
 * can count executions and prove overlap from the order of the lines.
 */
import { Database } from "bun:sqlite";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { binPath } from "../../helpers/cli.ts";
import { parse } from "../../../src/pyjson/parse.ts";

const made: string[] = [];

export function cleanupProjects(): void {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
}

/**
 * The ledger agent. Env knobs (set per task through the plan's description
 * is not possible, so they come from bernstein.yaml agent.env or the test):
 *   AGENT_SLEEP  seconds to work (default 0.05)
 *   AGENT_COST   cost_usd reported (default 0.01)
 *   FAIL_TASKS   space-separated task ids that always exit 1
 */
export const LEDGER_AGENT = `#!/bin/sh
ts() { date +%s%N 2>/dev/null || date +%s000000000; }
echo "start $BERNSTEIN_TASK_ID $BERNSTEIN_ATTEMPT $BERNSTEIN_RUN_ID $BERNSTEIN_AGENT_ID $(ts)" >> "$LEDGER"
cat > /dev/null
sleep "\${AGENT_SLEEP:-0.05}"
for t in $FAIL_TASKS; do
  if [ "$t" = "$BERNSTEIN_TASK_ID" ]; then echo "cannot do $t" >&2; exit 1; fi
done
echo "end $BERNSTEIN_TASK_ID $BERNSTEIN_ATTEMPT $BERNSTEIN_RUN_ID $BERNSTEIN_AGENT_ID $(ts)" >> "$LEDGER"
echo "working on $BERNSTEIN_TASK_TITLE with model [$BERNSTEIN_MODEL]"
echo "{\\"result_summary\\": \\"did $BERNSTEIN_TASK_ID with [$BERNSTEIN_MODEL]\\", \\"cost_usd\\": \${AGENT_COST:-0.01}}"
`;

export interface ProjectOptions {
  /** Plan tasks (YAML text or objects). */
  tasks?: { id: string; title?: string; depends_on?: string[]; model?: string; role?: string; priority?: number }[];
  /** Extra top-level YAML appended to bernstein.yaml. */
  config?: string;
  /** agent.env entries. */
  agentEnv?: Record<string, string>;
  goal?: string;
}

export interface Project {
  dir: string;
  sddDir: string;
  ledger: string;
  planPath: string;
}

function yamlList(items: string[]): string {
  return `[${items.map((s) => JSON.stringify(s)).join(", ")}]`;
}

export function makeProject(opts: ProjectOptions = {}): Project {
  const dir = mkdtempSync(join(tmpdir(), "bern-run-"));
  made.push(dir);
  const ledger = join(dir, "ledger.txt");
  writeFileSync(ledger, "");
  writeFileSync(join(dir, "agent.sh"), LEDGER_AGENT);
  chmodSync(join(dir, "agent.sh"), 0o755);
  const env = { LEDGER: ledger, ...opts.agentEnv };
  const config = [
    ...(opts.goal !== undefined ? [`goal: ${JSON.stringify(opts.goal)}`] : []),
    "agent:",
    "  adapter: script",
    "  script: agent.sh",
    "  timeout_s: 30",
    "  env:",
    ...Object.entries(env).map(([k, v]) => `    ${k}: ${JSON.stringify(v)}`),
    opts.config ?? "",
  ].join("\n");
  writeFileSync(join(dir, "bernstein.yaml"), config + "\n");
  const tasks = opts.tasks ?? [{ id: "T1" }, { id: "T2" }, { id: "T3", depends_on: ["T1"] }];
  const plan = tasks
    .map((t) =>
      [
        `- id: ${t.id}`,
        `  title: ${JSON.stringify(t.title ?? `task ${t.id}`)}`,
        ...(t.role ? [`  role: ${t.role}`] : []),
        ...(t.model ? [`  model: ${t.model}`] : []),
        ...(t.priority !== undefined ? [`  priority: ${t.priority}`] : []),
        ...(t.depends_on ? [`  depends_on: ${yamlList(t.depends_on)}`] : []),
      ].join("\n"),
    )
    .join("\n");
  const planPath = join(dir, "plan.yaml");
  writeFileSync(planPath, plan + "\n");
  return { dir, sddDir: join(dir, ".sdd"), ledger, planPath };
}

export interface LedgerLine {
  kind: "start" | "end";
  task: string;
  attempt: number;
  run: string;
  agent: string;
  ns: bigint;
}

export function readLedger(p: Project): LedgerLine[] {
  return readFileSync(p.ledger, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const [kind, task, attempt, run, agent, ns] = l.split(" ");
      return { kind: kind as "start" | "end", task: task!, attempt: Number(attempt), run: run!, agent: agent!, ns: BigInt(ns ?? "0") };
    });
}

/** Spawn `bernstein run` in the project (not awaited). */
export function spawnRun(p: Project, args: string[] = [], env: Record<string, string> = {}) {
  return Bun.spawn([binPath(), "run", "plan.yaml", "--port", "0", ...args], {
    cwd: p.dir,
    env: { ...process.env, NO_COLOR: "1", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
}

export async function runToEnd(p: Project, args: string[] = [], env: Record<string, string> = {}) {
  const proc = spawnRun(p, args, env);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** Tasks as stored (read-only look into the SQLite store). */
export function storedTasks(p: Project): { id: string; status: string; attempts: number; completed_at: number | null; result_summary: string | null; model: string | null; fail_reason: string | null }[] {
  const db = new Database(join(p.sddDir, "runtime", "tasks.db"), { readonly: true });
  try {
    return db.query("SELECT id, status, attempts, completed_at, result_summary, model, fail_reason FROM tasks ORDER BY seq").all() as any;
  } finally {
    db.close();
  }
}

export function runIds(p: Project): string[] {
  const d = join(p.sddDir, "runs");
  return existsSync(d) ? readdirSync(d).sort() : [];
}

/** Events of a run journal as [event, payload Map] pairs (py-json parsed). */
export function journalEvents(p: Project, runId: string): Map<string, any>[] {
  const path = join(p.sddDir, "runs", runId, "journal.jsonl");
  // A run killed between creating its directory and its first row has no
  // journal yet: it recorded no events.
  if (!existsSync(path)) return [];
  const text = readFileSync(path, "utf8");
  const rows: Map<string, any>[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      const v = parse(line);
      if (v instanceof Map) rows.push(v as Map<string, any>);
    } catch {
      /* torn tail of a killed run */
    }
  }
  return rows;
}

export function eventNames(rows: Map<string, any>[]): string[] {
  return rows.map((r) => String(r.get("event")));
}

export function readSession(p: Project): any {
  return JSON.parse(readFileSync(join(p.sddDir, "runtime", "session.json"), "utf8"));
}

export async function waitFor<T>(fn: () => T | null | undefined | false, timeoutMs = 15000, what = "condition"): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}
