import { expect } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const ROOT = join(import.meta.dir, "..", "..");
/** The test vectors, copied into the repository (see test/fixtures/vectors/SOURCE.md). */
export const VECTORS = process.env.BERNSTEIN_VECTORS ?? join(ROOT, "test", "fixtures", "vectors");

export function binPath(): string {
  return process.env.BERNSTEIN_BIN ?? join(ROOT, "dist", "bernstein");
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  stdin?: string | Uint8Array;
  timeoutMs?: number;
}

/**
 * The test runner's environment without the GitHub Actions variables: run
 * on a GitHub runner, they would switch every verify to `--format github`
 * and append to the job's own summary. Tests that want them pass them in `env`.
 */
function hostEnv(): Record<string, string | undefined> {
  const env = { ...process.env };
  for (const k of ["GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "GITHUB_WORKSPACE"]) delete env[k];
  return env;
}

/** Spawn the compiled binary with NO_COLOR=1 and collect its output. */
export async function bernstein(args: string[], opts: RunOptions = {}): Promise<CliResult> {
  const proc = Bun.spawn([binPath(), ...args], {
    cwd: opts.cwd ?? ROOT,
    env: { ...hostEnv(), NO_COLOR: "1", ...opts.env },
    stdin: opts.stdin === undefined ? "ignore" : new Blob([opts.stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = opts.timeoutMs ? setTimeout(() => proc.kill("SIGKILL"), opts.timeoutMs) : undefined;
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (timer) clearTimeout(timer);
  return { code, stdout, stderr };
}

/** Run and parse stdout as exactly one JSON document. */
export async function bernsteinJson(args: string[], opts: RunOptions = {}): Promise<CliResult & { json: any }> {
  const r = await bernstein([...args, "--as-json"], opts);
  let json: any;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    throw new Error(`stdout is not one JSON document (exit ${r.code}):\n${r.stdout}\nstderr:\n${r.stderr}`);
  }
  return { ...r, json };
}

/**
 * Spawn the compiled binary under `/usr/bin/time -f %M`: its stdout, exit
 * code and peak RSS in KB (null when /usr/bin/time is not installed).
 */
export async function bernsteinPeak(args: string[], opts: RunOptions = {}): Promise<{ code: number; stdout: string; kb: number | null }> {
  const time = existsSync("/usr/bin/time") ? ["/usr/bin/time", "-f", "%M"] : [];
  const proc = Bun.spawn([...time, binPath(), ...args], {
    cwd: opts.cwd ?? ROOT,
    env: { ...hostEnv(), NO_COLOR: "1", ...opts.env },
    stdin: opts.stdin === undefined ? "ignore" : new Blob([opts.stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const kb = time.length > 0 ? Number(stderr.trim().split("\n").pop()) : null;
  return { code, stdout, kb };
}

/** Bytes in the longest line of the file. */
export function longestLine(path: string): number {
  let n = 0;
  for (const line of readFileSync(path, "latin1").split("\n")) n = Math.max(n, line.length);
  return n;
}

/** A peak RSS of bernsteinPeak's (KB) within 64 MB + `k` x a row of `rowBytes`; unchecked without /usr/bin/time. */
export function expectWithinRowBound(args: string[], kb: number | null, rowBytes: number, k = 3): void {
  if (kb !== null) expect({ args, kb, bounded: kb < 64_000 + (k * rowBytes) / 1000 }).toEqual({ args, kb, bounded: true });
}
