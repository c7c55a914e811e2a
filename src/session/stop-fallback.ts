import { readdirSync } from "node:fs";
import { join } from "node:path";
import { writePrettyJson } from "./files.ts";

/**
 * The diagnostic written by `bernstein stop` when the task server cannot be
 * asked for its tasks: `.sdd/runtime/session_state.json`. It records when
 * the stop happened and how many backlog tickets were open or claimed, for a
 * human to look at. Resume logic never reads it (session.json is the only
 * resumable state), which is why it has a different name.
 */
export interface StopFallback {
  /** Local wall-clock time, `%Y-%m-%dT%H:%M:%S` (no zone), as Python writes it. */
  stopped_at: string;
  open_tasks: number;
  claimed_tasks: number;
}

export function stopFallbackPath(sddDir: string): string {
  return join(sddDir, "runtime", "session_state.json");
}

/** Python `time.strftime("%Y-%m-%dT%H:%M:%S")` in the local zone (TZ honoured). */
export function localIsoSeconds(when: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return (
    `${String(when.getFullYear()).padStart(4, "0")}-${p(when.getMonth() + 1)}-${p(when.getDate())}` +
    `T${p(when.getHours())}:${p(when.getMinutes())}:${p(when.getSeconds())}`
  );
}

/** Count `*.yaml` tickets in a backlog directory (0 when it is missing; `.md` tickets are not counted). */
export function countYamlTickets(dir: string): number {
  try {
    return readdirSync(dir, { withFileTypes: true }).filter((e) => !e.isDirectory() && e.name.endsWith(".yaml")).length;
  } catch {
    return 0;
  }
}

/** Build and write the fallback file (pretty JSON indent 2, atomic, 0644: it holds no task data). */
export function writeStopFallback(sddDir: string, now = new Date()): { path: string; state: StopFallback } {
  const state: StopFallback = {
    stopped_at: localIsoSeconds(now),
    open_tasks: countYamlTickets(join(sddDir, "backlog", "open")),
    claimed_tasks: countYamlTickets(join(sddDir, "backlog", "claimed")),
  };
  const path = writePrettyJson(stopFallbackPath(sddDir), { ...state }, 0o644);
  return { path, state };
}
