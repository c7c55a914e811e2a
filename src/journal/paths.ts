import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { dirname, basename, join, resolve, sep } from "node:path";
import { UsageError } from "../errors/index.ts";
import { realpathOfExistingPrefix } from "../fsutil/realpath.ts";

/**
 * Where a run's files live: `<sdd>/runs/<run_id>/`. A run id becomes a path
 * component, so it is validated and the result is checked to stay inside
 * `<sdd>/runs` after symlinks are resolved.
 */

export const RUNS_DIR_NAME = "runs";
export const JOURNAL_FILE_NAME = "journal.jsonl";
export const JOURNAL_LOCK_NAME = "journal.lock";
export const METADATA_FILE_NAME = "metadata.json";
export const SEAL_FILE_NAME = "seal.json";
export const DIVERGENCE_REPORT_NAME = "divergence_report.json";

/**
 * `^[A-Za-z0-9_.-]{1,64}$`, not `.` or `..`. Unlike Python's `re.match`
 * (whose `$` also matches before a final "\n", so `"run1\n"` passes there),
 * a trailing newline is rejected: it would create a directory name no shell
 * user can type and that other tools disagree about.
 */
const RUN_ID = /^[A-Za-z0-9_.-]{1,64}$/;

function describe(runId: string): string {
  return JSON.stringify(runId);
}

/** The run id, unchanged, or a `UsageError` (`invalid_run_id`, exit 2). */
export function validateRunId(runId: string): string {
  if (typeof runId !== "string" || !RUN_ID.test(runId) || runId === "." || runId === "..") {
    throw new UsageError(
      `unsafe run_id for journal path: ${describe(String(runId))} (allowed: 1-64 of A-Z a-z 0-9 _ . -, not '.' or '..')`,
      "invalid_run_id",
      { run_id: String(runId) },
    );
  }
  return runId;
}

export { realpathOfExistingPrefix };

export function runsRoot(sddDir: string): string {
  return join(resolve(sddDir), RUNS_DIR_NAME);
}


function isInside(child: string, root: string): boolean {
  return child === root || child.startsWith(root.endsWith(sep) ? root : root + sep);
}

/**
 * `<sdd>/runs/<run_id>`, validated and contained: a run directory that is a
 * symlink pointing outside the runs root is refused (`invalid_run_id`).
 */
export function runDir(sddDir: string, runId: string): string {
  validateRunId(runId);
  const root = runsRoot(sddDir);
  const dir = join(root, runId);
  const realRoot = realpathOfExistingPrefix(root);
  const realDir = realpathOfExistingPrefix(dir);
  if (!isInside(realDir, realRoot) || realDir === realRoot) {
    throw new UsageError(`run_id escapes the journal runs root: ${describe(runId)}`, "invalid_run_id", {
      run_id: runId,
    });
  }
  return dir;
}

export function journalPath(sddDir: string, runId: string): string {
  const dir = runDir(sddDir, runId);
  const p = join(dir, JOURNAL_FILE_NAME);
  // journal.jsonl itself may be a symlink out of the tree.
  const real = realpathOfExistingPrefix(p);
  if (!isInside(real, realpathOfExistingPrefix(runsRoot(sddDir)))) {
    throw new UsageError(`run_id escapes the journal runs root: ${describe(runId)}`, "invalid_run_id", {
      run_id: runId,
    });
  }
  return p;
}

/** The lock file guarding appends to the journal at `path`. */
export function lockPathFor(journalFile: string): string {
  return join(dirname(journalFile), JOURNAL_LOCK_NAME);
}
