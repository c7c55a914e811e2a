/**
 * Agent-level fast resume and adapters per role, with the REAL claude,
 * codex and gemini CLIs (all three resume headless in their pinned versions) (pinned in test/real-clis) against the fake
 * provider API (test/helpers/fake-provider.ts), through the compiled binary:
 *
 *  - stop a task during its agent's second tool call (the fake's `resumable`
 *    scenario hangs there), run again: the same CLI session continues (the
 *    fake is sent the earlier turns back), the first file is not written a
 *    second time, the run journal says `task_resumed`, the step journal of
 *    the stopped agent goes on (chain intact) and the provider serves fewer
 *    tokens than a redo with `--fresh-agents` (which writes the file again);
 *  - the same in a git project (worktree isolation): the resumed session works on a checkout of
 *    the stopped attempt's kept branch, at the same path (gemini keys its sessions by folder), so
 *    the first file is there; one merge lands both files;
 *  - a session that is gone falls back to a fresh attempt, the reason journaled;
 *  - `roles:` a plan whose manager is claude and whose workers are codex and gemini.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { binPath } from "../../helpers/cli.ts";
import { available } from "../../helpers/require-service.ts";
import { AgentWorld, realClisInstalled, REAL_CLI_BIN, type RealCli, type WorldResult } from "../../helpers/agent-world.ts";
import type { LoggedRequest } from "../../helpers/fake-provider.ts";
import { parse } from "../../../src/pyjson/parse.ts";
import { git } from "../../helpers/git.ts";

const RUN = available("real-clis", realClisInstalled, `the agent CLIs are not installed in ${REAL_CLI_BIN} (npm ci --prefix test/real-clis)`);
const MODELS: Record<RealCli, string> = { claude: "claude-fake-1", codex: "gpt-fake-1", gemini: "gemini-fake-1" };
/** What the fake provider bills per answer (TOKENS in fake-provider.ts): 1200 in, 300 out. */
const TOKENS_PER_ANSWER = 1500;

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
  home: string;
  env: Record<string, string>;
}

function project(cli: RealCli, extra: string, plan: string | null): Project {
  const root = mkdtempSync(join(tmpdir(), `bern-resume-${cli}-`));
  made.push(root);
  const dir = join(root, "work");
  const home = join(root, "home");
  const tmp = join(root, "tmp");
  for (const d of [dir, home, tmp]) mkdirSync(d);
  const yaml = ["agent:", `  adapter: ${cli}`, `  base_url: ${world.url}`, "  api_key_env: FAKE_PROVIDER_KEY", "  timeout_s: 60", "max_retries: 0", "models:", `  default: ${MODELS[cli]}`, extra].join("\n");
  writeFileSync(join(dir, "bernstein.yaml"), yaml + "\n");
  if (plan !== null) writeFileSync(join(dir, "plan.yaml"), plan);
  return { dir, sdd: join(dir, ".sdd"), home, env: { PATH: `${REAL_CLI_BIN}:${process.env.PATH}`, HOME: home, TMPDIR: tmp, FAKE_PROVIDER_KEY: world.apiKey } };
}

function bernsteinIn(p: Project, args: string[]): Promise<WorldResult> {
  return world.run([binPath(), ...args], { cwd: p.dir, env: p.env });
}

/** The run journals of a project, oldest first, each as its rows. */
function runJournals(p: Project): Map<string, any>[][] {
  return readdirSync(join(p.sdd, "runs"))
    .sort()
    .map((run) =>
      readFileSync(join(p.sdd, "runs", run, "journal.jsonl"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => parse(l) as Map<string, any>),
    );
}

const n = (x: any): number => (typeof x === "number" ? x : x.toNumber());
const eventOf = (rows: Map<string, any>[], name: string) => rows.filter((r) => r.get("event") === name);

function stepRows(p: Project, agentId: string): Map<string, any>[] {
  return readFileSync(join(p.sdd, "runtime", "journal", agentId, "000000.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => parse(l) as Map<string, any>);
}

/** Answers the provider served (each billed TOKENS_PER_ANSWER) among `reqs`: not the hang, not a token count. */
const served = (reqs: LoggedRequest[]): number => reqs.filter((q) => q.scenario !== "hang" && q.scenario !== "count_tokens").length;

/**
 * Start `run`, wait until the agent's second model turn hangs (the fake's
 * `resumable` scenario, keyed by `mark`), stop the run, and return the
 * fake's request count at the stop.
 */
async function runUntilSecondToolCallThenStop(p: Project, mark: string): Promise<{ first: WorldResult; requestsAtStop: number }> {
  const run = world.spawn([binPath(), "run", "plan.yaml", "--port", "0"], { cwd: p.dir, env: p.env });
  const deadline = Date.now() + 90_000;
  for (;;) {
    const reqs = await world.requests();
    if (reqs.some((q) => q.marks.includes(mark) && q.scenario === "hang")) break;
    if (Date.now() > deadline) throw new Error(`the agent never reached its second tool call (${mark})`);
    await Bun.sleep(200);
  }
  const stop = await bernsteinIn(p, ["stop"]);
  expect(stop.code).toBe(0);
  const first = await run.finished();
  return { first, requestsAtStop: (await world.requests()).length };
}

function resumablePlan(mark: string): string {
  const once = crypto.randomUUID();
  return `- id: T\n  title: "write two files"\n  description: "FAKE_SCENARIO=resumable FAKE_FILE=first.txt FAKE_FILE2=second.txt FAKE_CONTENT=c FAKE_ONCE=${once} FAKE_MARK=${mark}"\n`;
}

for (const cli of ["claude", "codex", "gemini"] as const) {
  describe.skipIf(!RUN)(`${cli}: a stopped attempt resumes its own CLI session`, () => {
    test("stopped during the second tool call, the next run continues the same session: first file written once, task_resumed, chain intact, fewer tokens than a fresh redo", async () => {
      // ---- resumed
      const mark = `resume-${cli}-${crypto.randomUUID().slice(0, 8)}`;
      const p = project(cli, "", resumablePlan(mark));
      const { first, requestsAtStop } = await runUntilSecondToolCallThenStop(p, mark);
      expect(first.code).toBe(1); // stopped with the task undone
      expect(readFileSync(join(p.dir, "first.txt"), "utf8")).toBe("c\n");
      expect(existsSync(join(p.dir, "second.txt"))).toBe(false);
      const [run1] = runJournals(p);
      const usage1 = eventOf(run1!, "agent_usage")[0]!;
      const sessionId = usage1.get("session_id");
      expect(sessionId).toEqual(expect.any(String));
      const agentId = eventOf(run1!, "agent_spawned")[0]!.get("agent_id");
      expect(eventOf(run1!, "task_requeued")[0]!.get("reason")).toBe("stopped");
      const stepsBefore = stepRows(p, agentId).length;

      const second = await bernsteinIn(p, ["run", "plan.yaml", "--port", "0", "--as-json"]);
      expect(second.code).toBe(0);
      expect(JSON.parse(second.stdout)).toMatchObject({ outcome: "completed", tasks: { done: 1, failed: 0 } });
      expect(world.leftovers()).toEqual([]);
      const run2 = runJournals(p)[1]!;
      const resumed = eventOf(run2, "task_resumed");
      expect(resumed.length).toBe(1);
      expect(resumed[0]!.get("session_id")).toBe(sessionId);
      expect(resumed[0]!.get("agent_id")).toBe(agentId);
      expect(n(resumed[0]!.get("steps_done"))).toBe(1);
      expect(eventOf(run2, "task_resume_fallback")).toEqual([]);
      // the same CLI session went on: the CLI reported the same id again
      expect(eventOf(run2, "agent_usage")[0]!.get("session_id")).toBe(sessionId);
      expect(eventOf(run2, "agent_spawned")[0]!.get("agent_id")).toBe(agentId);

      // the fake saw the earlier turns: every request after the stop carried the first tool call's result back
      const after = (await world.requests()).slice(requestsAtStop).filter((q) => q.marks.includes(mark) && q.scenario !== "count_tokens");
      expect(after.length).toBeGreaterThan(0);
      for (const q of after) expect(q.tool_results).toBeGreaterThanOrEqual(1);
      // the file written before the stop was not written again; the second one was
      const all = (await world.requests()).filter((q) => q.marks.includes(mark));
      expect(all.filter((q) => q.tool_path === "first.txt").length).toBe(1);
      expect(all.filter((q) => q.tool_path === "second.txt").length).toBe(1);
      expect(readFileSync(join(p.dir, "second.txt"), "utf8")).toBe("c-2\n");

      // the stopped agent's step journal goes on, its chain intact
      const steps = stepRows(p, agentId);
      expect(steps.length).toBeGreaterThan(stepsBefore);
      expect(n(steps[stepsBefore]!.get("seq"))).toBe(n(steps[stepsBefore - 1]!.get("seq")) + 1);
      expect(steps[stepsBefore]!.get("prev_hash")).toBe(steps[stepsBefore - 1]!.get("step_hash"));
      const verify = await bernsteinIn(p, ["replay", agentId, "--as-json"]);
      expect(verify.code).toBe(0);
      // replay of the run shows the adapter of the agent and the resume
      const table = await bernsteinIn(p, ["replay", "latest"]);
      expect(table.code).toBe(0);
      expect(table.stdout).toContain(`adapter=${cli}`);
      expect(table.stdout).toMatch(new RegExp(`task_resumed .* adapter=${cli}  steps_done=1`));
      const resumedTokens = served(after) * TOKENS_PER_ANSWER;

      // ---- the same stop, then a fresh redo (--fresh-agents)
      const markF = `fresh-${cli}-${crypto.randomUUID().slice(0, 8)}`;
      const f = project(cli, "", resumablePlan(markF));
      const stopped = await runUntilSecondToolCallThenStop(f, markF);
      expect(stopped.first.code).toBe(1);
      const redo = await bernsteinIn(f, ["run", "plan.yaml", "--port", "0", "--as-json", "--fresh-agents"]);
      expect(redo.code).toBe(0);
      const redoRows = runJournals(f)[1]!;
      expect(eventOf(redoRows, "task_resumed")).toEqual([]);
      expect(eventOf(redoRows, "task_resume_fallback")[0]!.get("reason")).toBe("fresh_agents");
      const afterF = (await world.requests()).slice(stopped.requestsAtStop).filter((q) => q.marks.includes(markF) && q.scenario !== "count_tokens");
      // started over: the first request sent no earlier turns, and first.txt was written a second time
      expect(afterF[0]!.tool_results).toBe(0);
      expect((await world.requests()).filter((q) => q.marks.includes(markF) && q.tool_path === "first.txt").length).toBe(2);
      const freshTokens = served(afterF) * TOKENS_PER_ANSWER;
      expect(resumedTokens).toBeLessThan(freshTokens);
      if (cli !== "codex") {
        // claude and gemini report each invocation's own tokens: the journal shows the saving too
        // (codex reports the session's running total, which includes the stopped turn)
        const out = (rows: Map<string, any>[]) => n(eventOf(rows, "agent_usage")[0]!.get("output_tokens"));
        expect(out(run2)).toBeLessThan(out(redoRows));
      }
    }, 240_000);
  });
}


for (const cli of ["claude", "codex", "gemini"] as const) {
describe.skipIf(!RUN)(`${cli} under worktree isolation (a git project)`, () => {
  test("stopped during the second tool call, the resumed session continues on the kept branch: first.txt is in its worktree and not written again; one merge holds both files; no worktree left", async () => {
    const mark = `wt-${cli}-${crypto.randomUUID().slice(0, 8)}`;
    const p = project(cli, "", resumablePlan(mark));
    git(p.dir, "init", "-q", "-b", "main");
    git(p.dir, "add", "-A");
    git(p.dir, "commit", "-qm", "base");
    const { first, requestsAtStop } = await runUntilSecondToolCallThenStop(p, mark);
    expect(first.code).toBe(1);
    const [run1] = runJournals(p);
    const runId1 = eventOf(run1!, "run_started")[0]!.get("run_id");
    const branch = `bernstein/${runId1}/T`;
    // the stop committed first.txt on the kept branch; the project itself has nothing yet
    expect(git(p.dir, "show", `${branch}:first.txt`)).toBe("c\n");
    expect(existsSync(join(p.dir, "first.txt"))).toBe(false);
    const sessionId = eventOf(run1!, "agent_usage")[0]!.get("session_id");

    const second = await bernsteinIn(p, ["run", "plan.yaml", "--port", "0", "--as-json"]);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ outcome: "completed", tasks: { done: 1, failed: 0 } });
    expect(world.leftovers()).toEqual([]);
    const run2 = runJournals(p)[1]!;
    expect(eventOf(run2, "task_resume_fallback")).toEqual([]);
    expect(eventOf(run2, "task_resumed").map((x) => x.get("session_id"))).toEqual([sessionId]);
    expect(eventOf(run2, "agent_usage")[0]!.get("session_id")).toBe(sessionId);
    expect(eventOf(run2, "task_worktree").map((x) => x.get("branch"))).toEqual([branch]);
    // the fake was sent the earlier turns; first.txt was written once, second.txt once
    const after = (await world.requests()).slice(requestsAtStop).filter((q) => q.marks.includes(mark) && q.scenario !== "count_tokens");
    expect(after.length).toBeGreaterThan(0);
    for (const q of after) expect(q.tool_results).toBeGreaterThanOrEqual(1);
    const all = (await world.requests()).filter((q) => q.marks.includes(mark));
    expect(all.filter((q) => q.tool_path === "first.txt").length).toBe(1);
    expect(all.filter((q) => q.tool_path === "second.txt").length).toBe(1);
    // one merge of the branch, with both attempts' files
    expect(eventOf(run2, "task_merged").map((x) => [x.get("branch"), x.get("files")])).toEqual([[branch, ["first.txt", "second.txt"]]]);
    expect(readFileSync(join(p.dir, "first.txt"), "utf8")).toBe("c\n");
    expect(readFileSync(join(p.dir, "second.txt"), "utf8")).toBe("c-2\n");
    expect(git(p.dir, "for-each-ref", "--format=%(refname:short)", "refs/heads/bernstein/")).toBe("");
    expect(git(p.dir, "worktree", "list", "--porcelain").split("\n").filter((l) => l.startsWith("worktree ")).length).toBe(1);
    expect(existsSync(join(p.sdd, "worktrees"))).toBe(false);
  }, 240_000);
});
}

describe.skipIf(!RUN)("a session that is gone", () => {
  test("claude: the stopped session's files are gone; the next run falls back to a fresh attempt and journals why", async () => {
    const mark = `gone-claude-${crypto.randomUUID().slice(0, 8)}`;
    const p = project("claude", "", resumablePlan(mark));
    const { requestsAtStop } = await runUntilSecondToolCallThenStop(p, mark);
    // claude keeps its sessions under ~/.claude/projects: remove them
    rmSync(join(p.home, ".claude", "projects"), { recursive: true, force: true });
    const r = await bernsteinIn(p, ["run", "plan.yaml", "--port", "0", "--as-json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ outcome: "completed", tasks: { done: 1 } });
    const rows = runJournals(p)[1]!;
    expect(eventOf(rows, "task_resumed").length).toBe(1);
    const fallback = eventOf(rows, "task_resume_fallback");
    expect(fallback.length).toBe(1);
    expect(fallback[0]!.get("reason")).toBe("session_gone");
    expect(fallback[0]!.get("detail")).toContain("No conversation found");
    // the fresh attempt did the whole task again, as a new agent
    const spawned = eventOf(rows, "agent_spawned").map((x) => x.get("agent_id"));
    expect(spawned.length).toBe(2);
    expect(spawned[0]).not.toBe(spawned[1]);
    const after = (await world.requests()).slice(requestsAtStop).filter((q) => q.marks.includes(mark) && q.scenario !== "count_tokens");
    expect(after[0]!.tool_results).toBe(0);
    expect(readFileSync(join(p.dir, "second.txt"), "utf8")).toBe("c-2\n");
    const table = await bernsteinIn(p, ["replay", "latest"]);
    expect(table.stdout).toContain("fresh: session_gone");
  }, 180_000);
});

describe.skipIf(!RUN)("adapters per role", () => {
  test("roles: the manager plans on claude, the workers run on codex and gemini, and the run completes", async () => {
    const goal = "build the parser FAKE_ROLES=backend,qa FAKE_MARK=roles";
    const p = project(
      "claude",
      [`goal: ${JSON.stringify(goal)}`, "roles:", "  backend: {adapter: codex, model: gpt-fake-1}", "  qa: {adapter: gemini, model: gemini-fake-1}"].join("\n"),
      null,
    );
    const before = (await world.requests()).length;
    const r = await bernsteinIn(p, ["run", "--port", "0", "--as-json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ outcome: "completed", tasks: { done: 3, failed: 0 } });
    expect(readFileSync(join(p.dir, "parser.txt"), "utf8")).toBe("parser\n");
    const rows = runJournals(p)[0]!;
    const byTask = new Map(eventOf(rows, "agent_spawned").map((x) => [x.get("task_ids")[0], x]));
    const plan = eventOf(rows, "plan_requested")[0]!.get("task_id");
    expect(byTask.get(plan)!.get("provider")).toBe("claude");
    expect(byTask.get(plan)!.get("model")).toBe("claude-fake-1");
    expect(byTask.get("P1")!.get("provider")).toBe("codex");
    expect(byTask.get("P1")!.get("role")).toBe("backend");
    expect(byTask.get("P1")!.get("model")).toBe("gpt-fake-1");
    expect(byTask.get("P2")!.get("provider")).toBe("gemini");
    expect(byTask.get("P2")!.get("model")).toBe("gemini-fake-1");
    // each API was spoken by its own CLI
    const reqs = (await world.requests()).slice(before).filter((q) => q.marks.includes("roles"));
    expect(new Set(reqs.map((q) => q.api))).toEqual(new Set(["anthropic", "openai", "gemini"]));
    // replay names the adapter of each agent
    const table = await bernsteinIn(p, ["replay", "latest"]);
    expect(table.code).toBe(0);
    for (const a of ["claude", "codex", "gemini"]) expect(table.stdout).toContain(`adapter=${a}`);
    const agents = await bernsteinIn(p, ["replay", "agents", "--as-json"]);
    expect(agents.code).toBe(0);
    expect(agents.stdout).toContain('"adapter": "codex"');
  }, 240_000);
});
