/**
 * Batched cross-checks against Python (development tooling only: the
 * product never needs Python). One python3 process answers a whole batch:
 * a JSON list in on stdin, a JSON list out on stdout.
 */
export function pythonAvailable(): boolean {
  try {
    return Bun.spawnSync(["python3", "-c", "print(1)"], { stdout: "pipe", stderr: "pipe" }).exitCode === 0;
  } catch {
    return false;
  }
}

export async function runPythonBatch<T>(script: string, input: unknown, args: string[] = []): Promise<T> {
  const proc = Bun.spawn(["python3", "-c", script, ...args], {
    stdin: new Blob([JSON.stringify(input)]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`python3 failed (exit ${code}): ${err.slice(0, 2000)}`);
  return JSON.parse(out) as T;
}

/** Run a python script file over arguments (the reference verifiers). */
export async function runPythonFile(file: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(["python3", file, ...args], { stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}
