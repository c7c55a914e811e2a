import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bernstein } from "../../helpers/cli.ts";
import { cleanupProjects, makeProject, readSession, runIds, runToEnd, spawnRun, waitFor, type Project } from "./fixture.ts";

/**
 * A stop fits a container's budget (Docker and Kubernetes send SIGKILL 10 s
 * after SIGTERM): the run signals its agents at once, gives them the grace
 * window (`--grace`, `stop_grace_s`, default 5 s), saves the session and
 * exits. Also: `.sdd/.gitignore` on first use, and a missing plan named.
 */
afterAll(cleanupProjects);
const E2E_TIMEOUT = 60_000;
const ENV = { BERNSTEIN_SERVER_URL: "", BERNSTEIN_AUTH_TOKEN: "" };

/**
 * An agent that records its pid (the leader of its own process group), then
 * works for a minute. On SIGTERM it takes 6 s to wind down and then writes
 * `finished-<task>`: longer than the default grace window, shorter than 9 s.
 * The trap is set before the pid is written: the tests signal as soon as the
 * pid file exists, and a SIGTERM between the two would kill the shell outright.
 */
// The long sleep runs in the background and is waited for: sh runs a trap only between commands, so a TERM landing
// after one command and before a foreground sleep started would wait out the whole sleep; wait is cut short by it.
const SLOW_AGENT = `#!/bin/sh
trap 'kill $! 2>/dev/null; sleep 6; echo done > "finished-$BERNSTEIN_TASK_ID"; exit 0' TERM
echo $$ > "agent-$BERNSTEIN_TASK_ID.pid"
cat > /dev/null
sleep 60 &
wait $!
`;

function slowProject(config = ""): Project {
  const p = makeProject({ tasks: [{ id: "W1" }], config });
  writeFileSync(join(p.dir, "agent.sh"), SLOW_AGENT);
  return p;
}

/** Whether any process of group `pgid` still runs (zombies waiting for the reaper do not count). */
function groupAlive(pgid: number): boolean {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    // pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(pgrp) === pgid && state !== "Z" && state !== "X") return true;
  }
  return false;
}

async function agentPid(p: Project): Promise<number> {
  const file = join(p.dir, "agent-W1.pid");
  await waitFor(() => existsSync(file) && readFileSync(file, "utf8").trim() !== "", 20_000, "the agent to start");
  return Number(readFileSync(file, "utf8").trim());
}

async function ended(proc: ReturnType<typeof spawnRun>): Promise<{ code: number; stdout: string; stderr: string }> {
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

describe("stop within a container's budget", () => {
  test(
    "SIGTERM to 'bernstein run': agents signalled at once, SIGKILL after the default 5 s grace, session saved, exit 143 in < 10 s",
    async () => {
      const p = slowProject();
      const proc = spawnRun(p, ["--as-json"], ENV);
      const pid = await agentPid(p);
      const started = Date.now();
      proc.kill("SIGTERM");
      const r = await ended(proc);
      const took = Date.now() - started;
      expect(r.code).toBe(143);
      expect(took).toBeLessThan(10_000);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: "run_incomplete", outcome: "stopped", stopped_by: "SIGTERM", tasks: { open: 1, done: 0 } });
      // the agent's 6 s wind-down did not fit the 5 s window: killed, its whole group gone
      expect(existsSync(join(p.dir, "finished-W1"))).toBe(false);
      expect(groupAlive(pid)).toBe(false);
      expect(readSession(p).open_task_ids).toEqual(["W1"]);
    },
    E2E_TIMEOUT,
  );

  test(
    "a longer --grace is honoured: the agent may finish winding down",
    async () => {
      const p = slowProject();
      const proc = spawnRun(p, ["--grace", "9", "--as-json"], ENV);
      const pid = await agentPid(p);
      const started = Date.now();
      proc.kill("SIGTERM");
      const r = await ended(proc);
      expect(r.code).toBe(143);
      // it wound down for its 6 s instead of being killed at 5 s
      expect(Date.now() - started).toBeGreaterThanOrEqual(6_000);
      expect(readFileSync(join(p.dir, "finished-W1"), "utf8")).toBe("done\n");
      expect(groupAlive(pid)).toBe(false);
      expect(readSession(p).open_task_ids).toEqual(["W1"]);
    },
    E2E_TIMEOUT,
  );

  test(
    "stop_grace_s in bernstein.yaml sets the window too; a bad value is config_invalid",
    async () => {
      const p = slowProject("stop_grace_s: 9");
      const proc = spawnRun(p, [], ENV);
      await agentPid(p);
      proc.kill("SIGTERM");
      expect((await ended(proc)).code).toBe(143);
      expect(existsSync(join(p.dir, "finished-W1"))).toBe(true);

      const bad = slowProject("stop_grace_s: soon");
      const r = await runToEnd(bad, ["--as-json"], ENV);
      expect(r.code).toBe(3);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: "config_invalid" });
      expect(JSON.parse(r.stdout).detail).toContain("stop_grace_s");
      const usage = await runToEnd(bad, ["--grace", "-1"], ENV);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain("--grace");
    },
    E2E_TIMEOUT,
  );

  test(
    "'bernstein stop' (default): the run ends in < 10 s and the report gives the run's final counts",
    async () => {
      const p = makeProject({ tasks: [{ id: "D1" }, { id: "W1", depends_on: ["D1"] }, { id: "Q1", depends_on: ["W1"] }] });
      writeFileSync(
        join(p.dir, "agent.sh"),
        `#!/bin/sh\ncat > /dev/null\nif [ "$BERNSTEIN_TASK_ID" = "D1" ]; then echo '{"result_summary": "quick"}'; exit 0; fi\n` +
          SLOW_AGENT.replace("#!/bin/sh\n", ""),
      );
      const proc = spawnRun(p, ["--as-json"], ENV);
      const pid = await agentPid(p);
      const started = Date.now();
      const stop = await bernstein(["stop", "--as-json"], { cwd: p.dir, env: ENV, timeoutMs: 30_000 });
      const r = await ended(proc);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(stop.code).toBe(0);
      const report = JSON.parse(stop.stdout);
      expect(report).toMatchObject({ ok: true, stop_accepted: true, force: false, timeout_s: 0, grace_s: 5, pid_role: "orchestrator", exited: true });
      // the run's own final save: D1 done, W1 (killed) back in the queue with Q1
      expect(report).toMatchObject({ counts_from: "final_session", completed: 1, pending: 0, open: 2 });
      expect(readSession(p)).toMatchObject({ completed_task_ids: ["D1"], pending_task_ids: [] });
      expect(r.code).toBe(1);
      const summary = JSON.parse(r.stdout);
      expect(summary).toMatchObject({ outcome: "stopped", stopped_by: "POST /stop", sealed: false });
      expect(groupAlive(pid)).toBe(false);
      // work was left: no seal, and the run says how to seal it by hand once it is known complete
      expect(existsSync(join(p.sddDir, "runs", summary.run_id, "seal.json"))).toBe(false);
      expect(r.stderr).toContain(`bernstein journal seal ${summary.run_id}`);
    },
    E2E_TIMEOUT,
  );

  test(
    "'bernstein stop --grace 9' overrides the run's window",
    async () => {
      const p = slowProject();
      const proc = spawnRun(p, [], ENV);
      await agentPid(p);
      const stop = await bernstein(["stop", "--grace", "9"], { cwd: p.dir, env: ENV, timeoutMs: 40_000 });
      expect(stop.code).toBe(0);
      expect(stop.stdout).toContain("Graceful stop requested (agents signalled now, then 9s after SIGTERM)");
      expect(stop.stdout).toContain("Session saved to");
      expect(stop.stdout).toContain("(0 done, 0 pending, 1 open)");
      expect((await ended(proc)).code).toBe(1);
      expect(existsSync(join(p.dir, "finished-W1"))).toBe(true);
    },
    E2E_TIMEOUT,
  );
});

describe(".sdd/.gitignore on first use", () => {
  function git(dir: string, ...args: string[]): string {
    const r = Bun.spawnSync(["git", ...args], { cwd: dir, env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: dir } });
    if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
    return r.stdout.toString();
  }

  test(
    "a run in a git work tree leaves .sdd/ out of 'git status'",
    async () => {
      const p = makeProject({ tasks: [{ id: "G1" }] });
      git(p.dir, "init", "-q");
      const r = await runToEnd(p, [], ENV);
      expect(r.code).toBe(0);
      expect(readFileSync(join(p.sddDir, ".gitignore"), "utf8")).toBe("*\n");
      expect(statSync(join(p.sddDir, ".gitignore")).mode & 0o777).toBe(0o644);
      const status = git(p.dir, "status", "--porcelain", "--untracked-files=all");
      expect(status).not.toContain(".sdd");
      expect(status).toContain("plan.yaml");
    },
    E2E_TIMEOUT,
  );

  test("'journal record' creating .sdd writes it too; an existing state directory is left as it is", async () => {
    const p = makeProject({ tasks: [{ id: "G1" }] });
    const rec = await bernstein(["journal", "record", "r1", "hello", "--data", "{}"], { cwd: p.dir, env: ENV });
    expect(rec.code).toBe(0);
    expect(readFileSync(join(p.sddDir, ".gitignore"), "utf8")).toBe("*\n");

    const q = makeProject({ tasks: [{ id: "G1" }] });
    mkdirSync(q.sddDir);
    writeFileSync(join(q.sddDir, ".gitignore"), "runs/\n");
    expect((await runToEnd(q, [], ENV)).code).toBe(0);
    expect(readFileSync(join(q.sddDir, ".gitignore"), "utf8")).toBe("runs/\n");

    const s = makeProject({ tasks: [{ id: "G1" }] });
    mkdirSync(s.sddDir);
    expect((await runToEnd(s, [], ENV)).code).toBe(0);
    expect(existsSync(join(s.sddDir, ".gitignore"))).toBe(false);
    expect(runIds(s)).toHaveLength(1);
  });
});

describe("which plan a run looked for", () => {
  test("a PLAN that does not exist: plan_not_found (exit 3) naming the path looked for, nothing created", async () => {
    const p = makeProject();
    const r = await bernstein(["run", "--fresh", "nope.yaml", "--port", "0", "--as-json"], { cwd: p.dir, env: ENV });
    expect(r.code).toBe(3);
    const j = JSON.parse(r.stdout);
    expect(j).toMatchObject({ ok: false, error: "plan_not_found", path: "nope.yaml" });
    expect(j.looked_for).toHaveLength(1);
    expect(j.looked_for[0]).toEndWith("/nope.yaml");
    expect(j.detail).toContain(`looked for ${j.looked_for[0]}`);
    expect(existsSync(p.sddDir)).toBe(false);
  });

  test("no PLAN and a goal: the manager plans it; an answer that is not a plan says no plan file was given and what it answered", async () => {
    const p = makeProject({ goal: "make a thing", config: "max_retries: 0" });
    writeFileSync(join(p.dir, "agent.sh"), `#!/bin/sh\ncat > /dev/null\necho "[$BERNSTEIN_AGENT_ID] thinking about it"\n`);
    const r = await bernstein(["run", "--fresh", "--port", "0", "--as-json"], { cwd: p.dir, env: ENV });
    expect(r.code).toBe(3);
    const j = JSON.parse(r.stdout);
    expect(j).toMatchObject({ ok: false, error: "plan_invalid", outcome: "plan_failed" });
    expect(j.detail).toStartWith("no PLAN file was given (bernstein run PLAN), so the manager agent planned the goal; ");
    expect(j.detail).toContain("did not answer with a JSON task list");
    expect(j.detail).toMatch(/its answer begins "\[manager-[0-9a-f]+\] thinking about it"/);
  });
});
