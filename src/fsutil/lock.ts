import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";

/**
 * A cross-process exclusive lock: the lock file is created with O_EXCL and
 * holds the owner's pid. A lock whose owner no longer runs is stale and is
 * taken over (a writer killed with SIGKILL must not block the next one).
 */
export class LockHeldError extends Error {
  readonly lockPath: string;
  readonly ownerPid: number | null;
  constructor(lockPath: string, ownerPid: number | null) {
    super(`${lockPath} is held by another writer${ownerPid ? ` (pid ${ownerPid})` : ""}`);
    this.name = "LockHeldError";
    this.lockPath = lockPath;
    this.ownerPid = ownerPid;
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readOwner(lockPath: string): number | null {
  try {
    const n = Number.parseInt(readFileSync(lockPath, "utf8").trim(), 10);
    return Number.isFinite(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}

export interface FileLock {
  readonly path: string;
  release(): void;
}

export function acquireLock(lockPath: string): FileLock {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(lockPath, "wx", 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      let released = false;
      return {
        path: lockPath,
        release() {
          if (released) return;
          released = true;
          try {
            if (readOwner(lockPath) === process.pid) unlinkSync(lockPath);
          } catch {
            /* already gone */
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const owner = readOwner(lockPath);
      if (owner !== null && owner !== process.pid && pidAlive(owner)) throw new LockHeldError(lockPath, owner);
      if (owner === process.pid) throw new LockHeldError(lockPath, owner);
      // Stale (owner gone, or the file is empty because the owner died
      // between create and write): remove and retry.
      try {
        unlinkSync(lockPath);
      } catch {
        /* someone else removed it first */
      }
    }
  }
  throw new LockHeldError(lockPath, readOwner(lockPath));
}
