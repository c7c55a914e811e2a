/** CLI glue of the fast verifier: --threads parsing. */
import { describe, expect, test } from "bun:test";
import { parseThreads } from "../../src/cli/fast-verify.ts";
import { UsageError } from "../../src/errors/index.ts";

describe("parseThreads", () => {
  test("positive integers up to the cap; anything else is a usage error", () => {
    expect(parseThreads(undefined)).toBeUndefined();
    expect(parseThreads("1")).toBe(1);
    expect(parseThreads(" 8 ")).toBe(8);
    for (const bad of ["0", "-2", "1.5", "x", "", "1e3", "100000"]) {
      expect(() => parseThreads(bad)).toThrow(UsageError);
    }
  });
});
