import { readdirSync, rmSync } from "node:fs";
import { lockIsHeld } from "../fsutil/lock.ts";
import { join } from "node:path";
import { compareCodePoints } from "../pyjson/encode.ts";
import { pyIntFromString, pyStrip } from "../pyjson/python.ts";
import { JOURNAL_LOCK_NAME } from "./paths.ts";

/**
 * `BERNSTEIN_REPLAY_RETENTION=N` (spec §1.6, the #5881 behaviour): after a
 * journal is opened, keep at most N run directories under `<sdd>/runs`,
 * deleting the oldest by name, never the active run. N <= 0, empty or
 * unparsable means keep everything.
 */

export const RETENTION_ENV = "BERNSTEIN_REPLAY_RETENTION";

/** Python `int(env.strip())` with ValueError -> 0. */
export function parseRetention(raw: string | undefined): number {
  if (raw === undefined) return 0;
  const t = pyStrip(raw);
  if (t === "") return 0;
  const n = pyIntFromString(t);
  if (n === null || n <= 0n) return 0;
  return n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n);
}

/** A run another live process is appending to (its journal's OS lock is held). */
function heldByAnotherWriter(dir: string): boolean {
  return lockIsHeld(join(dir, JOURNAL_LOCK_NAME));
}

/**
 * Delete the oldest run directories beyond `retention`. Candidates are real
 * directories directly under the runs root (symlinks are neither followed
 * nor counted: deleting through one could reach outside `.sdd`), sorted by
 * name in code-point order. The active run and runs whose journal lock is
 * held by another live process are never deleted. Removal errors are
 * ignored (best effort, like Python's). Returns the names removed.
 */
export function pruneRuns(runsRootPath: string, activeRunId: string, retention: number): string[] {
  if (retention <= 0) return [];
  let names: string[];
  try {
    names = readdirSync(runsRootPath, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort(compareCodePoints);
  } catch {
    return [];
  }
  let excess = names.length - retention;
  const removed: string[] = [];
  for (const name of names) {
    if (excess <= 0) break;
    if (name === activeRunId) continue;
    const dir = join(runsRootPath, name);
    if (heldByAnotherWriter(dir)) continue;
    try {
      rmSync(dir, { recursive: true, force: true });
      removed.push(name);
    } catch {
      /* best effort */
    }
    excess--;
  }
  return removed;
}

/** Apply the retention from the environment (read on every journal open). */
export function applyRetention(
  runsRootPath: string,
  activeRunId: string,
  env: Record<string, string | undefined> = process.env,
): string[] {
  return pruneRuns(runsRootPath, activeRunId, parseRetention(env[RETENTION_ENV]));
}
