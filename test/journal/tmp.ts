import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Temp directories for one test file, removed by `cleanup()` (call it in afterAll). */
export function tempDirs(prefix: string): { make(): string; cleanup(): void } {
  const made: string[] = [];
  return {
    make() {
      const d = mkdtempSync(join(tmpdir(), `bernstein-${prefix}-`));
      made.push(d);
      return d;
    },
    cleanup() {
      for (const d of made) rmSync(d, { recursive: true, force: true });
    },
  };
}

export const REFERENCE_VERIFIER = join(import.meta.dir, "..", "reference", "verify_journal.py");

/** Run the Python reference verifier over several files in ONE process. */
export function referenceVerdicts(files: string[], sealPath?: string): Record<string, unknown>[] {
  const args = ["python3", REFERENCE_VERIFIER, ...files, ...(sealPath ? ["--seal", sealPath] : [])];
  const r = Bun.spawnSync(args, { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0 && r.exitCode !== 1) throw new Error(`reference verifier failed: ${r.stderr.toString()}`);
  const out = JSON.parse(r.stdout.toString());
  return files.length === 1 ? [out] : out;
}
