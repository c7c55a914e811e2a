/**
 * `replay diff` of real runs (issue 19): two `bernstein run`s of the same plan
 * agree once the identity fields are left out and agent ids are compared by
 * order of first appearance; a changed model is found at the first event that
 * carries it; --no-default-ignores and --ignore change what is compared.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bernstein, bernsteinJson, ROOT } from "../../helpers/cli.ts";

const DEMO = join(ROOT, "examples", "demo");

/** One project from the demo, run to its end; returns its run id. */
async function runDemo(root: string, name: string, planEdit: (plan: string) => string = (p) => p): Promise<string> {
  const dir = join(root, name);
  mkdirSync(dir);
  cpSync(join(DEMO, "agent.ts"), join(dir, "agent.ts"));
  // One agent at a time: the demo agent sleeps a random while, so two agents
  // in parallel finish in either order and the runs would (truly) differ.
  writeFileSync(join(dir, "bernstein.yaml"), readFileSync(join(DEMO, "bernstein.yaml"), "utf8").replace(/^max_agents: \d+$/m, "max_agents: 1"));
  writeFileSync(join(dir, "plan.yaml"), planEdit(readFileSync(join(DEMO, "plan.yaml"), "utf8")));
  const r = await bernstein(["run", "plan.yaml", "--as-json"], { cwd: dir });
  expect(r.code).toBe(0);
  const runs = readdirSync(join(dir, ".sdd", "runs"));
  expect(runs).toHaveLength(1);
  return runs[0]!;
}

describe("replay diff of two real runs (compiled binary)", () => {
  let root: string;
  let sdd: string;
  const ids: Record<"a" | "b" | "model", string> = { a: "", b: "", model: "" };
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "bern-diff-runs-"));
    sdd = join(root, "all", ".sdd");
    mkdirSync(join(sdd, "runs"), { recursive: true });
    ids.a = await runDemo(root, "a");
    ids.b = await runDemo(root, "b");
    ids.model = await runDemo(root, "model", (p) => p.replace("model: demo-large", "model: demo-xl"));
    // Run ids are start times to the second: the three runs need distinct ones in one state directory.
    for (const [name, id] of Object.entries(ids)) cpSync(join(root, name, ".sdd", "runs", id), join(sdd, "runs", `${name}-${id}`), { recursive: true });
  }, 60_000);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const diff = (a: string, b: string, ...flags: string[]) => bernsteinJson(["replay", "diff", `${a}-${ids[a as "a"]}`, `${b}-${ids[b as "b"]}`, "--sdd-dir", sdd, ...flags]);

  test("the same plan twice: no divergence with the default ignores; the JSON names the rules", async () => {
    const r = await diff("a", "b");
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ ok: true, diverged: false, reason_code: "identical" });
    expect(r.json.ignored_fields).toEqual(["run_id", "git_sha", "git_branch", "fingerprint", "session_id", "pid"]);
    expect(r.json.aligned_fields).toEqual(["agent_id", "agent_ids"]);
    // What actually differed between the runs, and was left out for it.
    expect(r.json.rules_applied).toEqual(expect.arrayContaining(["agent_id", "fingerprint", "run_id"]));
    const prose = await bernstein(["replay", "diff", `a-${ids.a}`, `b-${ids.b}`, "--sdd-dir", sdd]);
    expect(prose.code).toBe(0);
    expect(prose.stdout).toMatch(/^No divergence: identical: \d+ events match\nignored .*run_id.*; agent_id compared by order of first appearance/);
  });

  test("--no-default-ignores: the runs diverge at event 0, on run_id", async () => {
    const r = await diff("a", "b", "--no-default-ignores");
    expect(r.code).toBe(1);
    expect(r.json).toMatchObject({ diverged: true, index: 0, reason_code: "payload_mismatch", ignored_fields: [], aligned_fields: [] });
    expect(r.json.fields_changed).toContain("run_id");
  });

  test("one task's model changed: the first divergence is the first event that carries it", async () => {
    const r = await diff("a", "model");
    expect(r.code).toBe(1);
    const journal = readFileSync(join(sdd, "runs", `model-${ids.model}`, "journal.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const first = journal.findIndex((row) => row.model === "demo-xl");
    expect(first).toBeGreaterThan(0);
    expect(r.json).toMatchObject({ diverged: true, index: first, reason_code: "payload_mismatch", fields_changed: ["model"] });
    expect([r.json.a_event.model, r.json.b_event.model]).toEqual(["demo-large", "demo-xl"]);
    // Ignoring the model moves the divergence to the cost that follows from it (task_completed: the running total and the task's own).
    const past = await diff("a", "model", "--ignore", "model");
    expect(past.json.index).toBeGreaterThan(first);
    expect(past.json.fields_changed).toEqual(["cost_usd", "task_cost_usd"]);
    expect(past.json.ignored_fields).toContain("model");
  });

  test("--ignore takes dotted paths; a bad path or a misplaced flag is a usage error", async () => {
    const bad = await diff("a", "b", "--ignore", "a..b");
    expect(bad.code).toBe(2);
    expect(bad.json).toMatchObject({ ok: false, error: "usage" });
    const misplaced = await bernsteinJson(["replay", "list", "--no-default-ignores", "--sdd-dir", sdd]);
    expect(misplaced.code).toBe(2);
    expect(misplaced.json).toMatchObject({ error: "flag_not_applicable", flags: ["--no-default-ignores"] });
  });
});
