import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "../../src/pyjson/parse.ts";
import { dictForm, dictFormLine, rowLine } from "../../src/receipts/rows.ts";
import { CanonicalRow } from "../../src/steps/canonical-row.ts";
import { VECTORS } from "../helpers/cli.ts";
import { runPython } from "../helpers/python.ts";

const enc = new TextEncoder();

/** Rows of every shape: Python-written hazards, foreign spellings and dict-form edge cases. */
function corpus(): string[] {
  const py = runPython(
    `import json, random
random.seed(3)
vals = ["x", "h\\u00e9 \\U0001F600", 1.0, 1, 1e16, 1e-05, -0.0, float("nan"), 2**70, {"b": [1, None], "a": True}, [], {}, "", None]
rows = []
for i in range(200):
    r = {"seq": i, "prev_hash": "p%d" % i, "input_hash": "i", "model": random.choice(vals), "prompt": random.choice(vals),
         "tool_call": random.choice(vals), "tool_result": random.choice(vals), "step_hash": "s%d" % i,
         "ts": random.choice([1747000000.25, 5, 1.5, 0.0, 1e22]), "blob_refs": random.choice([[], ["d1", "d2"], None]),
         "schema_version": random.choice([2, 1])}
    if i % 3 == 0: r["effort"] = random.choice(["high", None, 0])
    if i % 7 == 0: del r["schema_version"]
    if i % 11 == 0: r["extra"] = 1
    rows.append(json.dumps(r, sort_keys=True, separators=(",", ":")))
print(json.dumps(rows))`,
    null,
  ) as string[];
  const vectors = readFileSync(join(VECTORS, "agent-journal", "sdd", "runtime", "journal", "agent-a", "000000.jsonl"), "utf8").split("\n").filter(Boolean);
  const base = vectors[2]!;
  const edits = [
    base.replace(/"ts":[^,}]+/, '"ts":5'),
    base.replace(/"ts":[^,}]+/, '"ts":1.50'),
    base.replace(/"ts":[^,}]+/, '"ts":1E5'),
    base.replace('"seq":2', '"seq":-0'),
    base.replace('"seq":2', '"seq":"2"'),
    base.replace('"schema_version":2', '"schema_version":2.0'),
    base.replace('"blob_refs":[]', '"blob_refs":null'),
    base.replace('"blob_refs":[]', '"blob_refs":["a\\u00e9"]'),
    base.replace('"blob_refs":[]', '"blob_refs":[1]'),
    base.replace('"blob_refs":[]', '"blob_refs":[],"effort":null'),
    base.replace('"input_hash":', '"input_hash":1,"x":'),
  ];
  return [...py, ...vectors, ...edits];
}

describe("export fast path (dict-form rows reuse their bytes)", () => {
  test("whenever it claims a row, the bytes equal the re-serialised dict form", () => {
    let claimed = 0;
    let declined = 0;
    for (const text of corpus()) {
      const row = parse(text) as Map<string, any>;
      let slow: string | null;
      try {
        slow = rowLine(dictForm(row));
      } catch {
        slow = null;
      }
      const fast = dictFormLine(enc.encode(text), new CanonicalRow());
      if (fast === null) {
        declined++;
        continue;
      }
      claimed++;
      expect(text + "\n").toBe(slow!);
      expect(fast.stepHash).toBe(row.get("step_hash"));
    }
    // Both paths are exercised by the corpus.
    expect(claimed).toBeGreaterThan(50);
    expect(declined).toBeGreaterThan(50);
  });
});
