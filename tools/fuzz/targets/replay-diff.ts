import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { renderJson } from "../../../src/render/json.ts";
import { diffRunJournals, diffRunJournalsExact } from "../../../src/replay/diff.ts";
import { diffRules, type DiffRules } from "../../../src/replay/diff-rules.ts";
import { mutateBytes, mutateLines } from "../mutate.ts";
import type { Rng } from "../rng.ts";
import { runJournalVectors } from "../seeds.ts";
import { violation, type FuzzTarget } from "../types.ts";

/**
 * `replay diff`'s fast path against the exact one. A case is one mutated
 * run journal A; B is A mutated once more (a line edit or byte havoc, so
 * the two mostly agree and differ somewhere hostile), and both are diffed
 * under a random rule set by diffRunJournals and by the reference
 * diffRunJournalsExact. Invariant: the same result document (every field,
 * both rows) or the same error.
 */

const RULE_SETS: DiffRules[] = [
  diffRules(),
  diffRules({ noDefaultIgnores: true }),
  diffRules({ ignore: ["payload.x", "result", "ts", "event", "agent_id.id"] }),
  diffRules({ ignore: ["a.b.c", "a.b", "a"] }),
];

async function outcome(run: typeof diffRunJournals, a: string, b: string, rules: DiffRules): Promise<string> {
  try {
    return renderJson(await run(a, b, rules), 2);
  } catch (err) {
    return `error ${(err as { code?: string }).code}: ${(err as Error).message}`;
  }
}

export function replayDiffTarget(): FuzzTarget {
  const dir = mkdtempSync(join(tmpdir(), "bernstein-fuzz-diff-"));
  const fileA = join(dir, "a.jsonl");
  const fileB = join(dir, "b.jsonl");
  let diverged = 0;
  return {
    name: "replay-diff",
    seeds: () => runJournalVectors().map((v) => v.bytes),
    mutate: (rng: Rng, seeds) => (rng.chance(0.3) ? rng.pick(seeds) : mutateLines(rng, rng.pick(seeds))),
    async run(input, rng) {
      const other = rng.chance(0.6) ? mutateLines(rng, input) : mutateBytes(rng, input, { maxStack: 2 });
      writeFileSync(fileA, input);
      writeFileSync(fileB, other);
      const rules = rng.pick(RULE_SETS);
      const [a, b] = rng.chance(0.5) ? [fileA, fileB] : [fileB, fileA];
      const exact = await outcome(diffRunJournalsExact, a, b, rules);
      const fast = await outcome(diffRunJournals, a, b, rules);
      if (fast !== exact) throw violation("diff-fast-equals-exact", `fast:\n${fast.slice(0, 600)}\nexact:\n${exact.slice(0, 600)}`);
      if (exact.includes('"diverged": true')) diverged++;
    },
    stats: () => ({ diverged }),
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}
