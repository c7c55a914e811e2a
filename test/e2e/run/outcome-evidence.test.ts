/**
 * Outcome evidence through the compiled binary (issue 31): an agent's
 * "Done: …" is not the evidence. In a git work tree a task whose agent
 * left the tree unchanged fails `no_change` (the default `verify:
 * changed`), a task declared `read_only: true` passes without a change,
 * `verify: none` turns the check off, a task's own `verify: changed` turns
 * it on outside git; a tool call the CLI refused reaches the step journal
 * as `denied` and fails the attempt `permission_denied`.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "../../../src/pyjson/parse.ts";
import { bernstein } from "../../helpers/cli.ts";
import { cleanupProjects, makeProject, runToEnd, storedTasks, type Project } from "./fixture.ts";

afterAll(cleanupProjects);

const CLAIM = "Done: implemented the feature and updated the tests";

/** Writes out/<task>.txt only for the tasks in WRITE_TASKS; always claims it is done. */
const CLAIMER = `#!/bin/sh
cat > /dev/null
for t in $WRITE_TASKS; do
  if [ "$t" = "$BERNSTEIN_TASK_ID" ]; then mkdir -p out; echo made > "out/$t.txt"; fi
done
echo '{"result_summary": "${CLAIM}", "cost_usd": 0.01}'
`;

const git = (cwd: string, ...args: string[]): void => {
  const r = Bun.spawnSync(["git", ...args], { cwd, stdout: "pipe", stderr: "pipe", env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: cwd, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" } });
  expect(r.exitCode).toBe(0);
};

/** A project whose agent claims done; `plan` is the plan's YAML; `gitTree` commits everything first. */
function claimerProject(plan: string, opts: { config?: string; writeTasks?: string; gitTree: boolean }): Project {
  const p = makeProject({ tasks: [{ id: "X" }] });
  writeFileSync(join(p.dir, "agent.sh"), CLAIMER);
  chmodSync(join(p.dir, "agent.sh"), 0o755);
  writeFileSync(
    join(p.dir, "bernstein.yaml"),
    ["agent:", "  adapter: script", "  script: agent.sh", "  timeout_s: 30", "  env:", `    WRITE_TASKS: ${JSON.stringify(opts.writeTasks ?? "")}`, "max_agents: 1", "max_retries: 0", opts.config ?? ""].join("\n") + "\n",
  );
  writeFileSync(p.planPath, plan);
  if (opts.gitTree) {
    git(p.dir, "init", "-q");
    git(p.dir, "add", "-A");
    git(p.dir, "commit", "-qm", "base");
  }
  return p;
}

const byId = (p: Project) => Object.fromEntries(storedTasks(p).map((t) => [t.id, t]));

function lastRunEvents(p: Project): Map<string, any>[] {
  const [run] = readdirSync(join(p.sddDir, "runs")).sort().reverse();
  return readFileSync(join(p.sddDir, "runs", run!, "journal.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => parse(l) as Map<string, any>);
}

function agentSteps(p: Project, agentId: string): Map<string, any>[] {
  return readFileSync(join(p.sddDir, "runtime", "journal", agentId, "000000.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => parse(l) as Map<string, any>);
}

const PLAN = `- id: NOOP
  title: claims a change it did not make
- id: REVIEW
  title: review the code
  read_only: true
- id: WRITE
  title: writes a file
`;

describe("verify: changed (the default in a git work tree)", () => {
  test("a no-op 'done' fails no_change without repeating the claim; a read_only task passes unchanged; a task that wrote is done", async () => {
    const p = claimerProject(PLAN, { gitTree: true, writeTasks: "WRITE" });
    const r = await runToEnd(p, ["--as-json"]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ outcome: "failed", tasks: { done: 2, failed: 1 }, failures: [{ task_id: "NOOP", signals: ["no_change"] }] });
    const t = byId(p);
    expect(t.NOOP!.status).toBe("failed");
    expect(t.NOOP!.fail_reason).toMatch(/^no_change: the agent ended without an error but the work tree is unchanged/);
    expect(t.NOOP!.fail_reason).not.toContain(CLAIM);
    expect(t.REVIEW!.status).toBe("done");
    expect(t.WRITE!.status).toBe("done");
    expect(readFileSync(join(p.dir, "out", "WRITE.txt"), "utf8")).toBe("made\n");
    const rows = lastRunEvents(p);
    const failedRow = rows.find((x) => x.get("event") === "task_failed" && x.get("task_id") === "NOOP")!;
    expect(failedRow.get("reason")).not.toContain(CLAIM);
    expect(rows.find((x) => x.get("event") === "task_verification_failed" && x.get("task_id") === "NOOP")!.get("failed_signals")).toEqual(["no_change"]);
    // the invocation step says why, and the run table's DETAIL shows it
    const step = agentSteps(p, failedRow.get("agent_id")).at(-1)!.get("tool_result") as Map<string, any>;
    expect(step.get("failed_signals")).toEqual(["no_change"]);
    expect(step.get("result_summary")).not.toContain(CLAIM);
    const table = await bernstein(["replay", "latest"], { cwd: p.dir });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/task_failed\s+\S+\s+NOOP\s+no_change: the agent ended/);
  });

  test("verify: none turns the check off; an agent that may not write (permission_mode read_only) is not held to it", async () => {
    const off = claimerProject("- id: NOOP\n  title: no-op\n", { gitTree: true, config: "verify: none" });
    expect((await runToEnd(off)).code).toBe(0);
    expect(byId(off).NOOP!.status).toBe("done");
    const ro = claimerProject("- id: NOOP\n  title: no-op\n", { gitTree: true, config: "" });
    const yaml = readFileSync(join(ro.dir, "bernstein.yaml"), "utf8").replace("  timeout_s: 30\n", "  timeout_s: 30\n  permission_mode: read_only\n");
    writeFileSync(join(ro.dir, "bernstein.yaml"), yaml);
    git(ro.dir, "commit", "-qam", "read only");
    expect((await runToEnd(ro)).code).toBe(0);
    expect(byId(ro).NOOP!.status).toBe("done");
  });

  test("gates alongside the check: verify: [changed, <gate>] runs both; outside git a task's own verify: changed still applies", async () => {
    const both = claimerProject("- id: NOOP\n  title: no-op\n- id: WRITE\n  title: writes\n", { gitTree: true, writeTasks: "WRITE", config: 'verify: [changed, "test -d out"]' });
    expect((await runToEnd(both)).code).toBe(1);
    const t = byId(both);
    expect(t.NOOP!.fail_reason).toMatch(/^no_change: /);
    expect(t.WRITE!.status).toBe("done");
    // a failed gate is the reason, not the agent's claim
    const gated = claimerProject("- id: WRITE\n  title: writes\n", { gitTree: true, writeTasks: "WRITE", config: 'verify: [changed, {name: tests, run: "exit 3"}]' });
    expect((await runToEnd(gated)).code).toBe(1);
    const g = byId(gated).WRITE!;
    // (in a git tree the attempt ran in its own worktree, whose branch the reason names)
    expect(g.fail_reason).toMatch(/^gate:tests(?: \(branch \S+ kept\))?: verify gate 'tests' exited 3; its output is in \S+\.log$/);
    expect(g.fail_reason).not.toContain(CLAIM);
    // not a git work tree: no check by default, but the task asks for it
    const plain = claimerProject("- id: DEFAULT\n  title: no-op\n- id: ASKED\n  title: no-op, checked\n  verify: changed\n", { gitTree: false });
    expect(existsSync(join(plain.dir, ".git"))).toBe(false);
    expect((await runToEnd(plain)).code).toBe(1);
    const u = byId(plain);
    expect(u.DEFAULT!.status).toBe("done");
    expect(u.ASKED!.status).toBe("failed");
    expect(u.ASKED!.fail_reason).toMatch(/^no_change: /);
  });
});

describe("a task's declaration across a resume", () => {
  test("a read_only task left open by one run (budget) is still read-only when the next run resumes it", async () => {
    const plan = "- id: A\n  title: writes first\n  priority: 0\n- id: R\n  title: review afterwards\n  read_only: true\n  depends_on: [A]\n";
    const p = claimerProject(plan, { gitTree: true, writeTasks: "A", config: "budget_usd: 0.005" });
    const first = await runToEnd(p, ["--as-json"]);
    expect(first.code).toBe(1);
    expect(JSON.parse(first.stdout)).toMatchObject({ outcome: "budget_exhausted", tasks: { done: 1, open: 1 } });
    const second = await runToEnd(p, ["--budget", "5", "--as-json"]);
    expect(JSON.parse(second.stdout)).toMatchObject({ resume: { decision: "resume" }, tasks: { done: 2, failed: 0 } });
    expect(second.code).toBe(0);
    expect(byId(p).R!.status).toBe("done");
  });
});

/** A stand-in claude printing what claude 2.1.332 prints when its permission mode refuses a Write. */
function deniedClaude(p: Project): string {
  const bin = join(p.dir, "bin");
  mkdirSync(bin, { recursive: true });
  const lines = [
    { type: "system", subtype: "init", session_id: "s1", model: "claude-stand-in-1" },
    { type: "assistant", message: { id: "m1", model: "claude-stand-in-1", content: [{ type: "tool_use", id: "tu1", name: "Write", input: { file_path: "w.txt", content: "hi\n" } }], usage: { input_tokens: 10, output_tokens: 5 } } },
    { type: "system", subtype: "permission_denied", tool_name: "Write", tool_use_id: "tu1", message: "Claude requested permissions to write to w.txt, but you haven't granted it yet." },
    { type: "user", message: { content: [{ type: "tool_result", tool_use_id: "tu1", is_error: true, content: "Claude requested permissions to write to w.txt, but you haven't granted it yet." }] } },
    { type: "result", subtype: "success", is_error: false, result: `${CLAIM}\nRESULT: wrote w.txt`, session_id: "s1", total_cost_usd: 0.01, usage: { input_tokens: 10, output_tokens: 5 }, permission_denials: [{ tool_name: "Write", tool_use_id: "tu1", tool_input: {} }] },
  ];
  const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  writeFileSync(join(bin, "claude"), ["#!/bin/sh", "cat > /dev/null", `printf '%s\\n' ${lines.map((l) => q(JSON.stringify(l))).join(" ")}`, ""].join("\n"));
  chmodSync(join(bin, "claude"), 0o755);
  return bin;
}

describe("refused tool calls", () => {
  test("a denied Write is a 'denied' step in the agent's step journal and fails the task permission_denied", async () => {
    const p = claimerProject("- id: W\n  title: write w.txt\n", { gitTree: false });
    const bin = deniedClaude(p);
    writeFileSync(join(p.dir, "bernstein.yaml"), "agent:\n  adapter: claude\n  timeout_s: 30\nmax_retries: 0\n");
    const r = await runToEnd(p, [], { PATH: `${bin}:${process.env.PATH}` });
    expect(r.code).toBe(1);
    const t = byId(p);
    expect(t.W!.status).toBe("failed");
    expect(t.W!.fail_reason).toMatch(/^permission_denied: /);
    expect(t.W!.fail_reason).not.toContain(CLAIM);
    const agent = lastRunEvents(p).find((x) => x.get("event") === "task_claimed")!.get("agent_id");
    const steps = agentSteps(p, agent);
    expect(steps.map((s) => s.get("tool_call").get("name"))).toEqual(["Write", "claude"]);
    const refused = steps[0]!.get("tool_result") as Map<string, any>;
    expect(refused.get("status")).toBe("denied");
    expect(refused.get("reason")).toBe("permission_denied");
    expect(refused.get("output")).toContain("haven't granted it");
    expect(steps[1]!.get("tool_result").get("failed_signals")).toEqual(["permission_denied"]);
    // and the task trace's tool step
    const traces = readdirSync(join(p.sddDir, "traces")).filter((n) => /^W-\d{8}T\d{9}Z\.json$/.test(n));
    expect(traces).toHaveLength(1);
    const trace = JSON.parse(readFileSync(join(p.sddDir, "traces", traces[0]!), "utf8"));
    expect(trace.outcome).toBe("failed");
    expect(trace.steps.filter((x: any) => x.tool_call).map((x: any) => x.tool_call)).toEqual([expect.objectContaining({ name: "Write", status: "denied", reason: "permission_denied" })]);
  });
});
