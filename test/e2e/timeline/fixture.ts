/**
 * Real runs for the timeline tests: `bernstein run` on the demo plan
 * (examples/demo), and a "flaky" variant of it whose agent leaves one
 * task's output out on its first attempt (the gate fails, the task is
 * retried and then done) and never writes an extra `lint` task's output
 * (retried, then failed for good).
 */
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { binPath, ROOT } from "../../helpers/cli.ts";

const made: string[] = [];

export function cleanupRuns(): void {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
}

export interface RunDir {
  dir: string;
  sddDir: string;
  runId: string;
  journal: string;
  code: number;
  stderr: string;
}

const FLAKY_AGENT = `import { mkdirSync, writeFileSync } from "node:fs";
const env = process.env;
const id = env.BERNSTEIN_TASK_ID ?? "";
await new Response(Bun.stdin.stream()).text();
await Bun.sleep(120);
const skip = id === "lint" || (id === "write-docs" && env.BERNSTEIN_ATTEMPT === "1");
if (!skip) {
  mkdirSync("out", { recursive: true });
  writeFileSync("out/" + id + ".md", "done\\n");
}
console.log(JSON.stringify({ result_summary: id + (skip ? ": nothing written" : ": written"), cost_usd: 0.004 }));
`;

const LINT_TASK = `  - id: lint
    title: Lint the handlers
    role: qa
`;

export async function demoRun(variant: "demo" | "flaky" = "demo"): Promise<RunDir> {
  const dir = mkdtempSync(join(tmpdir(), "bern-timeline-"));
  made.push(dir);
  for (const f of ["plan.yaml", "bernstein.yaml", "agent.ts"]) copyFileSync(join(ROOT, "examples", "demo", f), join(dir, f));
  if (variant === "flaky") {
    writeFileSync(join(dir, "agent.ts"), FLAKY_AGENT);
    writeFileSync(join(dir, "plan.yaml"), readFileSync(join(dir, "plan.yaml"), "utf8") + LINT_TASK);
  }
  const proc = Bun.spawn([binPath(), "run", "plan.yaml", "--port", "0"], {
    cwd: dir,
    env: { ...process.env, NO_COLOR: "1" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const sddDir = join(dir, ".sdd");
  const [runId] = readdirSync(join(sddDir, "runs"));
  if (!runId) throw new Error(`bernstein run left no run (exit ${code}): ${stderr}`);
  return { dir, sddDir, runId, journal: join(sddDir, "runs", runId, "journal.jsonl"), code, stderr };
}

/** Outcomes of the attempts as the journal records them, in claim order (the test's own reading). */
export function journalRows(journal: string): Record<string, any>[] {
  return readFileSync(journal, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}
