/** Every shared run-journal vector gives Python's verdict; from-step projections match. */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { rebuildState, verifyJournal } from "../../src/journal/index.ts";
import { VECTORS } from "../helpers/cli.ts";
import { referenceVerdicts } from "./tmp.ts";
import { runVectorExpect } from "../helpers/run-vectors.ts";

const DIR = join(VECTORS, "run-journal");
const NAMES = readdirSync(DIR)
  .filter((f) => f.endsWith(".jsonl"))
  .map((f) => f.slice(0, -".jsonl".length))
  .sort();

function expectOf(name: string): Record<string, unknown> {
  return runVectorExpect(DIR, name);
}

describe("run-journal vectors", () => {
  test("the vector set is the one described in the README", () => {
    expect(NAMES.length).toBe(16);
    expect(NAMES).toContain("foreign-writer");
    expect(NAMES).toContain("hazards-invalid-utf8-row");
  });

  for (const name of NAMES) {
    test(`${name}: verdict, count, head, divergence and discarded lines equal Python's`, async () => {
      const exp = expectOf(name);
      const r = await verifyJournal(join(DIR, `${name}.jsonl`));
      const got: Record<string, unknown> = {};
      for (const k of Object.keys(exp)) got[k] = (r as unknown as Record<string, unknown>)[k];
      expect(got).toEqual(exp);
      expect(r.identity).toBe("unverifiable");
      // Hashes are only null when there is no divergence.
      if (exp.divergent_index === null) expect([r.expected_hash, r.actual_hash]).toEqual([null, null]);
    });
  }

  test("the Python reference verifier agrees with every expect file (keeps the reference honest)", () => {
    const verdicts = referenceVerdicts(NAMES.map((n) => join(DIR, `${n}.jsonl`)));
    NAMES.forEach((name, i) => {
      const exp = expectOf(name);
      const got: Record<string, unknown> = {};
      for (const k of Object.keys(exp)) got[k] = verdicts[i]![k];
      expect({ name, ...got }).toEqual({ name, ...exp });
    });
  });

  test("hazards --from-step projections equal the vector, and repeat byte-identically", async () => {
    const proj = JSON.parse(readFileSync(join(DIR, "hazards.from-step.json"), "utf8")) as Record<string, unknown>;
    expect(Object.keys(proj).length).toBeGreaterThan(0);
    for (const [n, want] of Object.entries(proj)) {
      const a = await rebuildState(join(DIR, "hazards.jsonl"), Number(n));
      expect(a).toEqual(want as never);
      const b = await rebuildState(join(DIR, "hazards.jsonl"), Number(n));
      expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    }
  });

  test("a projection recomputes hashes: a tampered journal still projects the original prefix head", async () => {
    const clean = await rebuildState(join(DIR, "hazards.jsonl"), 150);
    const tampered = await rebuildState(join(DIR, "hazards-prev-hash-edit.jsonl"), 300);
    const original = await rebuildState(join(DIR, "hazards.jsonl"), 300);
    expect(clean.step_count).toBe(150);
    // prev_hash is not hashed into the recomputed chain, so editing it changes nothing.
    expect(tampered.head_hash).toBe(original.head_hash);
    const negative = await rebuildState(join(DIR, "hazards.jsonl"), -5);
    expect(negative).toEqual({ events: [], head_hash: "", step_count: 0 });
  });
});
