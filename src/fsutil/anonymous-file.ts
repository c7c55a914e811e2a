import { closeSync, openSync, unlinkSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { trackTemp, untrackTemp } from "./temp-files.ts";

/**
 * A new file under the temp directory, open for reading and writing and
 * already unlinked: scratch space a pass leaves for the next one (the
 * replay display's cells, the agent view's span records) that nothing can
 * leave behind, whatever ends the process. Created 0600 and exclusively
 * (never through a name an attacker planted); registered as a live temp
 * for the instant it has a name. Throws when the directory is unusable:
 * the caller goes on without it.
 */
export function openAnonymousFile(tag: string): number {
  const path = join(tmpdir(), `.bernstein-${tag}.${process.pid}.${randomBytes(6).toString("hex")}`);
  trackTemp(path);
  try {
    const fd = openSync(path, "wx+", 0o600);
    try {
      unlinkSync(path);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    return fd;
  } finally {
    untrackTemp(path);
  }
}
