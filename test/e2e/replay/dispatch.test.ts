import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { bernstein, bernsteinJson, VECTORS } from "../../helpers/cli.ts";
import { makeSdd, type SddTree } from "./fixture.ts";

describe("replay dispatch (compiled binary)", () => {
  let t: SddTree;
  beforeAll(() => {
    t = makeSdd({ "run-1": "chain-4", "agent-a": "chain-4" });
    // An agent step journal under runtime/journal/<agent> takes precedence over a run of the same name.
    const agents = join(VECTORS, "agent-journal", "sdd", "runtime", "journal", "agent-a");
    if (existsSync(agents)) cpSync(agents, join(t.sdd, "runtime", "journal", "agent-a"), { recursive: true });
    else mkdirSync(join(t.sdd, "runtime", "journal", "agent-a"), { recursive: true });
  });
  afterAll(() => t.cleanup());

  test("no target is a usage error", async () => {
    const r = await bernsteinJson(["replay"], { cwd: t.cwd });
    expect(r.code).toBe(2);
    expect(r.json).toMatchObject({ ok: false, error: "usage" });
  });

  test("extra words after a run id or verb are usage errors", async () => {
    for (const args of [["replay", "run-1", "extra"], ["replay", "list", "extra"]]) {
      const r = await bernsteinJson(args, { cwd: t.cwd });
      expect([args.join(" "), r.code, r.json.error]).toEqual([args.join(" "), 2, "usage"]);
    }
  });

  test("an agent journal directory selects the agent view, not the run display", async () => {
    const r = await bernstein(["replay", "agent-a"], { cwd: t.cwd });
    expect(r.stdout).not.toContain("Deterministic Replay");
    const run = await bernstein(["replay", "run-1"], { cwd: t.cwd });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Deterministic Replay");
  });

  test("--verify / --from-step go to the run journal even when an agent journal has the same name", async () => {
    const r = await bernsteinJson(["replay", "agent-a", "--verify"], { cwd: t.cwd });
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ run_id: "agent-a", ok: true, count: 4 });
    const p = await bernsteinJson(["replay", "agent-a", "--from-step", "1"], { cwd: t.cwd });
    expect(p.json.events).toEqual(["run_started"]);
  });

  test("an id that is neither agent nor run and is no valid run id is refused: invalid_run_id, exit 2", async () => {
    for (const id of ["..", "a/b", "x".repeat(65), "run 1", "run1\n"]) {
      const r = await bernsteinJson(["replay", id], { cwd: t.cwd });
      expect([id, r.code, r.json.error]).toEqual([id, 2, "invalid_run_id"]);
    }
  });

  test("a valid id with no run journal falls through to task-trace replay", async () => {
    const r = await bernsteinJson(["replay", "T-123"], { cwd: t.cwd });
    expect(r.json.error).not.toBe("run_not_found");
    expect(r.json.error).not.toBe("invalid_run_id");
    expect(r.stdout).not.toContain("Deterministic Replay");
  });

  test("latest with no runs is no_runs (exit 3)", async () => {
    const empty = makeSdd();
    try {
      const r = await bernsteinJson(["replay", "latest"], { cwd: empty.cwd });
      expect(r.code).toBe(3);
      expect(r.json).toMatchObject({ ok: false, error: "no_runs" });
    } finally {
      empty.cleanup();
    }
  });

  test("--yes-i-want-to-publish on any verb but publish is refused by name before any work", async () => {
    for (const args of [["replay", "run-1"], ["replay", "list"], ["replay", "diff", "run-1", "run-1"], ["replay", "repair", "run-1"]]) {
      const r = await bernsteinJson([...args, "--yes-i-want-to-publish"], { cwd: t.cwd });
      expect([args.join(" "), r.code, r.json.error]).toEqual([args.join(" "), 2, "flag_not_applicable"]);
      expect(r.json.detail).toContain("--yes-i-want-to-publish");
      const prose = await bernstein([...args, "--yes-i-want-to-publish"], { cwd: t.cwd });
      expect(prose.stdout).toBe("");
      expect(prose.stderr).toContain("--yes-i-want-to-publish");
    }
  });

  test("flags of other verbs are refused on the run display", async () => {
    for (const flag of [["--model", "opus"], ["--sign", "k.pem"], ["--threads", "2"]]) {
      const r = await bernsteinJson(["replay", "run-1", ...flag], { cwd: t.cwd });
      expect([flag[0], r.code, r.json.error]).toEqual([flag[0], 2, "flag_not_applicable"]);
    }
  });

  test("--sdd-dir points at another state directory", async () => {
    const r = await bernsteinJson(["replay", "list", "--sdd-dir", t.sdd], { cwd: "/" });
    expect(r.json.map((e: any) => e.run_id)).toEqual(["run-1", "agent-a"]);
  });

  test("help output", async () => {
    const r = await bernstein(["replay", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatchSnapshot();
  });
});
