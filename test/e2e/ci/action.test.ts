/**
 * The composite action (action.yml at the repository root), run as a
 * GitHub runner would run it: each step's `run` script with
 * `bash --noprofile --norc -eo pipefail`, its `env` evaluated from the
 * inputs and earlier steps' outputs, a fresh `$GITHUB_OUTPUT` and
 * `$GITHUB_STEP_SUMMARY` per step, stopping at the first failing step.
 * The binary under test comes in through the `binary` input (or PATH).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ROOT, binPath } from "../../helpers/cli.ts";
import { tempDirs } from "../../journal/tmp.ts";
import { AGENT_VECTORS, RUN_VECTORS, parseGithubOutput, parseJunit, runnerView } from "./fixture.ts";

const dirs = tempDirs("e2e-action");
afterAll(() => dirs.cleanup());

interface Step {
  name: string;
  id: string;
  shell: string;
  run: string;
  env?: Record<string, string>;
}
interface Action {
  inputs: Record<string, { default?: string }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: Step[] };
}

const ACTION = Bun.YAML.parse(readFileSync(join(ROOT, "action.yml"), "utf8")) as Action;

interface ActionRun {
  code: number;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
  summary: string;
  stepsRun: string[];
}

/** Evaluate the expressions the action uses: inputs.X, github.X, steps.S.outputs.O; anything else fails the test. */
function evaluate(text: string, ctx: { inputs: Record<string, string>; github: Record<string, string>; steps: Record<string, Record<string, string>> }): string {
  return text.replace(/\$\{\{\s*([^}]*?)\s*\}\}/g, (_, expr: string) => {
    let m = /^inputs\.([A-Za-z0-9_-]+)$/.exec(expr);
    if (m) {
      if (!(m[1]! in ACTION.inputs)) throw new Error(`undeclared input ${m[1]}`);
      return ctx.inputs[m[1]!] ?? ACTION.inputs[m[1]!]!.default ?? "";
    }
    m = /^github\.([a-z_]+)$/.exec(expr);
    if (m) return ctx.github[m[1]!] ?? "";
    m = /^steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)$/.exec(expr);
    if (m) return ctx.steps[m[1]!]?.[m[2]!] ?? "";
    throw new Error(`expression the test runner does not know: ${expr}`);
  });
}

function runAction(workspace: string, inputs: Record<string, string>, opts: { path?: string; actionPath?: string; repository?: string } = {}): ActionRun {
  const github = { action_path: opts.actionPath ?? ROOT, action_repository: opts.repository ?? "" };
  const ctx = { inputs, github, steps: {} as Record<string, Record<string, string>> };
  const tmp = dirs.make();
  let stdout = "";
  let stderr = "";
  let summary = "";
  let code = 0;
  const stepsRun: string[] = [];
  for (const [i, step] of ACTION.runs.steps.entries()) {
    const script = join(tmp, `step-${i}.sh`);
    writeFileSync(script, step.run);
    const output = join(tmp, `output-${i}`);
    const stepSummary = join(tmp, `summary-${i}`);
    writeFileSync(output, "");
    writeFileSync(stepSummary, "");
    const env: Record<string, string> = {
      PATH: opts.path ?? "/usr/local/bin:/usr/bin:/bin",
      HOME: tmp,
      NO_COLOR: "1",
      GITHUB_ACTIONS: "true",
      GITHUB_WORKSPACE: workspace,
      GITHUB_OUTPUT: output,
      GITHUB_STEP_SUMMARY: stepSummary,
      RUNNER_TEMP: tmp,
    };
    for (const [k, v] of Object.entries(step.env ?? {})) env[k] = evaluate(String(v), ctx);
    const r = Bun.spawnSync(["bash", "--noprofile", "--norc", "-eo", "pipefail", script], { cwd: workspace, env, stdout: "pipe", stderr: "pipe" });
    stepsRun.push(step.id);
    stdout += r.stdout.toString();
    stderr += r.stderr.toString();
    summary += readFileSync(stepSummary, "utf8");
    ctx.steps[step.id] = parseGithubOutput(readFileSync(output, "utf8"));
    code = r.exitCode ?? -1;
    if (code !== 0) break;
  }
  const outputs: Record<string, string> = {};
  for (const [name, o] of Object.entries(ACTION.outputs)) outputs[name] = evaluate(o.value, ctx);
  return { code, stdout, stderr, outputs, summary, stepsRun };
}

function workspace(): string {
  const ws = dirs.make();
  mkdirSync(join(ws, "journals"));
  copyFileSync(join(RUN_VECTORS, "chain-4.jsonl"), join(ws, "journals", "a.jsonl"));
  copyFileSync(join(RUN_VECTORS, "hazards.jsonl"), join(ws, "journals", "b.jsonl"));
  copyFileSync(join(RUN_VECTORS, "hazards-payload-edit.jsonl"), join(ws, "tampered.jsonl"));
  copyFileSync(join(AGENT_VECTORS, "agent-a.tar"), join(ws, "agent-a.tar"));
  return ws;
}

describe("action.yml", () => {
  test("is a composite action whose every step is a bash run step taking inputs only through env", () => {
    expect(ACTION.runs.using).toBe("composite");
    for (const k of ["journal", "receipt", "public-key", "seal", "version", "binary"]) expect(ACTION.inputs).toHaveProperty(k);
    for (const step of ACTION.runs.steps) {
      expect([step.id, step.shell]).toEqual([step.id, "bash"]);
      // An expression inside the script text would be spliced in unescaped (script injection).
      expect(step.run).not.toContain("${{");
    }
  });

  test("verifies journals (a glob) and a receipt with annotations, summary, JUnit and outputs; a tampered journal fails the step", () => {
    const ws = workspace();
    const r = runAction(ws, { journal: "journals/*.jsonl\ntampered.jsonl\n", receipt: "agent-a.tar", binary: binPath() });
    expect(r.stepsRun).toEqual(["install", "verify"]);
    expect(r.code).toBe(1);
    expect(r.outputs).toMatchObject({
      verdict: "failed",
      "journal-verdict": "failed",
      "journal-count": "4\n300\n300",
      "receipt-verdict": "verified",
      "receipt-count": "60",
      junit: "bernstein-junit",
    });
    expect(r.outputs["journal-head"]!.split("\n")).toHaveLength(3);
    expect(r.outputs["receipt-head"]).toMatch(/^[0-9a-f]{64}$/);
    expect(runnerView(r.stdout).commands).toEqual([
      expect.stringMatching(/^::error file=tampered\.jsonl,line=237,title=Chain divergence at step 236::/),
    ]);
    expect(r.summary).toContain("### ❌ bernstein journal verify: 1 failed of 3 inputs");
    expect(r.summary).toContain("### ✅ bernstein replay verify: 1 input verified");
    const journal = parseJunit(join(ws, "bernstein-junit", "journal.xml"));
    expect(journal.cases.map((c) => [c.name, c.failure?.tag ?? null])).toEqual([
      ["journals/a.jsonl", null],
      ["journals/b.jsonl", null],
      ["tampered.jsonl", "failure"],
    ]);
    expect(parseJunit(join(ws, "bernstein-junit", "receipt.xml")).cases.map((c) => c.name)).toEqual(["agent-a.tar"]);
  });

  test("all verified: exit 0; a bernstein on PATH is used when no binary or version is given", () => {
    const ws = workspace();
    const bin = dirs.make();
    symlinkSync(binPath(), join(bin, "bernstein"));
    const r = runAction(ws, { journal: "journals/a.jsonl", receipt: "agent-a.tar" }, { path: `${bin}:/usr/local/bin:/usr/bin:/bin` });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`at ${join(bin, "bernstein")}`);
    expect(r.outputs).toMatchObject({ verdict: "verified", "journal-verdict": "verified", "journal-count": "4", "receipt-verdict": "verified" });
  });

  test("a seal and a public key reach the binary; a missing input is an error verdict (exit 3)", () => {
    const ws = workspace();
    writeFileSync(join(ws, "seal.json"), JSON.stringify({ event_count: 5, head: "00" }));
    const r = runAction(ws, { journal: "journals/a.jsonl", seal: "seal.json", binary: binPath() });
    expect(r.code).toBe(1);
    expect(runnerView(r.stdout).commands).toEqual([
      expect.stringMatching(/^::error file=journals\/a\.jsonl,title=Seal mismatch::identity=mismatched: the journal holds 4 events/),
    ]);
    const k = runAction(ws, { receipt: "agent-a.tar\nnope.tar", "public-key": "missing.pub", binary: binPath() });
    expect(k.outputs["receipt-verdict"]).toBe("error");
    expect(k.code).not.toBe(0);
    const gone = runAction(ws, { journal: "gone.jsonl", binary: binPath() });
    expect([gone.code, gone.outputs.verdict]).toEqual([3, "error"]);
  });

  test("refusals: nothing to verify (exit 2); a binary that is not executable (exit 2)", () => {
    const ws = workspace();
    const none = runAction(ws, { binary: binPath() });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("nothing to verify");
    const notExec = join(ws, "journals", "a.jsonl");
    const bad = runAction(ws, { journal: "journals/a.jsonl", binary: notExec });
    expect([bad.code, bad.stepsRun]).toEqual([2, ["install"]]);
    expect(bad.stderr).toContain("is not an executable file");
    // No binary, no bernstein on PATH, no release location: a clear refusal, not a download attempt.
    const nowhere = runAction(ws, { journal: "journals/a.jsonl" }, { path: dirname(Bun.which("bash")!) + ":/usr/bin:/bin" });
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toContain("cannot tell which release to install");
  });

  test("installs through scripts/install.sh --version V --dir DIR --base-url URL when no binary is at hand", () => {
    const ws = workspace();
    // A stand-in install.sh (the real one is tested on its own): it records its arguments and installs the test binary.
    const actionDir = dirs.make();
    mkdirSync(join(actionDir, "scripts"));
    copyFileSync(join(ROOT, "package.json"), join(actionDir, "package.json"));
    const log = join(actionDir, "install-args");
    writeFileSync(
      join(actionDir, "scripts", "install.sh"),
      `#!/bin/bash\nset -eu\nprintf '%s\\n' "$@" > '${log}'\ndir=""\nwhile [ $# -gt 0 ]; do [ "$1" = --dir ] && dir="$2"; shift; done\nmkdir -p "$dir"\nln -s '${binPath()}' "$dir/bernstein"\n`,
    );
    chmodSync(join(actionDir, "scripts", "install.sh"), 0o755);
    const version = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version as string;
    const r = runAction(ws, { journal: "journals/a.jsonl" }, { actionPath: actionDir, repository: "acme/bernstein" });
    expect(r.code).toBe(0);
    const args = readFileSync(log, "utf8").trim().split("\n");
    expect(args).toEqual(["--version", version, "--dir", expect.stringMatching(new RegExp(`/bernstein-${version.replace(/\./g, "\\.")}$`)), "--base-url", "https://github.com/acme/bernstein/releases/download"]);
    const pinned = runAction(ws, { journal: "journals/a.jsonl", version: "v9.9.9", "base-url": "http://127.0.0.1:9/rel" }, { actionPath: actionDir });
    expect(pinned.code).toBe(0);
    expect(readFileSync(log, "utf8").trim().split("\n")).toEqual(["--version", "9.9.9", "--dir", expect.stringMatching(/\/bernstein-9\.9\.9$/), "--base-url", "http://127.0.0.1:9/rel"]);
    expect(pinned.outputs.verdict).toBe("verified");
  });
});
