/**
 * One worktree per agent with the REAL claude, codex and gemini CLIs
 * (pinned in test/real-clis) against the fake provider API, through the
 * compiled binary (issue 32): three agents of one CLI write the same file
 * name in parallel in a git repository; each writes into its own worktree,
 * the first task in claim order is merged, the other two fail with
 * `merge_conflict` and keep their branches, all of it journaled; no
 * worktree is left after the run, after `bernstein stop` of an agent
 * waiting on the provider, or after `kill -9` of the run plus the next run.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { binPath } from "../../helpers/cli.ts";
import { available } from "../../helpers/require-service.ts";
import { AgentWorld, realClisInstalled, REAL_CLI_BIN, type RealCli } from "../../helpers/agent-world.ts";
import { parse } from "../../../src/pyjson/parse.ts";
import { git } from "../../helpers/git.ts";

const RUN = available("real-clis", realClisInstalled, `the agent CLIs are not installed in ${REAL_CLI_BIN} (npm ci --prefix test/real-clis)`);
const MODELS: Record<RealCli, string> = { claude: "claude-fake-1", codex: "gpt-fake-1", gemini: "gemini-fake-1" };

let world: AgentWorld;
const made: string[] = [];
beforeAll(async () => {
  if (RUN) world = await new AgentWorld().start();
});
afterAll(async () => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
  if (world) await world.stop();
});


interface Repo {
  dir: string;
  env: Record<string, string>;
}

/** A git repository with a bernstein.yaml for `cli` and a plan of `tasks` (id -> description), all committed. */
function repo(cli: RealCli, tasks: Record<string, string>, timeoutS: number): Repo {
  const root = mkdtempSync(join(tmpdir(), `bern-wt-${cli}-`));
  made.push(root);
  const dir = join(root, "work");
  const home = join(root, "home");
  const tmp = join(root, "tmp");
  for (const d of [dir, home, tmp]) mkdirSync(d);
  writeFileSync(
    join(dir, "bernstein.yaml"),
    ["agent:", `  adapter: ${cli}`, `  base_url: ${world.url}`, "  api_key_env: FAKE_PROVIDER_KEY", `  timeout_s: ${timeoutS}`, "max_retries: 0", "max_agents: 3", "models:", `  default: ${MODELS[cli]}`, ""].join("\n"),
  );
  writeFileSync(
    join(dir, "plan.yaml"),
    Object.entries(tasks)
      .map(([id, description]) => `- id: ${id}\n  title: "task ${id}"\n  description: "${description}"\n`)
      .join(""),
  );
  git(dir, "init", "-q", "-b", "main");
  git(dir, "add", "-A");
  git(dir, "commit", "-qm", "base");
  return { dir, env: { PATH: `${REAL_CLI_BIN}:${process.env.PATH}`, HOME: home, TMPDIR: tmp, FAKE_PROVIDER_KEY: world.apiKey } };
}

function journal(r: Repo, run: string): Map<string, any>[] {
  return readFileSync(join(r.dir, ".sdd", "runs", run, "journal.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => parse(l) as Map<string, any>);
}

function runs(r: Repo): string[] {
  const d = join(r.dir, ".sdd", "runs");
  return existsSync(d) ? readdirSync(d).sort() : [];
}

function worktrees(r: Repo): string[] {
  return git(r.dir, "worktree", "list", "--porcelain")
    .split("\n")
    .filter((l) => l.startsWith("worktree "))
    .slice(1);
}

/** Wait until the newest run has a worktree for `task` and the fake API got a new request (the CLI is waiting on it). */
async function agentWaiting(r: Repo, task: string, requestsBefore: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const run = runs(r).at(-1);
    if (run && existsSync(join(r.dir, ".sdd", "worktrees", run, task)) && (await world.requests()).length > requestsBefore) return;
    if (Date.now() > deadline) throw new Error(`no agent of ${task} reached the fake API (runs ${runs(r).join(",")}, worktree ${run && existsSync(join(r.dir, ".sdd", "worktrees", run, task))}, requests ${(await world.requests()).length} of ${requestsBefore})`);
    await Bun.sleep(100);
  }
}

for (const cli of ["claude", "codex", "gemini"] as const) {
  describe.skipIf(!RUN)(`${cli} (real CLI) in a git repository`, () => {
    test("stop of an agent waiting on the provider, then kill -9 of the next run: no worktree is left after the stop, nor after the run that follows the kill", async () => {
      // A long timeout: a CLI slow to start on a loaded machine must still reach the fake before anything is stopped.
      const r = repo(cli, { H: "FAKE_SCENARIO=hang" }, 150);
      // 1. bernstein stop while the agent waits on the provider
      let before = (await world.requests()).length;
      const first = world.spawn([binPath(), "run", "plan.yaml", "--port", "0"], { cwd: r.dir, env: r.env });
      await agentWaiting(r, "H", before);
      expect(worktrees(r)).toHaveLength(1);
      const stop = await world.run([binPath(), "stop", "--timeout", "0"], { cwd: r.dir, env: r.env });
      expect(stop.code).toBe(0);
      expect((await first.finished()).code).toBe(1);
      expect(worktrees(r)).toEqual([]);
      expect(existsSync(join(r.dir, ".sdd", "worktrees"))).toBe(false);
      expect(journal(r, runs(r)[0]!).filter((x) => x.get("event") === "task_requeued").map((x) => x.get("reason"))).toEqual(["stopped"]);

      // 2. the resumed run is killed with kill -9 while its agent waits: its worktree stays behind
      before = (await world.requests()).length;
      const second = world.spawn([binPath(), "run", "plan.yaml", "--port", "0"], { cwd: r.dir, env: r.env });
      await agentWaiting(r, "H", before);
      const killedRun = runs(r).at(-1)!;
      const pid = JSON.parse(readFileSync(join(r.dir, ".sdd", "runtime", "orchestrator.json"), "utf8")).pid as number;
      process.kill(pid, "SIGKILL");
      await second.finished();
      expect(worktrees(r)).toEqual([`worktree ${join(r.dir, ".sdd", "worktrees", killedRun, "H")}`]);

      // 3. the next run reaps it (journaled) before its own agent starts; stopped in turn, it leaves none
      before = (await world.requests()).length;
      const third = world.spawn([binPath(), "run", "plan.yaml", "--port", "0"], { cwd: r.dir, env: r.env });
      await agentWaiting(r, "H", before);
      const thirdRun = runs(r).at(-1)!;
      expect(thirdRun).not.toBe(killedRun);
      const rows = journal(r, thirdRun);
      const reaped = rows.filter((x) => x.get("event") === "worktrees_reaped");
      expect(reaped.map((x) => x.get("paths"))).toEqual([[join(r.dir, ".sdd", "worktrees", killedRun, "H")]]);
      expect(worktrees(r)).toEqual([`worktree ${join(r.dir, ".sdd", "worktrees", thirdRun, "H")}`]);
      expect((await world.run([binPath(), "stop", "--timeout", "0"], { cwd: r.dir, env: r.env })).code).toBe(0);
      expect((await third.finished()).code).toBe(1);
      expect(worktrees(r)).toEqual([]);
      expect(existsSync(join(r.dir, ".sdd", "worktrees"))).toBe(false);
      expect(world.leftovers()).toEqual([]);
    }, 300_000);


    test("three agents write same.txt in parallel, each in its own worktree; A is merged, B and C fail with merge_conflict and keep their branches; no worktree is left", async () => {
      const { dir, env } = repo(cli, Object.fromEntries(["A", "B", "C"].map((t) => [t, `FAKE_SCENARIO=write_file FAKE_FILE=same.txt FAKE_CONTENT=from-${cli}-${t}`])), 120);
      const r = await world.run([binPath(), "run", "plan.yaml", "--port", "0", "--as-json"], { cwd: dir, env });
      expect(r.code).toBe(1);
      const doc = JSON.parse(r.stdout);
      expect(doc).toMatchObject({ outcome: "failed", tasks: { done: 1, failed: 2 } });
      expect(world.leftovers()).toEqual([]);

      const [run] = readdirSync(join(dir, ".sdd", "runs")).sort();
      const rows = readFileSync(join(dir, ".sdd", "runs", run!, "journal.jsonl"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => parse(l) as Map<string, any>);
      const ev = (name: string) => rows.filter((x) => x.get("event") === name);
      // each attempt had its own worktree and branch
      expect(ev("task_worktree").map((x) => [x.get("task_id"), x.get("branch"), x.get("path")])).toEqual(
        ["A", "B", "C"].map((t) => [t, `bernstein/${run}/${t}`, join(dir, ".sdd", "worktrees", run!, t)]),
      );
      // the merge result, journaled and the same every time: A lands, B and C conflict on same.txt
      expect(ev("task_merged").map((x) => [x.get("task_id"), x.get("merge"), x.get("files")])).toEqual([["A", "fast_forward", ["same.txt"]]]);
      expect(ev("task_merge_conflict").map((x) => [x.get("task_id"), x.get("conflicts")])).toEqual([
        ["B", ["same.txt"]],
        ["C", ["same.txt"]],
      ]);
      expect(ev("task_failed").map((x) => x.get("reason"))).toEqual(["B", "C"].map((t) => `merge_conflict: same.txt (branch bernstein/${run}/${t} kept)`));
      expect(readFileSync(join(dir, "same.txt"), "utf8")).toBe(`from-${cli}-A\n`);
      // each CLI wrote into its own worktree: the kept branches hold B's and C's own content
      for (const t of ["B", "C"]) expect(git(dir, "show", `bernstein/${run}/${t}:same.txt`)).toBe(`from-${cli}-${t}\n`);
      // no worktree left
      expect(git(dir, "worktree", "list", "--porcelain").split("\n").filter((l) => l.startsWith("worktree "))).toEqual([`worktree ${dir}`]);
      expect(readdirSync(join(dir, ".sdd")).includes("worktrees")).toBe(false);
    }, 180_000);
  });
}
