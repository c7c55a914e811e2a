import { rmSync } from "node:fs";

/**
 * Temp files being written right now (`<name>.tmp.<pid>.<hex>` of atomic
 * writes and receipts). A signal that ends the process removes them
 * (`removeLiveTemps`), so an interrupted seal, record or export leaves
 * nothing half-written beside its target. The library only registers; the
 * CLI's signal handler decides when to remove.
 */
const live = new Set<string>();

export function trackTemp(path: string): void {
  live.add(path);
}

export function untrackTemp(path: string): void {
  live.delete(path);
}

/** Remove every temp file still being written (a tracked private directory, with what it holds); returns the paths removed. */
export function removeLiveTemps(): string[] {
  const removed: string[] = [];
  for (const path of live) {
    try {
      rmSync(path, { recursive: true });
      removed.push(path);
    } catch {
      /* already renamed into place or removed */
    }
  }
  live.clear();
  return removed;
}
