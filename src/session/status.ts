import { errorMessage } from "../errors/index.ts";
import { findServer, TaskClient } from "../server/client.ts";
import type { ServerStatus, Task } from "../server/model.ts";
import { loadSession, sessionPath } from "./state.ts";

/**
 * Everything `bernstein status` shows, gathered without ever failing: a
 * server that is down is reported as down, a damaged session file as
 * corrupt. Only the rendering lives in the command.
 */
export interface StatusReport {
  server: {
    reachable: boolean;
    url: string | null;
    pid: number | null;
    /** How the server was found: environment or server.json (null: not found). */
    source: "env" | "server.json" | null;
    error: string | null;
  };
  /** From `GET /status`; null when the server is down. */
  run: Omit<ServerStatus, "server"> | null;
  /** From `GET /tasks`, in creation order; null when the server is down. */
  tasks: StatusTask[] | null;
  session: SessionSummary;
}

export interface StatusTask {
  id: string;
  title: string;
  status: string;
  role: string;
  priority: number;
  model: string | null;
  assigned_agent: string | null;
}

export interface SessionSummary {
  /** `ok` = resumable; `stale` = present but too old to resume. */
  status: "ok" | "missing" | "corrupt" | "stale";
  resumable: boolean;
  path: string;
  saved_at: number | null;
  age_seconds: number | null;
  goal: string | null;
  completed: number | null;
  pending: number | null;
  open: number | null;
  cost_spent: number | null;
  warning: string | null;
}

export function summarizeSession(sddDir: string, opts: { staleAfterMinutes?: number; now?: number } = {}): SessionSummary {
  const now = opts.now ?? Date.now() / 1000;
  const r = loadSession(sddDir, { staleAfterMinutes: opts.staleAfterMinutes, now });
  const s = r.state;
  return {
    status: r.status,
    resumable: r.status === "ok",
    path: sessionPath(sddDir),
    saved_at: s?.saved_at ?? null,
    age_seconds: s ? Math.max(0, Math.round((now - s.saved_at) * 10) / 10) : null,
    goal: s?.goal ?? null,
    completed: s?.completed_task_ids.length ?? null,
    pending: s?.pending_task_ids.length ?? null,
    open: s?.open_task_ids.length ?? null,
    cost_spent: s?.cost_spent ?? null,
    warning: r.warning ?? null,
  };
}

function taskRow(t: Task): StatusTask {
  return {
    id: t.id,
    title: t.title,
    status: t.status,
    role: t.role,
    priority: t.priority,
    model: t.model,
    assigned_agent: t.assigned_agent,
  };
}

export async function collectStatus(sddDir: string, opts: { staleAfterMinutes?: number } = {}): Promise<StatusReport> {
  const session = summarizeSession(sddDir, opts);
  const loc = findServer(sddDir);
  if (loc === null) {
    return {
      server: { reachable: false, url: null, pid: null, source: null, error: `no task server is running for ${sddDir}` },
      run: null,
      tasks: null,
      session,
    };
  }
  const client = new TaskClient(loc, { timeoutMs: 3000 });
  try {
    const [status, tasks] = await Promise.all([client.status(), client.listTasks()]);
    const { server, ...run } = status;
    return {
      server: { reachable: true, url: loc.url, pid: server.pid ?? loc.pid, source: loc.source, error: null },
      run,
      tasks: tasks.map(taskRow),
      session,
    };
  } catch (err) {
    return {
      server: { reachable: false, url: loc.url, pid: loc.pid, source: loc.source, error: errorMessage(err) },
      run: null,
      tasks: null,
      session,
    };
  }
}
