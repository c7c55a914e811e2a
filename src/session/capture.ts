import { dirname, resolve } from "node:path";
import { errorMessage } from "../errors/index.ts";
import { findServer, TaskClient } from "../server/client.ts";
import { ServerUnreachableError } from "../server/errors.ts";
import type { ServerStatus } from "../server/model.ts";
import { buildCheckpoint, buildWrapUp } from "./briefs.ts";
import { saveCheckpoint, type Checkpoint } from "./checkpoint.ts";
import { gitDiffStatSince, gitHeadSha } from "./git.ts";
import { loadSession } from "./state.ts";
import { saveWrapUp, type WrapUpBrief } from "./wrapup.ts";

/**
 * `bernstein checkpoint` / `bernstein wrap-up`: ask the running task server
 * where the session stands and write the brief under `<sdd>/sessions/`.
 * Both refuse (server_unreachable, exit 1) when the server cannot be asked:
 * a brief built from nothing would claim an empty session.
 */
const UNREACHABLE = "Cannot reach task server. Is Bernstein running? Start it with 'bernstein run' (or 'bernstein server').";

/** The project the `.sdd` directory belongs to (where git is asked). */
export function projectDir(sddDir: string): string {
  return dirname(resolve(sddDir));
}

async function connect(sddDir: string): Promise<{ client: TaskClient; status: ServerStatus }> {
  const loc = findServer(sddDir);
  if (loc === null) throw new ServerUnreachableError(UNREACHABLE, { url: null });
  const client = new TaskClient(loc);
  try {
    return { client, status: await client.status() };
  } catch (err) {
    throw new ServerUnreachableError(`${UNREACHABLE} (${errorMessage(err)})`, { url: loc.url });
  }
}

export async function captureCheckpoint(
  sddDir: string,
  opts: { goal?: string; now?: number } = {},
): Promise<{ path: string; checkpoint: Checkpoint }> {
  const { client, status } = await connect(sddDir);
  const [done, claimed, inProgress, open] = await Promise.all([
    client.listTasks({ status: "done" }),
    client.listTasks({ status: "claimed" }),
    client.listTasks({ status: "in_progress" }),
    client.listTasks({ status: "open" }),
  ]);
  const checkpoint = buildCheckpoint({
    goal: opts.goal ?? status.goal ?? "",
    done,
    inFlight: [...claimed, ...inProgress],
    open,
    gitSha: gitHeadSha(projectDir(sddDir)),
    costSpent: status.cost_usd ?? 0,
    now: opts.now ?? Date.now() / 1000,
  });
  return { path: saveCheckpoint(sddDir, checkpoint), checkpoint };
}

export async function captureWrapUp(sddDir: string, opts: { now?: number } = {}): Promise<{ path: string; brief: WrapUpBrief }> {
  const { client } = await connect(sddDir);
  const [done, failed, open] = await Promise.all([
    client.listTasks({ status: "done" }),
    client.listTasks({ status: "failed" }),
    client.listTasks({ status: "open" }),
  ]);
  // The session began when it was last saved; staleness does not matter here.
  const saved = loadSession(sddDir, { staleAfterMinutes: Number.POSITIVE_INFINITY }).state;
  const sessionStart = saved && saved.saved_at > 0 ? saved.saved_at : null;
  const brief = buildWrapUp({
    done,
    failed,
    open,
    sessionStart,
    gitDiffStat: gitDiffStatSince(projectDir(sddDir), sessionStart),
    now: opts.now ?? Date.now() / 1000,
  });
  return { path: saveWrapUp(sddDir, brief), brief };
}
