import { existsSync } from "node:fs";
import { join } from "node:path";
import { runsRoot, validateRunId } from "../journal/paths.ts";

/** `YYYYMMDD-HHMMSS` in UTC. */
export function runIdStamp(date: Date): string {
  const iso = date.toISOString(); // 2026-01-02T03:04:05.678Z
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}`;
}

/**
 * A new run id: the UTC start second, plus `-2`, `-3`, ... when a run of
 * that second already exists (a resumed run right after a killed one).
 */
export function newRunId(sddDir: string, date: Date = new Date()): string {
  const base = runIdStamp(date);
  const root = runsRoot(sddDir);
  for (let n = 1; ; n++) {
    const id = n === 1 ? base : `${base}-${n}`;
    if (!existsSync(join(root, id))) return validateRunId(id);
  }
}
