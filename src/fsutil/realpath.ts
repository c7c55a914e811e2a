import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

/**
 * Resolve symlinks of the longest existing prefix of `p` (the rest does not
 * exist yet, so it cannot be a link). A dangling symlink is followed to
 * where it points: creating the file would create it there.
 */
export function realpathOfExistingPrefix(p: string, hops = 0): string {
  const abs = resolve(p);
  const tail: string[] = [];
  let cur = abs;
  for (;;) {
    let isLink = false;
    let present = false;
    try {
      isLink = lstatSync(cur).isSymbolicLink();
      present = true;
    } catch {
      /* does not exist: climb */
    }
    if (present) {
      try {
        return join(realpathSync(cur), ...tail.reverse());
      } catch {
        if (isLink && hops < 40) {
          const target = resolve(dirname(cur), readlinkSync(cur));
          return realpathOfExistingPrefix(join(target, ...tail.reverse()), hops + 1);
        }
      }
    }
    const parent = dirname(cur);
    if (parent === cur) return abs;
    tail.push(basename(cur));
    cur = parent;
  }
}
