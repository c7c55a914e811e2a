import { join } from "node:path";

/** Where the task server and the orchestrator keep their runtime state. */
export function runtimeDir(sddDir: string): string {
  return join(sddDir, "runtime");
}

/** The durable SQLite task store (WAL mode; `-wal`/`-shm` beside it). */
export function tasksDbPath(sddDir: string): string {
  return join(sddDir, "runtime", "tasks.db");
}

/** `{url, host, port, pid, token, started_at}` of the running server (0600). */
export function serverInfoPath(sddDir: string): string {
  return join(sddDir, "runtime", "server.json");
}

/** Held by the process that serves `tasks.db` (one server per state dir). */
export function serverLockPath(sddDir: string): string {
  return join(sddDir, "runtime", "server.lock");
}

/** `{pid, run_id, server_url}` of the running orchestrator (0600). */
export function orchestratorInfoPath(sddDir: string): string {
  return join(sddDir, "runtime", "orchestrator.json");
}

/** Captured stdout+stderr of each agent subprocess. */
export function agentLogPath(sddDir: string, agentId: string): string {
  return join(sddDir, "runtime", "logs", `${agentId}.log`);
}
