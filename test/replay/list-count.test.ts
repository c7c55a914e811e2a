/** replay list counts a journal with the fast verifier's links-only pass (in this thread, or on workers): the same usable-row count as the reader's. */
import { expect, test } from "bun:test";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { readJournalSync } from "../../src/journal/reader.ts";
import { countUsableRows } from "../../src/replay/list.ts";
import { VECTORS } from "../helpers/cli.ts";

/** The reference: the tolerant reader's rows, each parsed. */
function countEvents(journal: string): number {
  let n = 0;
  for (const item of readJournalSync(journal)) if (item.kind === "row") n++;
  return n;
}

test("every run-journal vector: the fast count equals the reader's count", async () => {
  const dir = join(VECTORS, "run-journal");
  const files = readdirSync(dir).filter((n) => n.endsWith(".jsonl"));
  expect(files.length).toBeGreaterThan(10);
  for (const f of files) {
    const path = join(dir, f);
    const size = statSync(path).size;
    // fastFrom 0: every journal takes the pass on workers, whatever its size; by default a small one is counted in this thread
    expect([f, await countUsableRows(path, size, 0)]).toEqual([f, countEvents(path)]);
    expect([f, await countUsableRows(path, size)]).toEqual([f, countEvents(path)]);
  }
});
