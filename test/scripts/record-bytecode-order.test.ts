/**
 * The bytecode layout profile (scripts/bytecode.order, Bun's --bytecode-order):
 * the merge of the verbs' recordings, and the committed profile's form.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BYTECODE_ORDER } from "../../scripts/build.ts";
import { mergeProfiles } from "../../scripts/record-bytecode-order.ts";
import { ROOT } from "../helpers/cli.ts";

describe("scripts/record-bytecode-order.ts", () => {
  test("profiles merge in order: each entry once, where it first appears, under one header", () => {
    const a = "v2\nF 01\nS 02\nF 03\n";
    const b = "v2\nF 03\nK 04\nF 01\nM 05\n";
    expect(mergeProfiles([a, b])).toBe("v2\nF 01\nS 02\nF 03\nK 04\nM 05\n");
    expect(mergeProfiles([b, a])).toBe("v2\nF 03\nK 04\nF 01\nM 05\nS 02\n");
  });

  test("profiles of two formats, or none, are refused rather than merged", () => {
    expect(() => mergeProfiles(["v2\nF 01\n", "v3\nF 02\n"])).toThrow(/two formats/);
    expect(() => mergeProfiles([])).toThrow(/no profile/);
  });

  test("the committed profile is one v2 profile of distinct entries", () => {
    const lines = readFileSync(join(ROOT, BYTECODE_ORDER), "utf8").split("\n");
    expect(lines[0]).toBe("v2");
    expect(lines.at(-1)).toBe("");
    const entries = lines.slice(1, -1);
    expect(entries.length).toBeGreaterThan(1000);
    for (const e of entries) expect(e).toMatch(/^[A-Z] [0-9a-f]{16}$/);
    expect(new Set(entries).size).toBe(entries.length);
  });
});
