/**
 * Python's json module is the reference implementation of py-json-v1. Tests
 * ask it in ONE batched process: send a list of jobs, get a list of answers.
 */
export function runPython(script: string, input: unknown): unknown {
  const r = Bun.spawnSync(["python3", "-c", script], {
    stdin: new TextEncoder().encode(JSON.stringify(input)),
    stdout: "pipe",
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`python3 failed: ${r.stderr.toString()}`);
  return JSON.parse(r.stdout.toString());
}
