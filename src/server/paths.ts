import { chmodSync, closeSync, existsSync, lstatSync, mkdirSync, openSync } from "node:fs";
import { dirname, join } from "node:path";
import { ensureStateDir } from "../fsutil/state-dir.ts";

/**
 * Runtime state (task descriptions, results, tokens, agent output) is the
 * owner's only: directories 0700, files 0600. A directory that already
 * exists with wider bits is narrowed; a symlink is left alone (its target
 * is not ours to change).
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

export function ensurePrivateDir(dir: string): void {
  mkdirSync(dirname(dir), { recursive: true });
  try {
    mkdirSync(dir, { mode: PRIVATE_DIR_MODE });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  narrow(dir, PRIVATE_DIR_MODE, true);
}

/** Create `path` empty with mode 0600 if missing; narrow an existing one. */
export function ensurePrivateFile(path: string): void {
  if (!existsSync(path)) closeSync(openSync(path, "a", PRIVATE_FILE_MODE));
  narrow(path, PRIVATE_FILE_MODE, false);
}

/** Narrow the mode of a real (non-symlink) file or directory to `mode`. */
export function narrow(path: string, mode: number, dir: boolean): void {
  try {
    const st = lstatSync(path);
    if ((dir ? st.isDirectory() : st.isFile()) && (st.mode & 0o777 & ~mode) !== 0) chmodSync(path, mode);
  } catch {
    /* gone, or not ours: the write that follows reports what matters */
  }
}

export function ensureRuntimeDir(sddDir: string): string {
  ensureStateDir(sddDir);
  const dir = runtimeDir(sddDir);
  ensurePrivateDir(dir);
  return dir;
}

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
