import { accessSync, constants, lstatSync, readlinkSync, realpathSync, statSync, type Stats } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { RefusalError } from "../errors/index.ts";
import { kindOf, onPseudoFs } from "./input.ts";

/**
 * The one check of a named output file before anything is written to it.
 * Every writer here makes a temp file beside OUT and renames it over OUT,
 * so whatever OUT named is replaced, `--force` or not. Refused
 * (`output_forbidden`, exit 2, nothing written):
 *
 *  - OUT exists and is not a regular file (a device, a FIFO, a socket, a
 *    directory);
 *  - OUT's directory is on a pseudo filesystem (/proc, /sys);
 *  - OUT is a symlink whose chain passes through a pseudo filesystem
 *    (`/dev/stdout` → `/proc/self/fd/1`: the "file" there is whatever the
 *    process's stdout is, and replacing the link breaks the system's
 *    `/dev/stdout`), leads nowhere, loops, or ends at anything but a
 *    regular file in a writable directory.
 *
 * A symlink to a regular file in a writable directory is accepted (and, as
 * before, the link itself is replaced by the new file).
 */
export function checkOutputTarget(out: string, what = "the output"): void {
  const refuse = (why: string) => new RefusalError("output_forbidden", `refusing to write ${what} to ${out}: ${why}`, { output: out });
  const abs = resolve(out);
  const parent = realOrNull(dirname(abs));
  if (parent !== null && onPseudoFs(parent)) throw refuse(`${parent} is on a pseudo filesystem (/proc, /sys), not a directory of files`);
  let st = lstatOrNull(abs);
  if (st === null) return;
  if (!st.isSymbolicLink()) {
    if (!st.isFile()) throw refuse(`it exists and is ${kindOf(st)}, not a regular file`);
    return;
  }
  // Follow the chain one link at a time: a magic link of /proc (fd/1, fd/2) is seen
  // for what it is, not for the file it happens to name right now.
  let cur = abs;
  for (let hops = 0; st.isSymbolicLink(); hops++) {
    if (hops >= 40) throw refuse("it is a symlink loop");
    const next = resolve(dirname(cur), readlinkSync(cur));
    const dir = realOrNull(dirname(next));
    if (dir === null) throw refuse(`it is a symlink to ${next}, which does not exist`);
    if (onPseudoFs(dir)) throw refuse(`it is a symlink into ${dir}, a pseudo filesystem (/proc, /sys), not a file`);
    cur = join(dir, basename(next));
    const s = lstatOrNull(cur);
    if (s === null) throw refuse(`it is a symlink to ${cur}, which does not exist`);
    st = s;
  }
  if (!st.isFile()) throw refuse(`it is a symlink to ${cur}, which is ${kindOf(st)}, not a regular file`);
  try {
    accessSync(dirname(cur), constants.W_OK);
  } catch {
    throw refuse(`it is a symlink to ${cur}, in a directory that is not writable`);
  }
}

function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(p);
  } catch {
    return null;
  }
}

function realOrNull(p: string): string | null {
  try {
    return statSync(p).isDirectory() ? realpathSync(p) : null;
  } catch {
    return null;
  }
}
