/**
 * The claude, codex and gemini adapters against the REAL CLIs (pinned in
 * test/real-clis/package.json), offline: each CLI talks to the fake
 * provider API (test/helpers/fake-provider.ts) inside a loopback-only
 * network namespace, under strace, through the compiled binary with the
 * adapters' default settings (only the endpoint is configured).
 *
 * The CLIs are heavy (a node or native process of ~1 s each), so each
 * `bernstein run` here shares its agents between several assertions:
 *   run A  a file-writing task, a 400, a 401 and a hang, side by side;
 *   run B  a 1 MB multi-byte goal planned by the manager agent into two tasks;
 *   run C  (codex, gemini) budget_usd stops a run priced from models.prices;
 *   run D  (claude) `bernstein replay <task> --model <other>` through the CLI;
 *   run E  failures by class: a 401 and a 400 fail at once (auth, invalid_request),
 *          a 429 (Retry-After) and a 500 are retried after a back-off and done;
 *   run F  permission_mode read_only: the refused write is a denied step, the task fails
 *          permission_denied (claude, codex) or no_write_tool (gemini);
 *   run G  a git work tree: a no-op "done" fails no_change, a read_only task passes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { binPath } from "../../helpers/cli.ts";
import { available } from "../../helpers/require-service.ts";
import { AgentWorld, externalAddresses, netnsAvailable, realClisInstalled, REAL_CLI_BIN, straceAvailable, type RealCli, type WorldResult } from "../../helpers/agent-world.ts";
import { FAKE_400_MESSAGE, type LoggedRequest } from "../../helpers/fake-provider.ts";
import { parse } from "../../../src/pyjson/parse.ts";

const RUN = available("real-clis", realClisInstalled, `the agent CLIs are not installed in ${REAL_CLI_BIN} (npm ci --prefix test/real-clis)`);
// The connection audit must run in CI; elsewhere it is skipped with a warning when strace is missing.
const AUDIT = RUN && available("strace", straceAvailable, "strace is not installed: external connection attempts cannot be counted");
if (RUN && !netnsAvailable) console.warn("real-clis: no loopback-only network namespace here (unshare -n needs root): the CLIs run on the host network");

const MODELS: Record<RealCli, string> = { claude: "claude-fake-1", codex: "gpt-fake-1", gemini: "gemini-fake-1" };
const TOOL: Record<RealCli, string> = { claude: "Write", codex: "shell", gemini: "write_file" };
const API: Record<RealCli, LoggedRequest["api"]> = { claude: "anthropic", codex: "openai", gemini: "gemini" };
/** Why each CLI's read-only mode refuses the write: claude and codex deny it, gemini offers no tool that writes. */
const REFUSAL: Record<RealCli, string> = { claude: "permission_denied", codex: "permission_denied", gemini: "no_write_tool" };
/** $10 / $30 per million input / output tokens: one fake answer (1200 in, 200 of them cached, 300 out) costs $0.021. */
const PRICE = "{input_usd_per_mtok: 10, output_usd_per_mtok: 30}";

let world: AgentWorld;
const made: string[] = [];

beforeAll(async () => {
  if (RUN) world = await new AgentWorld().start();
});
afterAll(async () => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
  if (world) await world.stop();
});

interface Project {
  dir: string;
  sdd: string;
  env: Record<string, string>;
}

/** A project for `cli`: `agent` lines go under agent:, `top` lines after models: (indented lines continue models:). */
function project(cli: RealCli, cfg: { agent?: string; top?: string; retries?: number | null }, plan: string | null): Project {
  const root = mkdtempSync(join(tmpdir(), `bern-real-${cli}-`));
  made.push(root);
  const dir = join(root, "work");
  const home = join(root, "home");
  const tmp = join(root, "tmp");
  for (const d of [dir, home, tmp]) mkdirSync(d);
  const yaml = [
    "agent:",
    `  adapter: ${cli}`,
    `  base_url: ${world.url}`,
    "  api_key_env: FAKE_PROVIDER_KEY",
    ...(cfg.agent ? [cfg.agent] : []),
    ...(cfg.retries === undefined ? ["max_retries: 0"] : cfg.retries === null ? [] : [`max_retries: ${cfg.retries}`]),
    "models:",
    `  default: ${MODELS[cli]}`,
    cfg.top ?? "",
  ].join("\n");
  writeFileSync(join(dir, "bernstein.yaml"), yaml + "\n");
  if (plan !== null) writeFileSync(join(dir, "plan.yaml"), plan);
  const env = {
    PATH: `${REAL_CLI_BIN}:${process.env.PATH}`,
    HOME: home,
    TMPDIR: tmp,
    FAKE_PROVIDER_KEY: world.apiKey,
    // No CLAUDE_CODE_MAX_RETRIES here: the claude adapter sets it (run E shows a 401 fails at once).
  };
  return { dir, sdd: join(dir, ".sdd"), env };
}

function task(id: string, title: string, description: string, extra = ""): string {
  return `- id: ${id}\n  title: ${JSON.stringify(title)}\n  description: ${JSON.stringify(description)}\n${extra}`;
}

function tasks(p: Project): Record<string, { status: string; result_summary: string | null; fail_reason: string | null; cost_usd: number; attempts: number; claimed_at: number; updated_at: number }> {
  const db = new Database(join(p.sdd, "runtime", "tasks.db"), { readonly: true });
  try {
    const rows = db.query("SELECT id, status, result_summary, fail_reason, cost_usd, attempts, claimed_at, updated_at FROM tasks").all() as any[];
    return Object.fromEntries(rows.map((r) => [r.id, r]));
  } finally {
    db.close();
  }
}

function events(p: Project): Map<string, any>[] {
  const [run] = readdirSync(join(p.sdd, "runs")).sort().reverse();
  return readFileSync(join(p.sdd, "runs", run!, "journal.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => parse(l) as Map<string, any>);
}

/** A py-json number as a JS number. */
const n = (x: any): number => (typeof x === "number" ? x : x.toNumber());
const eventFor = (rows: Map<string, any>[], name: string, taskId: string) => rows.find((r) => r.get("event") === name && r.get("task_id") === taskId);

function steps(p: Project, agentId: string): Map<string, any>[] {
  return readFileSync(join(p.sdd, "runtime", "journal", agentId, "000000.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => parse(l) as Map<string, any>);
}

function bernsteinIn(p: Project, args: string[]): Promise<WorldResult> {
  return world.run([binPath(), ...args], { cwd: p.dir, env: p.env });
}

/** What every run must show: no address outside loopback was ever tried, and every request reached the fake API, with the key. */
async function assertClosedWorld(r: WorldResult, cli: RealCli, since: number): Promise<LoggedRequest[]> {
  if (AUDIT) {
    expect(r.addresses.length).toBeGreaterThan(0); // the audit saw the CLIs' connections to the fake API
    expect(externalAddresses(r.addresses)).toEqual([]);
    expect(r.addresses).toContain(`127.0.0.1:${world.port}`);
  }
  const reqs = (await world.requests()).slice(since);
  expect(reqs.length).toBeGreaterThan(0);
  for (const q of reqs) {
    expect(q.api).toBe(API[cli]);
    expect(q.authed).toBe(true);
  }
  return reqs;
}

/** Make `dir` a git work tree with everything committed (the agents then start from a clean tree). */
function gitCommitAll(dir: string): void {
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: dir, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" };
  for (const args of [["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]]) {
    const g = Bun.spawnSync(["git", ...args], { cwd: dir, env, stdout: "pipe", stderr: "pipe" });
    if (g.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${g.stderr.toString()}`);
  }
}

function agentOf(rows: Map<string, any>[], taskId: string): string {
  return eventFor(rows, "task_claimed", taskId)!.get("agent_id");
}

for (const cli of ["claude", "codex", "gemini"] as const) {
  describe.skipIf(!RUN)(`${cli} (real CLI) against the fake provider API`, () => {
    test(`run A: a file-writing task is done and the file exists; 400 and 401 fail with the provider's reason; a hang times out and leaves no process`, async () => {
      const p = project(
        cli,
        { agent: "  timeout_s: 15", top: "max_agents: 4" },
        [
          task("W", "write the greeting", `FAKE_SCENARIO=write_file FAKE_FILE=written.txt FAKE_CONTENT=hello-from-${cli}`),
          task("E", "provoke a 400", "FAKE_SCENARIO=error_400"),
          task("U", "provoke a 401", "FAKE_SCENARIO=error_401"),
          task("H", "hang forever", "FAKE_SCENARIO=hang"),
        ].join(""),
      );
      const before = (await world.requests()).length;
      const r = await bernsteinIn(p, ["run", "plan.yaml", "--port", "0", "--as-json"]);
      expect(r.code).toBe(1);
      expect(JSON.parse(r.stdout)).toMatchObject({ outcome: "failed", tasks: { done: 1, failed: 3 } });
      expect(world.leftovers()).toEqual([]);
      const reqs = await assertClosedWorld(r, cli, before);
      expect(new Set(reqs.map((q) => q.model))).toEqual(new Set([MODELS[cli]]));

      const t = tasks(p);
      // the file-writing task: done, and the file is there
      expect(t.W!.status).toBe("done");
      expect(readFileSync(join(p.dir, "written.txt"), "utf8")).toBe(`hello-from-${cli}\n`);
      expect(t.W!.result_summary).toBe("wrote written.txt");
      const rows = events(p);
      const usage = eventFor(rows, "agent_usage", "W")!;
      expect(n(usage.get("output_tokens"))).toBe(600); // two fake answers of 300
      expect(n(usage.get("input_tokens"))).toBeGreaterThan(0);
      if (cli === "claude") {
        expect(usage.get("cost_source")).toBe("cli");
        expect(n(usage.get("cost_usd"))).toBeGreaterThan(0);
      } else {
        // no cost from the CLI and no price for the model: said, with the tokens
        expect(usage.get("cost_source")).toBe("unknown");
      }
      expect(usage.get("session_id")).toEqual(expect.any(String));
      // the step journal: the tool call the CLI reported, then the invocation with tokens and cost
      const agentW = agentOf(rows, "W");
      const s = steps(p, agentW);
      expect(s.map((x) => x.get("tool_call").get("name"))).toEqual([TOOL[cli], cli]);
      expect(s[0]!.get("tool_call").get("input")).toContain("written.txt");
      const result = s[1]!.get("tool_result") as Map<string, any>;
      expect(result.get("cost_source")).toBe(usage.get("cost_source"));
      expect(n(result.get("tokens").get("output"))).toBe(600);
      // the agent view names the tool
      const view = await bernsteinIn(p, ["replay", agentW]);
      expect(view.code).toBe(0);
      expect(view.stdout).toMatch(new RegExp(`\\b${TOOL[cli]}\\s*$`, "m"));
      expect(view.stdout).not.toContain("<tool>");
      // the task trace: the tool call with its input and outcome, the file written (read from the work tree), tokens, model
      const traceW = JSON.parse(readFileSync(join(p.sdd, "traces", readdirSync(join(p.sdd, "traces")).find((n) => /^W-\d{8}T\d{9}Z\.json$/.test(n))!), "utf8"));
      const toolSteps = traceW.steps.filter((x: any) => x.tool_call);
      expect(toolSteps.map((x: any) => x.tool_call.name)).toEqual([TOOL[cli]]);
      expect(toolSteps[0].tool_call.input).toContain("written.txt");
      expect(toolSteps[0].tool_call.status).toBe("ok");
      expect(traceW.files_changed).toContain("written.txt");
      expect(traceW.steps.at(-1).files).toContain("written.txt");
      expect(traceW.tokens.output).toBe(600);
      expect(traceW.model).toBe(MODELS[cli]);
      expect(traceW.cost_source).toBe(usage.get("cost_source"));

      // 400: the provider's own message is the reason, in the task, the journal, the step and the trace
      expect(t.E!.status).toBe("failed");
      expect(t.E!.fail_reason).toContain(FAKE_400_MESSAGE);
      expect(eventFor(rows, "agent_failed", "E")!.get("reason")).toContain(FAKE_400_MESSAGE);
      expect(steps(p, agentOf(rows, "E")).at(-1)!.get("tool_result").get("result_summary")).toContain(FAKE_400_MESSAGE);
      const trace = readdirSync(join(p.sdd, "traces")).find((n) => /^E-\d{8}T\d{9}Z\.json$/.test(n))!;
      expect(readFileSync(join(p.sdd, "traces", trace), "utf8")).toContain(FAKE_400_MESSAGE);
      // 401: failed with the CLI's reason (never "done")
      expect(t.U!.status).toBe("failed");
      expect(t.U!.fail_reason).toContain("401");
      // the hang: timed out, killed with everything it started
      expect(t.H!.status).toBe("failed");
      expect(eventFor(rows, "task_verification_failed", "H")!.get("failed_signals")).toEqual(["timeout"]);
      // the attempts' private directories (prompt file, generated homes) are gone
      expect(readdirSync(join(p.sdd, "runtime", "agents"))).toEqual([]);
    }, 120_000);

    test("run B: a goal of 1 MB of multi-byte text is planned by the manager agent and both planned tasks are done", async () => {
      const unit = "Zeichenkette ÄÖÜ € 漢字 🚀 ";
      const body = unit.repeat(Math.ceil((1024 * 1024) / Buffer.byteLength(unit)));
      const goal = `FAKE_MARK=goal-start ${body} FAKE_MARK=goal-end`;
      expect(Buffer.byteLength(goal)).toBeGreaterThan(1024 * 1024);
      const p = project(cli, { top: `goal: ${JSON.stringify(goal)}` }, null);
      const before = (await world.requests()).length;
      const r = await bernsteinIn(p, ["run", "--port", "0", "--as-json"]);
      expect(r.stderr).not.toContain("E2BIG");
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ outcome: "completed", tasks: { done: 3, failed: 0 } });
      const reqs = await assertClosedWorld(r, cli, before);
      // the whole prompt arrived: both ends of the goal in one request of more than 1 MB
      const whole = reqs.filter((q) => q.marks.includes("goal-start") && q.marks.includes("goal-end"));
      expect(whole.length).toBeGreaterThan(0);
      expect(Math.max(...whole.map((q) => q.bytes))).toBeGreaterThan(1024 * 1024);
      const rows = events(p);
      const planned = rows.find((x) => x.get("event") === "plan_loaded")!;
      expect(planned.get("source")).toBe("manager");
      expect(planned.get("task_ids")).toEqual(["P1", "P2"]);
      expect(tasks(p).P1!.status).toBe("done");
      expect(readFileSync(join(p.dir, "parser.txt"), "utf8")).toBe("parser\n");
    }, 180_000);

    test("run E: 401 fails at once as auth, 400 as invalid_request (not retried); a 429 with Retry-After and a 500 are retried after a wait and done", async () => {
      const once = crypto.randomUUID();
      const p = project(
        cli,
        { agent: "  timeout_s: 50", top: "max_agents: 4", retries: null /* the default, 2 */ },
        [
          task("U", "provoke a 401", "FAKE_SCENARIO=error_401"),
          task("E", "provoke a 400", "FAKE_SCENARIO=error_400"),
          task("R", "rate limited once", `FAKE_SCENARIO=error_429_once FAKE_RETRY_AFTER=3 FAKE_ONCE=${once} FAKE_MARK=rate-${cli}`),
          task("S", "server error once", `FAKE_SCENARIO=error_500_once FAKE_ONCE=${once} FAKE_MARK=server-${cli}`),
        ].join(""),
      );
      const before = (await world.requests()).length;
      const started = Date.now();
      const r = await bernsteinIn(p, ["run", "plan.yaml", "--port", "0", "--as-json"]);
      const took = Date.now() - started;
      expect(r.code).toBe(1);
      const summary = JSON.parse(r.stdout);
      expect(summary).toMatchObject({ outcome: "failed", tasks: { done: 2, failed: 2 } });
      expect(summary.detail).toMatch(/^some tasks failed for good: (U \(auth\), E \(invalid_request\)|E \(invalid_request\), U \(auth\))$/);
      expect(world.leftovers()).toEqual([]);
      const reqs = await assertClosedWorld(r, cli, before);
      const rows = events(p);
      const t = tasks(p);
      const spawnedFor = (id: string) => rows.filter((x) => x.get("event") === "task_claimed" && x.get("task_id") === id).length;

      // 401: one attempt, reason auth, the CLI's message; one request reached the API (no retries inside the CLI)
      expect(t.U!.status).toBe("failed");
      expect(t.U!.fail_reason).toMatch(/^auth: /);
      expect(t.U!.fail_reason).toContain("401");
      expect(spawnedFor("U")).toBe(1);
      expect(eventFor(rows, "task_failed", "U")!.get("reason")).toMatch(/^auth: /);
      const failedU = eventFor(rows, "agent_failed", "U");
      if (failedU) expect(failedU.get("failure_class")).toBe("auth");
      expect(reqs.filter((q) => q.scenario === "error_401").length).toBe(1);
      expect(t.U!.attempts).toBe(1);
      expect(t.U!.updated_at - t.U!.claimed_at).toBeLessThan(30); // seconds, not minutes

      // 400: one attempt, reason invalid_request, the provider's message
      expect(t.E!.status).toBe("failed");
      expect(t.E!.fail_reason).toMatch(/^invalid_request: /);
      expect(t.E!.fail_reason).toContain(FAKE_400_MESSAGE);
      expect(spawnedFor("E")).toBe(1);
      expect(rows.some((x) => x.get("event") === "task_retried" && (x.get("task_id") === "E" || x.get("task_id") === "U"))).toBe(false);
      // (claude itself re-sends a 400 a few times within one attempt; bounded)
      expect(reqs.filter((q) => q.scenario === "error_400").length).toBeLessThanOrEqual(10);

      // 429 then success: retried once after a wait, done; gemini shows the Retry-After (3 s) and it is honoured
      expect(t.R!.status).toBe("done");
      expect(spawnedFor("R")).toBe(2);
      const retriedR = eventFor(rows, "task_retried", "R")!;
      expect(retriedR.get("failure_class")).toBe("rate_limited");
      const rateReqs = reqs.filter((q) => q.marks.includes(`rate-${cli}`) && q.scenario !== "count_tokens");
      expect(rateReqs[0]!.scenario).toBe("error_429");
      const gap = rateReqs.at(-1)!.at - rateReqs[0]!.at;
      if (cli === "gemini") {
        expect(n(retriedR.get("delay_s"))).toBeGreaterThanOrEqual(3);
        expect(gap).toBeGreaterThanOrEqual(3000);
      } else {
        expect(n(retriedR.get("delay_s"))).toBeGreaterThanOrEqual(1);
        expect(gap).toBeGreaterThanOrEqual(1000);
      }

      // 500 then success: retried after a back-off, done
      expect(t.S!.status).toBe("done");
      expect(spawnedFor("S")).toBe(2);
      expect(eventFor(rows, "task_retried", "S")!.get("failure_class")).toBe("server_error");
      expect(n(eventFor(rows, "task_retried", "S")!.get("delay_s"))).toBeGreaterThanOrEqual(1);
      expect(took).toBeLessThan(60_000);
    }, 90_000);

    test(`run F: under permission_mode read_only the refused write is a denied step and the task fails ${REFUSAL[cli]}, not done`, async () => {
      const p = project(cli, { agent: "  permission_mode: read_only\n  timeout_s: 30" }, task("W", "write the greeting", `FAKE_SCENARIO=write_file FAKE_FILE=written.txt FAKE_CONTENT=hello-from-${cli}`));
      const before = (await world.requests()).length;
      const r = await bernsteinIn(p, ["run", "plan.yaml", "--port", "0", "--as-json"]);
      expect(r.code).toBe(1);
      const summary = JSON.parse(r.stdout);
      expect(summary).toMatchObject({ outcome: "failed", tasks: { done: 0, failed: 1 }, failures: [{ task_id: "W", signals: [REFUSAL[cli]] }] });
      await assertClosedWorld(r, cli, before);
      expect(existsSync(join(p.dir, "written.txt"))).toBe(false);
      const t = tasks(p);
      expect(t.W!.status).toBe("failed");
      expect(t.W!.fail_reason).toMatch(new RegExp(`^${REFUSAL[cli]}: `));
      // the agent's claim ("wrote written.txt") is not the reason
      expect(t.W!.fail_reason).not.toContain("wrote written.txt");
      // the refused call reached the step journal with its status
      const s = steps(p, agentOf(events(p), "W"));
      expect(s.map((x) => x.get("tool_call").get("name"))).toEqual([TOOL[cli], cli]);
      expect(s[0]!.get("tool_call").get("input")).toContain("written.txt");
      expect(s[0]!.get("tool_result").get("status")).toBe("denied");
      expect(s[0]!.get("tool_result").get("reason")).toBe(REFUSAL[cli]);
      expect(s[1]!.get("tool_result").get("failed_signals")).toEqual([REFUSAL[cli]]);
      // the run table's DETAIL shows the reason
      const table = await bernsteinIn(p, ["replay", summary.run_id]);
      expect(table.code).toBe(0);
      expect(table.stdout).toMatch(new RegExp(`task_failed\\s+\\S+\\s+W\\s+${REFUSAL[cli]}: `));
    }, 90_000);

    test("run G: in a git work tree a no-op 'done' fails no_change, a read_only task passes unchanged, a write is done", async () => {
      const p = project(
        cli,
        { agent: "  timeout_s: 30", top: "max_agents: 1" },
        [task("N", "claims a change", "answer briefly"), task("R", "review only", "answer briefly", "  read_only: true\n"), task("W", "write the greeting", `FAKE_SCENARIO=write_file FAKE_FILE=written.txt FAKE_CONTENT=hello-from-${cli}`)].join(""),
      );
      gitCommitAll(p.dir);
      const before = (await world.requests()).length;
      const r = await bernsteinIn(p, ["run", "plan.yaml", "--port", "0", "--as-json"]);
      expect(r.code).toBe(1);
      expect(JSON.parse(r.stdout)).toMatchObject({ outcome: "failed", tasks: { done: 2, failed: 1 }, failures: [{ task_id: "N", signals: ["no_change"] }] });
      await assertClosedWorld(r, cli, before);
      const t = tasks(p);
      expect(t.N!.status).toBe("failed");
      expect(t.N!.fail_reason).toMatch(/^no_change: the agent ended without an error but the work tree is unchanged/);
      expect(t.N!.fail_reason).not.toContain(`answered by ${MODELS[cli]}`);
      expect(t.R!.status).toBe("done");
      expect(t.R!.result_summary).toBe(`answered by ${MODELS[cli]}`);
      expect(t.W!.status).toBe("done");
      expect(readFileSync(join(p.dir, "written.txt"), "utf8")).toBe(`hello-from-${cli}\n`);
    }, 90_000);

    if (cli !== "claude") {
      test("run C: budget_usd stops a run whose cost is priced from models.prices", async () => {
        const p = project(
          cli,
          { top: `  prices:\n    ${MODELS[cli]}: ${PRICE}\nbudget_usd: 0.01\nmax_agents: 1` },
          [task("B1", "first", "answer briefly", "  priority: 0\n"), task("B2", "second", "answer briefly"), task("B3", "third", "answer briefly")].join(""),
        );
        const before = (await world.requests()).length;
        const r = await bernsteinIn(p, ["run", "plan.yaml", "--port", "0", "--as-json"]);
        expect(r.code).toBe(1);
        const summary = JSON.parse(r.stdout);
        expect(summary).toMatchObject({ error: "budget_exhausted", outcome: "budget_exhausted", tasks: { done: 1, open: 2 } });
        expect(summary.cost_usd).toBeCloseTo(0.021, 6);
        await assertClosedWorld(r, cli, before);
        const usage = events(p).find((x) => x.get("event") === "agent_usage")!;
        expect(usage.get("cost_source")).toBe("price_table");
        expect(n(usage.get("cost_usd"))).toBeCloseTo(0.021, 9);
        expect(tasks(p).B1!.cost_usd).toBeCloseTo(0.021, 9);
      }, 120_000);
    }
  });
}

describe.skipIf(!RUN)("replay through a real CLI", () => {
  test("run D: `bernstein replay <task> --model <other>` re-runs a traced task through claude and shows the diff", async () => {
    const p = project("claude", {}, task("R1", "answer in three lines", "FAKE_SCENARIO=multiline"));
    const before = (await world.requests()).length;
    const run = world.spawn([binPath(), "run", "plan.yaml", "--port", "0", "--keep-alive"], { cwd: p.dir, env: p.env });
    const deadline = Date.now() + 60_000;
    while (!(existsSync(join(p.sdd, "runtime", "tasks.db")) && tasks(p).R1?.status === "done")) {
      if (Date.now() > deadline) throw new Error("R1 did not finish");
      await Bun.sleep(200);
    }
    expect(tasks(p).R1!.result_summary).toBe("answered on three lines by claude-fake-1");
    const replay = await bernsteinIn(p, ["replay", "R1", "--model", "claude-fake-2", "--timeout", "60"]);
    const stop = await bernsteinIn(p, ["stop"]);
    const r = await run.finished();
    expect(stop.code).toBe(0);
    expect(replay.code).toBe(0);
    expect(replay.stdout).toContain("-answered on three lines by claude-fake-1");
    expect(replay.stdout).toContain("+answered on three lines by claude-fake-2");
    const reqs = await assertClosedWorld(r, "claude", before);
    expect(reqs.map((q) => q.model)).toContain("claude-fake-2");
    if (AUDIT) expect(externalAddresses(replay.addresses)).toEqual([]);
  }, 120_000);
});
