import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { AtomicFileStream } from "./atomic-stream.ts";

/**
 * The state directory (`.sdd`) is runtime state, never source: when this
 * tool creates it, it also writes `<sdd>/.gitignore` holding `*`, so the
 * directory does not show up untracked in `git status` (the file ignores
 * itself too). Only a directory made here gets one: a state directory that
 * already exists (one the user keeps in git, or `--sdd-dir .`) is left as
 * it is, and an existing `.gitignore` is never replaced.
 */
export const STATE_GITIGNORE = "*\n";

/** Create `sddDir` (and its parents) if missing; a directory made here gets its `.gitignore`. */
export function ensureStateDir(sddDir: string): void {
  const made = mkdirSync(sddDir, { recursive: true });
  if (made === undefined) return;
  writeStateGitignore(sddDir);
}

/** Write `<sddDir>/.gitignore` (`*`, 0644, atomically) unless a file of that name exists; best effort. */
export function writeStateGitignore(sddDir: string): void {
  let out: AtomicFileStream | null = null;
  try {
    out = new AtomicFileStream(join(sddDir, ".gitignore"), { replace: false, fileMode: 0o644 });
    out.write(STATE_GITIGNORE);
    out.commit();
  } catch {
    // Already there (kept as it is), or not writable: the state itself matters, this file is a courtesy.
    out?.abort();
  }
}
