import { readFileSync } from "node:fs";
import { binPath } from "../../helpers/cli.ts";

/**
 * Spawn `journal record RUN --as-json`, pipe `stdinFile` into it and close
 * its stdin; resolves once the pipe took all of it (the command then has
 * the whole line, or all but a pipe buffer of it) and a moment more, so the
 * long row is being encoded when it returns.
 */
export async function recordEncoding(cwd: string, run: string, stdinFile: string) {
  const proc = Bun.spawn([binPath(), "journal", "record", run, "--as-json"], {
    cwd,
    env: { ...process.env, NO_COLOR: "1" },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  proc.stdin.write(readFileSync(stdinFile));
  await proc.stdin.end();
  await Bun.sleep(300);
  return { proc, out };
}

/** SIGTERM the process recordEncoding started: its exit code, seconds from the signal to its exit, and its output. */
export async function terminate(started: Awaited<ReturnType<typeof recordEncoding>>) {
  const t0 = performance.now();
  started.proc.kill("SIGTERM");
  const code = await started.proc.exited;
  const seconds = (performance.now() - t0) / 1000;
  const [stdout, stderr] = await started.out;
  return { code, seconds, stdout, stderr };
}
