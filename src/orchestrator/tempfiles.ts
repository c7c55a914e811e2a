/**
 * Atomic writes go through `<name>.tmp.<pid>.<8 hex>`; a process killed
 * between creating the temp file and renaming it leaves one behind. At start
 * the orchestrator removes those whose writer is gone (a live pid may be a
 * concurrent `bernstein stop` mid-write, so it is left alone).
 */
import { readdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { pidAlive } from "../fsutil/owner.ts";

const TEMP_NAME = /\.tmp\.(\d+)\.[0-9a-f]{8}$/;

export function removeStaleTempFiles(dirs: readonly string[]): string[] {
  const removed: string[] = [];
  for (const dir of dirs) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const m = TEMP_NAME.exec(name);
      if (!m || pidAlive(Number(m[1]))) continue;
      try {
        unlinkSync(join(dir, name));
        removed.push(join(dir, name));
      } catch {
        /* raced away */
      }
    }
  }
  return removed;
}
