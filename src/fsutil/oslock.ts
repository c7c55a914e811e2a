/**
 * `flock(2)` through `bun:ffi` (the runtime has no lock API). Loaded on
 * first use only: start-up of commands that never lock pays nothing.
 * null where libc cannot be opened (Windows): callers fall back to
 * exclusive-create locks.
 */
export interface OsLock {
  /** flock(fd, LOCK_EX | LOCK_NB): "locked", or "busy" when another open file holds it. */
  tryLock(fd: number): "locked" | "busy";
  unlock(fd: number): void;
}

const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;
const EWOULDBLOCK = new Set([11, 35]); // EAGAIN on Linux, macOS
const EINTR = 4;

let loaded: OsLock | null | undefined;

const LIBC: Record<string, { libs: string[]; errno: string }> = {
  // musl's loader answers any "libc.so*" name with itself.
  linux: { libs: ["libc.so.6", "libc.so"], errno: "__errno_location" },
  darwin: { libs: ["libc.dylib", "/usr/lib/libSystem.B.dylib"], errno: "__error" },
  freebsd: { libs: ["libc.so.7"], errno: "__error" },
};

function load(): OsLock | null {
  const spec = LIBC[process.platform];
  if (!spec) return null;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ffi = require("bun:ffi") as typeof import("bun:ffi");
  for (const name of spec.libs) {
    let lib;
    try {
      lib = ffi.dlopen(name, {
        flock: { args: [ffi.FFIType.i32, ffi.FFIType.i32], returns: ffi.FFIType.i32 },
        [spec.errno]: { args: [], returns: ffi.FFIType.ptr },
      });
    } catch {
      continue;
    }
    const flock = lib.symbols.flock as (fd: number, op: number) => number;
    const errnoPtr = lib.symbols[spec.errno] as () => number | null;
    const errno = (): number => {
      const p = errnoPtr();
      return p ? ffi.read.i32(p as never, 0) : 0;
    };
    return {
      tryLock(fd) {
        for (;;) {
          if (flock(fd, LOCK_EX | LOCK_NB) === 0) return "locked";
          const e = errno();
          if (EWOULDBLOCK.has(e)) return "busy";
          if (e === EINTR) continue;
          throw Object.assign(new Error(`flock failed (errno ${e})`), { code: `ERRNO_${e}` });
        }
      },
      unlock(fd) {
        flock(fd, LOCK_UN);
      },
    };
  }
  return null;
}

export function osLock(): OsLock | null {
  if (loaded === undefined) loaded = process.env.BERNSTEIN_NO_OS_LOCK === "1" ? null : load();
  return loaded;
}
