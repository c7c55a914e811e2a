import { describe, expect, test } from "bun:test";
import { canonicalNumber } from "../../src/pyjson/float.ts";
import { isPythonFloat } from "../../src/codec/row-index.ts";

/**
 * The codec's test of a float lexeme (its digits, float.wat's exact
 * arithmetic, then a conversion), which decides the step rows' ts as every
 * other float, against the exact rule: a float lexeme is canonical when
 * `canonicalNumber` re-spells it unchanged. (Moved from the step reader's
 * own clock-reading test, which this one replaced.)
 */
const enc = new TextEncoder();

function both(text: string): [boolean, boolean] {
  // embedded between other bytes: the test must stop at the lexeme's end
  const b = enc.encode(`.${text}5`);
  const exact = /[.eEIN]/.test(text) && canonicalNumber(text, true) === text;
  return [isPythonFloat(b, 1, b.length - 1), exact];
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe("isPythonFloat", () => {
  test("hostile spellings", () => {
    const cases = [
      "1e16", "1e+16", "1E16", "10000000000000000.0", "9999999999999998.0", "5e-324", "4.9e-324", "1.0", "1", "10", "-0.0", "-0", "0.0",
      "0.1", "0.10", "1e-1", "0.30000000000000004", "0.30000000000000003", "0.3", "0.0001", "0.00001", "1e-05", "1.00", "1.10",
      "4294967295.9999999", "4294967296.5", "4294967295.5", "2147483648.0000002", "2147483648.0000001", "1.0000000000000002",
      "1.0000000000000001", "1.5", "-1.5", "1796142364.3377368", "1796142364.33773680", "-1796142364.3377368", "1796142364.337737",
      "1796142364.3377367", "1796142364.0", "1796142364.00", "1.7961423643377368e9", "1.5e3", "9007199254740993.0", "123456789.123456789",
    ];
    for (const t of cases) {
      const [got, want] = both(t);
      expect({ t, got }).toEqual({ t, got: want });
    }
    // a sample of the verdicts, so a test rule that accepted or refused everything fails
    expect(both("1796142364.3377368")[0]).toBe(true);
    expect(both("1796142364.33773680")[0]).toBe(false);
    expect(both("0.30000000000000004")[0]).toBe(true);
    expect(both("0.30000000000000003")[0]).toBe(false);
  });

  test("clock readings and other doubles spelled several ways", () => {
    const r = rng(19);
    let accepted = 0;
    for (let i = 0; i < 20_000; i++) {
      const c = 1e9 + r() * 3e9;
      const w = r() * 2 ** (1 + Math.floor(r() * 33));
      const spellings = [String(c), c.toPrecision(17), c.toPrecision(16), c.toFixed(6), c.toFixed(7), c.toFixed(8), String(w), w.toPrecision(17), w.toFixed(3), w.toFixed(9)];
      spellings.push(`${Math.floor(r() * 5000) + 1}.${Math.floor(r() * 1e6)}`);
      for (const t of spellings) {
        const [got, want] = both(t);
        if (got !== want) expect({ t, got }).toEqual({ t, got: want });
        if (got) accepted++;
      }
    }
    expect(accepted).toBeGreaterThan(40_000);
  });
});
