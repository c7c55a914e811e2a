import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAdapter } from "../../src/orchestrator/adapters.ts";
import { modelOfRole, roleAgentConfig, validateConfig } from "../../src/orchestrator/config.ts";
import {
  attemptWorktreeNote,
  clearResumePoints,
  noteAttemptWorktree,
  continuationPrompt,
  dropResumePoint,
  readResumePoint,
  restoreSessionHomes,
  resumeDecision,
  resumeFailure,
  resumeRoot,
  saveResumePoint,
  type ResumePoint,
} from "../../src/orchestrator/resume.ts";
import type { Task } from "../../src/server/model.ts";

const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), "bern-resume-unit-"));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const point = (over: Partial<ResumePoint> = {}): ResumePoint => ({
  task_id: "T1",
  agent_id: "backend-0a1b2c3d",
  adapter: "codex",
  session_id: "0199-thread",
  run_id: "20261202-010000",
  steps_done: ["shell"],
  model: "gpt-x",
  stopped_at: 1_800_000_000,
  ...over,
});

describe("resume points", () => {
  test("a stopped attempt's point keeps its session homes out of the attempt directory, and the next attempt gets them back", () => {
    const sdd = tempDir();
    const attempt = join(sdd, "runtime", "agents", "backend-0a1b2c3d");
    mkdirSync(join(attempt, "codex-home", "sessions"), { recursive: true });
    writeFileSync(join(attempt, "codex-home", "sessions", "rollout.jsonl"), "{}\n");
    writeFileSync(join(attempt, "prompt.txt"), "P");
    saveResumePoint(sdd, point(), attempt);
    expect(existsSync(join(attempt, "codex-home"))).toBe(false);
    expect(existsSync(join(attempt, "prompt.txt"))).toBe(true); // only the session homes move
    const taken = readResumePoint(sdd, "T1");
    expect(taken).toEqual({ point: point() });
    rmSync(attempt, { recursive: true });
    mkdirSync(attempt, { recursive: true });
    restoreSessionHomes(sdd, "T1", attempt);
    expect(readFileSync(join(attempt, "codex-home", "sessions", "rollout.jsonl"), "utf8")).toBe("{}\n");
    dropResumePoint(sdd, "T1");
    expect(readResumePoint(sdd, "T1")).toBeNull();
  });

  test("a task id that is not a plain name gets a hashed directory; clear removes every point", () => {
    const sdd = tempDir();
    const id = "../../etc/x y";
    saveResumePoint(sdd, point({ task_id: id }), join(sdd, "none"));
    expect(existsSync(join(sdd, "runtime", "etc"))).toBe(false);
    expect(readResumePoint(sdd, id)).toEqual({ point: point({ task_id: id }) });
    clearResumePoints(sdd);
    expect(existsSync(resumeRoot(sdd))).toBe(false);
  });

  test("an unreadable or foreign point is reported, never resumed", () => {
    const sdd = tempDir();
    saveResumePoint(sdd, point(), join(sdd, "none"));
    const file = join(resumeRoot(sdd), "T1", "resume.json");
    writeFileSync(file, "{not json");
    expect(readResumePoint(sdd, "T1")).toEqual({ unreadable: expect.stringContaining("resume.json") });
    writeFileSync(file, JSON.stringify(point({ task_id: "OTHER" })));
    const d = resumeDecision(readResumePoint(sdd, "T1"), { enabled: true, adapter: "codex", canResume: true });
    expect(d).toMatchObject({ fallback: "resume_point_unreadable" });
    // an agent id that could escape the journal directory is refused too
    writeFileSync(file, JSON.stringify(point({ agent_id: "../x" })));
    expect(readResumePoint(sdd, "T1")).toEqual({ unreadable: expect.any(String) });
  });
});

describe("resume points under worktree isolation", () => {
  test("a point names the kept branch, its head and base (or null: nothing written); a branch without its head, or a name like an option, is refused", () => {
    const sdd = tempDir();
    const onBranch = point({ branch: "bernstein/20261202-010000/T1", head: "a".repeat(40), base: "b".repeat(40), worktree: "/p/.sdd/worktrees/20261202-010000/T1" });
    saveResumePoint(sdd, onBranch, join(sdd, "none"));
    expect(readResumePoint(sdd, "T1")).toEqual({ point: onBranch });
    const nothing = point({ branch: null, head: null, base: null });
    saveResumePoint(sdd, nothing, join(sdd, "none"));
    expect(readResumePoint(sdd, "T1")).toEqual({ point: nothing });
    const file = join(resumeRoot(sdd), "T1", "resume.json");
    writeFileSync(file, JSON.stringify(point({ branch: "bernstein/r/T1", head: null, base: null })));
    expect(readResumePoint(sdd, "T1")).toEqual({ unreadable: expect.any(String) });
    writeFileSync(file, JSON.stringify(point({ branch: "--orphan", head: "a".repeat(40), base: "b".repeat(40) })));
    expect(readResumePoint(sdd, "T1")).toEqual({ unreadable: expect.any(String) });
  });

  test("an attempt directory notes its worktree branch for a run that recovers it after kill -9; no note or a broken one is null", () => {
    const attempt = tempDir();
    expect(attemptWorktreeNote(attempt)).toBeNull();
    noteAttemptWorktree(attempt, { branch: "bernstein/r/T1", base: "c".repeat(40), path: "/p/.sdd/worktrees/r/T1" });
    expect(attemptWorktreeNote(attempt)).toEqual({ branch: "bernstein/r/T1", base: "c".repeat(40), path: "/p/.sdd/worktrees/r/T1" });
    writeFileSync(join(attempt, "worktree.json"), '{"branch": 3}');
    expect(attemptWorktreeNote(attempt)).toBeNull();
  });
});

describe("resume decisions", () => {
  const taken = { point: point() };
  test("resumes only when enabled, on the same adapter, and that adapter can resume", () => {
    expect(resumeDecision(null, { enabled: true, adapter: "codex", canResume: true })).toBeNull();
    expect(resumeDecision(taken, { enabled: true, adapter: "codex", canResume: true })).toEqual({ resume: point() });
    expect(resumeDecision(taken, { enabled: false, adapter: "codex", canResume: true })).toMatchObject({ fallback: "fresh_agents" });
    expect(resumeDecision(taken, { enabled: true, adapter: "claude", canResume: true })).toMatchObject({ fallback: "adapter_changed" });
    expect(resumeDecision({ point: point({ adapter: "aider" }) }, { enabled: true, adapter: "aider", canResume: false })).toMatchObject({ fallback: "adapter_cannot_resume" });
  });

  test("a resumed CLI that says its session is gone, or fails before any tool call, falls back; a provider failure does not", () => {
    const failed = { outcome: "failed", toolCalls: [], failureClass: null };
    expect(resumeFailure(failed, "claude reported an error (error_during_execution): No conversation found with session ID: 6f1c")).toBe("session_gone");
    expect(resumeFailure({ ...failed, failureClass: "invalid_request" }, "Error: thread/resume failed: no rollout found for thread id 6f1c (code -32600)")).toBe("session_gone");
    expect(resumeFailure(failed, 'Invalid session identifier "x".')).toBe("session_gone");
    expect(resumeFailure(failed, "exit 1")).toBe("resume_failed");
    expect(resumeFailure({ ...failed, failureClass: "rate_limited" }, "429")).toBeNull();
    expect(resumeFailure({ ...failed, toolCalls: [{}] }, "No conversation found")).toBeNull();
    expect(resumeFailure({ ...failed, outcome: "success" }, "")).toBeNull();
  });

  test("the continuation prompt is short and names the task and the steps done", () => {
    const task = { id: "T1", title: "write two files" } as Task;
    const p = continuationPrompt(task, point({ steps_done: ["Write", "Write"] }));
    expect(p).toContain("T1: write two files");
    expect(p).toContain("2 tool calls completed");
    expect(p).toContain("RESULT: ");
    expect(p.length).toBeLessThan(600);
  });
});

describe("resume invocations", () => {
  const cfgFor = (adapter: string, agent: Record<string, unknown> = {}) => validateConfig({ agent: { adapter, ...agent } }, "b.yaml").config.agent;
  const req = (dir: string, resumeSessionId: string | null) => ({ prompt: "P", promptFile: join(dir, "prompt.txt"), model: "m1", effort: null, taskId: "T", agentId: "a", title: "t", workdir: dir, attemptDir: dir, resumeSessionId });

  test("claude --resume, codex exec resume (sandbox as a config override), gemini --resume; the prompt stays on stdin", () => {
    const dir = tempDir();
    const claude = createAdapter(cfgFor("claude"), dir).invocation(req(dir, "S1"));
    expect(claude.argv.slice(0, 4)).toEqual(["claude", "-p", "--resume", "S1"]);
    expect(claude.argv).toContain("acceptEdits");
    const codex = createAdapter(cfgFor("codex"), dir).invocation(req(dir, "S2"));
    expect(codex.argv.slice(0, 4)).toEqual(["codex", "exec", "resume", "--json"]);
    expect(codex.argv).toContain('sandbox_mode="workspace-write"');
    expect(codex.argv).not.toContain("--sandbox");
    expect(codex.argv.slice(-2)).toEqual(["S2", "-"]);
    const gemini = createAdapter(cfgFor("gemini"), dir).invocation(req(dir, "S3"));
    expect(gemini.argv.slice(0, 3)).toEqual(["gemini", "--resume", "S3"]);
    for (const inv of [claude, codex, gemini]) {
      expect(inv.stdin).toBe("P");
      expect(inv.recordedArgv).not.toContain("P");
    }
    // without a session id: the fresh invocation
    expect(createAdapter(cfgFor("claude"), dir).invocation(req(dir, null)).argv).not.toContain("--resume");
  });

  test("only the claude, codex and gemini adapters can resume", () => {
    const dir = tempDir();
    expect(["claude", "codex", "gemini", "aider"].map((a) => createAdapter(cfgFor(a), dir).canResume)).toEqual([true, true, true, false]);
    expect(createAdapter(cfgFor("script", { script: "a.sh" }), dir).canResume).toBe(false);
    expect(createAdapter(cfgFor("command", { command: ["x"] }), dir).canResume).toBe(false);
  });
});

describe("roles: an adapter per task role", () => {
  test("a role's keys override agent:; another adapter does not inherit agent:'s binary and args; the role's model wins", () => {
    const { config, warnings } = validateConfig(
      {
        agent: { adapter: "claude", base_url: "http://127.0.0.1:1", binary: "/opt/claude", args: ["--x"], env: { A: "1" }, timeout_s: 30 },
        roles: { manager: { model: "opus" }, backend: { adapter: "codex", env: { B: "2" }, bogus: true } },
        resume_agents: false,
      },
      "b.yaml",
    );
    expect(warnings).toEqual(["b.yaml: unknown key 'roles.backend.bogus' (ignored)"]);
    expect(config.resume_agents).toBe(false);
    const manager = roleAgentConfig(config, "manager");
    expect(manager).toMatchObject({ adapter: "claude", binary: "/opt/claude", args: ["--x"], timeout_s: 30 });
    expect(modelOfRole(config, "manager")).toBe("opus");
    const backend = roleAgentConfig(config, "backend");
    expect(backend).toMatchObject({ adapter: "codex", base_url: "http://127.0.0.1:1", args: [], timeout_s: 30, env: { A: "1", B: "2" } });
    expect(backend.binary).toBeUndefined();
    expect(modelOfRole(config, "backend")).toBeNull();
    // a role without an entry is agent:'s
    expect(roleAgentConfig(config, "qa")).toBe(config.agent);
    expect(validateConfig({}, "b.yaml").config.resume_agents).toBe(true);
  });

  test("a role's wrong type is refused with its key path", () => {
    expect(() => validateConfig({ roles: { qa: { adapter: "nope" } } }, "b.yaml")).toThrow("roles.qa.adapter");
    expect(() => validateConfig({ roles: { qa: { adapter: "script" } } }, "b.yaml")).toThrow("roles.qa.script");
    expect(() => validateConfig({ roles: [] }, "b.yaml")).toThrow("roles: expected a mapping");
    expect(() => validateConfig({ resume_agents: "yes" }, "b.yaml")).toThrow("resume_agents");
  });
});
