/**
 * Agents die with their orchestrator, also when it is killed with SIGKILL
 * (which it cannot catch). Linux's parent-death signal is out of reach (Bun
 * exposes no prctl for children, and it would reach only the agent's leader,
 * not its group), so each run starts one small watchdog: this binary again,
 * in its own session, with the read end of a pipe whose write end only the
 * orchestrator holds. When the orchestrator is gone, for any reason, the
 * pipe reports end-of-file and the watchdog kills the process group of every
 * agent agents.json lists for that run (start time checked, so a reused pid
 * is never touched), then exits. Where there is no /proc (macOS, BSD) the
 * watchdog cannot verify a pid and kills nothing; the next run's reap is
 * limited the same way (see agents-file.ts).
 */
import { agentsFilePath, checkAgent, readAgentsFile } from "./agents-file.ts";
import { dirname, resolve } from "node:path";

/** How the binary is told to be a watchdog (set only by `startWatchdog`). */
export const WATCHDOG_ENV = "BERNSTEIN_INTERNAL_WATCHDOG";

export interface Watchdog {
  readonly pid: number;
}

/** Start the watchdog of run `runId`; null (with the reason passed to `warn`) when it cannot start. */
export function startWatchdog(sddDir: string, runId: string, warn: (m: string) => void): Watchdog | null {
  try {
    const proc = Bun.spawn([process.execPath], {
      env: { ...process.env, [WATCHDOG_ENV]: JSON.stringify({ agents: resolve(agentsFilePath(sddDir)), run_id: runId }) },
      stdin: "pipe",
      stdout: "ignore",
      stderr: "ignore",
      // Its own session: a terminal's Ctrl-C reaches the orchestrator only.
      detached: true,
    });
    // The pipe's write end stays open until this process exits; nothing is ever written.
    proc.unref();
    return { pid: proc.pid };
  } catch (err) {
    warn(`could not start the agent watchdog (agents may outlive a killed run until the next run reaps them): ${(err as Error).message}`);
    return null;
  }
}

/** The watchdog process itself: wait for end-of-file on stdin, then kill the run's agents. */
export async function watch(spec: string): Promise<void> {
  const { agents, run_id } = JSON.parse(spec) as { agents: string; run_id: string };
  try {
    for await (const _ of Bun.stdin.stream()) {
      /* nothing is ever sent: only the end matters */
    }
  } catch {
    /* a broken pipe is an end too */
  }
  for (const a of readAgentsFile(dirname(dirname(agents)))) {
    if (a.run_id !== run_id) continue;
    const state = checkAgent(a);
    if (state !== "alive" && state !== "group_only") continue;
    try {
      process.kill(-a.pid, "SIGKILL");
    } catch {
      /* already gone */
    }
  }
}
