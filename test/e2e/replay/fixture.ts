import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { VECTORS } from "../../helpers/cli.ts";

export const RUN_VECTORS = join(VECTORS, "run-journal");

/** A temp working directory with `.sdd/runs/<name>/journal.jsonl` copied from run-journal vectors. */
export interface SddTree {
  cwd: string;
  sdd: string;
  runDir(name: string): string;
  journal(name: string): string;
  cleanup(): void;
}

export function makeSdd(vectors: Record<string, string> | string[] = []): SddTree {
  const cwd = mkdtempSync(join(tmpdir(), "bernstein-replay-"));
  const sdd = join(cwd, ".sdd");
  mkdirSync(join(sdd, "runs"), { recursive: true });
  const tree: SddTree = {
    cwd,
    sdd,
    runDir: (name) => join(sdd, "runs", name),
    journal: (name) => join(sdd, "runs", name, "journal.jsonl"),
    cleanup: () => rmSync(cwd, { recursive: true, force: true }),
  };
  const entries = Array.isArray(vectors) ? vectors.map((v) => [v, v] as const) : Object.entries(vectors);
  for (const [run, vector] of entries) {
    mkdirSync(tree.runDir(run), { recursive: true });
    copyFileSync(join(RUN_VECTORS, `${vector}.jsonl`), tree.journal(run));
  }
  return tree;
}

/** metadata.json as Python writes it (`json.dumps(asdict(m), indent=2)`, no trailing newline). */
export function writeMetadata(dir: string, m: Record<string, unknown>): void {
  writeFileSync(join(dir, "metadata.json"), JSON.stringify(m, null, 2));
}
