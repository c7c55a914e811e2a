import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Seed inputs from the test vectors (read-only). The vectors directory
 * defaults to the copy in `test/fixtures/vectors` and can be moved with
 * BERNSTEIN_VECTORS.
 */
export function vectorsDir(): string {
  return process.env.BERNSTEIN_VECTORS ?? join(import.meta.dir, "..", "..", "test", "fixtures", "vectors");
}

export function requireVectors(): string {
  const dir = vectorsDir();
  if (!existsSync(join(dir, "run-journal"))) {
    throw new Error(`test vectors not found at ${dir} (set BERNSTEIN_VECTORS)`);
  }
  return dir;
}

/** The run-journal vector files (`*.jsonl`), sorted by name. */
export function runJournalVectors(): { name: string; bytes: Uint8Array }[] {
  const dir = join(requireVectors(), "run-journal");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl"))
    .sort()
    .map((f) => ({ name: f, bytes: new Uint8Array(readFileSync(join(dir, f))) }));
}

/** The agent step-journal vector buckets. */
export function stepJournalVectors(): { agent: string; bytes: Uint8Array }[] {
  const root = join(requireVectors(), "agent-journal", "sdd", "runtime", "journal");
  return readdirSync(root)
    .sort()
    .map((agent) => ({ agent, bytes: new Uint8Array(readFileSync(join(root, agent, "000000.jsonl"))) }));
}

/** The receipt vectors (`*.tar`). */
export function receiptVectors(): { name: string; bytes: Uint8Array }[] {
  const dir = join(requireVectors(), "agent-journal");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".tar"))
    .sort()
    .map((f) => ({ name: f, bytes: new Uint8Array(readFileSync(join(dir, f))) }));
}

/** Non-empty `\n`-separated lines of a file. */
export function linesOf(bytes: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let start = 0;
  for (;;) {
    let nl = bytes.indexOf(0x0a, start);
    if (nl < 0) nl = bytes.length;
    let end = nl;
    if (end > start && bytes[end - 1] === 0x0d) end--;
    if (end > start) out.push(bytes.subarray(start, end));
    if (nl >= bytes.length) break;
    start = nl + 1;
  }
  return out;
}
