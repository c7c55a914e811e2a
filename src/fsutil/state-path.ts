import { relative, isAbsolute, resolve } from "node:path";
import { RefusalError } from "../errors/index.ts";
import { realpathOfExistingPrefix } from "./realpath.ts";

/**
 * The symlink rule for writes under the state directory (`.sdd`):
 *  - `.sdd` itself may be a symlink (a state tree kept on another disk, a
 *    shared mount): it is resolved once and is the root;
 *  - every path a writer creates or changes under it must still resolve
 *    inside that root. A symlink INSIDE the tree that leads out of it
 *    (`.sdd/runs`, `.sdd/runtime`, `.sdd/runtime/receipts`,
 *    `.sdd/runtime/journal`, a run or agent directory, the file itself) is
 *    refused for writes (`state_path_escapes`, exit 2), before anything is
 *    created. Symlinks that stay inside the root are followed.
 * Readers are not restricted by this rule: reading through a link changes
 * nothing outside the tree.
 */
export function isInsideDir(child: string, root: string): boolean {
  const rel = relative(root, child);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/** `path` (under `sddDir`), or RefusalError `state_path_escapes` when it resolves outside the state root. */
export function stateWritePath(sddDir: string, path: string, what: string): string {
  const root = realpathOfExistingPrefix(sddDir);
  const real = realpathOfExistingPrefix(path);
  if (!isInsideDir(real, root)) {
    throw new RefusalError(
      "state_path_escapes",
      `refusing to write ${what}: ${path} resolves to ${real}, outside the state directory ${root} (a symlink inside it points out)`,
      { path: resolve(path), resolved: real, state_dir: root },
    );
  }
  return path;
}
