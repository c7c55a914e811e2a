import { closeSync, constants, fstatSync, ftruncateSync, linkSync, lstatSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { ownerText, parseOwner, pidAlive, processStartTime } from "./owner.ts";
import { osLock } from "./oslock.ts";

/**
 * A cross-process exclusive lock on `<path>`.
 *
 * On Linux and macOS the lock IS an OS lock: `flock(LOCK_EX|LOCK_NB)` on
 * the lock file, held for the holder's life. The kernel makes it exclusive
 * under any interleaving of any number of contenders, and it dies with its
 * holder (kill -9, container restart), so there is no stale-lock takeover
 * to race on and a reused pid can never keep it alive. The file's content
 * (`<pid> <start-time>`) only names the holder in error messages.
 *
 * The holder unlinks the file while still holding the lock; a contender
 * that opened the old inode just before that and then won its flock sees
 * that the path no longer names its inode and retries, so two holders of
 * two inodes cannot coexist.
 *
 * Where no OS lock is available (Windows), the file is created atomically
 * with its content already in it (`link()` of a filled temp file: a lock is
 * never seen empty) and a lock is stale only when its pid is gone or runs
 * with another start time; that takeover is not atomic (documented).
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

export interface FileLock {
  readonly path: string;
  release(): void;
}

/**
 * A flock probe of another process (retention's "is this run being
 * written?") holds the lock for microseconds; a writer starting in that
 * instant retries briefly instead of being refused. A real holder holds it
 * for far longer than this.
 */
const CONTENDED_RETRIES = 5;
const CONTENDED_WAIT_MS = 2;

function readOwnerPid(lockPath: string): number | null {
  try {
    return parseOwner(readFileSync(lockPath, "utf8"))?.pid ?? null;
  } catch {
    return null;
  }
}

function sameInode(fd: number, path: string): boolean {
  try {
    const a = fstatSync(fd);
    const b = lstatSync(path);
    return a.ino === b.ino && a.dev === b.dev;
  } catch {
    return false;
  }
}

const OPEN_FLAGS = constants.O_RDWR | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0);

function acquireOsLock(lockPath: string, lock: NonNullable<ReturnType<typeof osLock>>): FileLock {
  for (let attempt = 0; ; attempt++) {
    const fd = openSync(lockPath, OPEN_FLAGS, 0o600);
    let held = false;
    try {
      const r = lock.tryLock(fd);
      if (r === "busy") {
        if (attempt < CONTENDED_RETRIES) {
          Bun.sleepSync(CONTENDED_WAIT_MS);
          continue;
        }
        throw new LockHeldError(lockPath, readOwnerPid(lockPath));
      }
      // The previous holder unlinked this inode after we opened it: retry on the new file.
      if (!sameInode(fd, lockPath)) {
        if (attempt > 50) throw new LockHeldError(lockPath, readOwnerPid(lockPath));
        continue;
      }
      ftruncateSync(fd, 0);
      writeSync(fd, ownerText(process.pid));
      held = true;
    } finally {
      if (!held) closeSync(fd);
    }
    let released = false;
    return {
      path: lockPath,
      release() {
        if (released) return;
        released = true;
        try {
          // Unlink while still holding the lock (see the module comment).
          if (sameInode(fd, lockPath)) unlinkSync(lockPath);
        } catch {
          /* already gone */
        } finally {
          closeSync(fd);
        }
      },
    };
  }
}

/** Windows: exclusive creation with the content in place, staleness by pid + start time. */
function acquireFileLock(lockPath: string): FileLock {
  const mine = ownerText(process.pid);
  for (let attempt = 0; attempt < 3; attempt++) {
    const tmp = `${lockPath}.${process.pid}.${attempt}.tmp`;
    const fd = openSync(tmp, "w", 0o600);
    writeSync(fd, mine);
    closeSync(fd);
    try {
      linkSync(tmp, lockPath);
      return {
        path: lockPath,
        release() {
          try {
            if (readFileSync(lockPath, "utf8") === mine) unlinkSync(lockPath);
          } catch {
            /* already gone */
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      let text = "";
      try {
        text = readFileSync(lockPath, "utf8");
      } catch {
        continue; // removed meanwhile: try again
      }
      const owner = parseOwner(text);
      if (owner && ownerAlive(owner.pid, owner.start)) throw new LockHeldError(lockPath, owner.pid);
      try {
        unlinkSync(lockPath);
      } catch {
        /* someone else removed it first */
      }
    } finally {
      try {
        unlinkSync(tmp);
      } catch {
        /* ignore */
      }
    }
  }
  throw new LockHeldError(lockPath, readOwnerPid(lockPath));
}

function ownerAlive(pid: number, start: string | null): boolean {
  if (!pidAlive(pid)) return false;
  // The pid runs; it is the lock's owner only if it started when the owner did.
  const now = processStartTime(pid);
  return start === null || now === null || now === start;
}

export function acquireLock(lockPath: string): FileLock {
  const lock = osLock();
  return lock ? acquireOsLock(lockPath, lock) : acquireFileLock(lockPath);
}

/**
 * Whether another holder has the lock at `lockPath` right now (false when
 * the file is absent or nobody holds it). With an OS lock this is a
 * non-blocking probe; contenders retry across it (CONTENDED_RETRIES).
 */
export function lockIsHeld(lockPath: string): boolean {
  const lock = osLock();
  if (!lock) {
    try {
      const owner = parseOwner(readFileSync(lockPath, "utf8"));
      return owner !== null && owner.pid !== process.pid && ownerAlive(owner.pid, owner.start);
    } catch {
      return false;
    }
  }
  let fd: number;
  try {
    fd = openSync(lockPath, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch {
    return false;
  }
  try {
    if (lock.tryLock(fd) === "busy") return true;
    lock.unlock(fd);
    return false;
  } finally {
    closeSync(fd);
  }
}
