import { lstatSync, statSync, type Stats } from "node:fs";
import { basename, join, resolve } from "node:path";
import { RefusalError, UsageError } from "../errors/index.ts";
import { checkOutputTarget } from "../fsutil/output-target.ts";
import { isInsideDir, stateWritePath } from "../fsutil/state-path.ts";
import { realpathOfExistingPrefix } from "../journal/paths.ts";

/**
 * Where `replay export` / `replay publish` may write (the receipt is
 * renamed into place, so whatever the path named before is replaced):
 *  - never over the input journal (same file by device + inode: a hard link
 *    or a symlink to it counts), nor anywhere under `<sdd>/runs` or
 *    `<sdd>/runtime/journal` (journals, locks, seals) — `output_forbidden`;
 *  - never over something that is not a regular file (a device, a FIFO, a
 *    socket, a directory), nor through a symlink to anything but a regular
 *    file in a writable directory (`/dev/stdout`, a link to /proc/self/fd/1),
 *    even with --force — `output_forbidden` (src/fsutil/output-target.ts);
 *  - over an existing regular file only with `--force` — `output_exists`;
 *    the default path under `<sdd>/runtime/receipts` is bernstein's own and
 *    is refreshed by every export;
 *  - an empty path, `.`, `..` or a path ending in `/` is a usage error.
 * All are exit 2. Under the state directory the symlink rule for writes
 * applies (src/fsutil/state-path.ts), and receipts there are 0600 in 0700
 * directories like the rest of `<sdd>/runtime`; elsewhere they are 0644
 * (they are meant to be shared).
 */
export interface OutputPlan {
  path: string;
  /** Replace an existing file (rename over it); false: create only (link, EEXIST refused). */
  replace: boolean;
  fileMode: number;
  dirMode: number;
}

export interface OutputRequest {
  out: string;
  sddDir: string;
  /** Files the receipt is made from (never overwritten). */
  inputs: readonly string[];
  force: boolean;
  /** The caller chose the default path under `<sdd>/runtime/receipts`. */
  isDefault: boolean;
  /** What is written, for messages (default "the receipt"). */
  what?: string;
  /**
   * The one path under `<sdd>/runs` that may be written (the run's own
   * `timeline.html`): everything else there stays forbidden.
   */
  allowInRuns?: string;
}

function forbidden(out: string, why: string, what = "the receipt"): RefusalError {
  return new RefusalError("output_forbidden", `refusing to write ${what} to ${out}: ${why}`, { output: out });
}

function statOrNull(f: () => Stats): Stats | null {
  try {
    return f();
  } catch {
    return null;
  }
}

export function planReceiptOutput(req: OutputRequest): OutputPlan {
  const { out } = req;
  const what = req.what ?? "the receipt";
  if (out === "" || out === "." || out === ".." || basename(out) === "" || /[/\\]$/.test(out) || /(^|[/\\])\.\.?$/.test(out)) {
    throw new UsageError(`invalid output path ${JSON.stringify(out)} for ${what}: name a file`, "invalid_output_path", { output: out });
  }
  const abs = resolve(out);
  const sddAbs = resolve(req.sddDir);
  const root = realpathOfExistingPrefix(req.sddDir);
  const real = realpathOfExistingPrefix(abs);
  const allowed = req.allowInRuns !== undefined && resolve(req.allowInRuns) === abs;
  for (const sub of [["runs"], ["runtime", "journal"]]) {
    if (allowed && sub.length === 1) continue;
    const area = join(root, ...sub);
    if (isInsideDir(real, area) || isInsideDir(abs, join(sddAbs, ...sub))) {
      throw forbidden(out, `${join(req.sddDir, ...sub)} holds journals, locks and seals; only bernstein's own files go there`, what);
    }
  }
  const target = statOrNull(() => statSync(abs));
  const link = statOrNull(() => lstatSync(abs));
  if (target) {
    for (const input of req.inputs) {
      const s = statOrNull(() => statSync(input));
      if (s && s.dev === target.dev && s.ino === target.ino) throw forbidden(out, `it is the journal ${what} is made from (${input})`, what);
    }
  }
  checkOutputTarget(out, what);
  if (link && !req.force && !req.isDefault) {
    throw new RefusalError("output_exists", `refusing to overwrite ${out}: it exists (pass --force to replace it)`, { output: out });
  }
  const inState = isInsideDir(abs, sddAbs) || isInsideDir(real, root);
  if (inState) stateWritePath(req.sddDir, abs, what);
  const private_ = inState && (isInsideDir(abs, join(sddAbs, "runtime")) || isInsideDir(real, join(root, "runtime")));
  return { path: out, replace: req.force || req.isDefault, fileMode: private_ ? 0o600 : 0o644, dirMode: private_ ? 0o700 : 0o755 };
}
