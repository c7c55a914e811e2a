/** replay list counts a big journal with the fast verifier's links-only pass: the same usable-row count as the reader's. */
import { expect, test } from "bun:test";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { countEvents, countUsableRows } from "../../src/replay/list.ts";
import { VECTORS } from "../helpers/cli.ts";

test("every run-journal vector: the fast count equals the reader's count", async () => {
  const dir = join(VECTORS, "run-journal");
  const files = readdirSync(dir).filter((n) => n.endsWith(".jsonl"));
  expect(files.length).toBeGreaterThan(10);
  for (const f of files) {
    const path = join(dir, f);
    const size = statSync(path).size;
    // fastFrom 0: every journal takes the fast pass, whatever its size.
    expect([f, await countUsableRows(path, size, 0)]).toEqual([f, countEvents(path)]);
  }
});
