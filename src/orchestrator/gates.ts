/**
 * Verification gates: shell commands from `verify:` in bernstein.yaml run
 * after an agent exits 0. Each gate sees the agent's environment (task id,
 * attempt, ...) plus BERNSTEIN_GATE_NAME; its output is appended to the
 * agent's log. A gate that exits non-zero (or times out) is a failed signal
 * `gate:<name>`.
 */
import { appendFileSync } from "node:fs";
import type { GateSpec } from "./config.ts";
import { spawnLogged, type RunningProcess } from "./process.ts";

export interface GateRun {
  failedSignals: string[];
  /** Gates that ran, in order, with their exit codes (null = killed/timeout). */
  results: { name: string; exit_code: number | null; timed_out: boolean }[];
}

export function shellArgv(command: string): string[] {
  return process.platform === "win32" ? ["cmd.exe", "/d", "/s", "/c", command] : ["/bin/sh", "-c", command];
}

/**
 * Run the gates one after another (later gates usually depend on earlier
 * ones passing, e.g. build before test); stop at the first failure.
 * `track` lets the caller kill a running gate on a forced stop.
 */
export async function runGates(
  gates: readonly GateSpec[],
  ctx: { cwd: string; env: Record<string, string | undefined>; logPath: string; track?: (p: RunningProcess | null) => void },
): Promise<GateRun> {
  const out: GateRun = { failedSignals: [], results: [] };
  for (const gate of gates) {
    try {
      appendFileSync(ctx.logPath, `\n[bernstein] verify gate '${gate.name}': ${gate.run}\n`);
    } catch {
      /* logging is best effort */
    }
    const p = spawnLogged({
      argv: shellArgv(gate.run),
      env: { ...ctx.env, BERNSTEIN_GATE_NAME: gate.name },
      cwd: ctx.cwd,
      stdin: null,
      logPath: ctx.logPath,
      timeoutMs: gate.timeout_s * 1000,
    });
    ctx.track?.(p);
    const r = await p.done;
    ctx.track?.(null);
    out.results.push({ name: gate.name, exit_code: r.exitCode, timed_out: r.timedOut });
    if (r.exitCode !== 0) {
      out.failedSignals.push(`gate:${gate.name}`);
      break;
    }
  }
  return out;
}
