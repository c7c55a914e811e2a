import { describe, expect, test } from "bun:test";
import { codePointOrder, compareCodePoints, sortEntries, sortKeys } from "../../src/pyjson/order.ts";

/**
 * The native sort behind wide objects (issue 29) gives exactly the order of
 * compareCodePoints (Python's str order): keys that are prefixes of others,
 * NULs, lone and paired surrogates, characters above the surrogates.
 */

/** A small deterministic generator (no Math.random: a failure reproduces). */
function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x100000000;
  };
}

const ALPHABET = ["a", "b", "ab", "\u0000", "\u0001", "\ud7ff", "\ud800", "\udbff", "\udc00", "\ud83d\ude00", "\ue000", "\uffff", "\ud800\udc00", "~", "é"];

function distinctKeys(n: number, seed: number, alphabet: string[]): string[] {
  const r = rng(seed);
  const keys = new Set<string>();
  while (keys.size < n) {
    let k = "";
    const len = Math.floor(r() * 8);
    for (let i = 0; i < len; i++) k += alphabet[Math.floor(r() * alphabet.length)]!;
    keys.add(k);
  }
  return [...keys];
}

describe("codePointOrder / sortKeys: compareCodePoints' order without a comparator", () => {
  test("plain ASCII keys, prefixes included", () => {
    const keys = distinctKeys(2000, 1, ["a", "b", "c", "k", "0", "9"]);
    const want = [...keys].sort(compareCodePoints);
    expect(Array.from(codePointOrder(keys), (i) => keys[i])).toEqual(want);
    expect(sortKeys([...keys])).toEqual(want);
  });

  test("NULs, lone and paired surrogates, characters above the surrogates", () => {
    for (const seed of [2, 3, 4]) {
      const keys = distinctKeys(1500, seed, ALPHABET);
      const want = [...keys].sort(compareCodePoints);
      expect(sortKeys([...keys])).toEqual(want);
    }
  });

  test("a few keys take the comparator; entries keep their values", () => {
    expect(sortKeys(["b", "a", "\ue000", "\ud83d\ude00"])).toEqual(["a", "b", "\ue000", "\ud83d\ude00"]);
    const entries: [string, number][] = distinctKeys(500, 5, ALPHABET).map((k, i) => [k, i]);
    const byKey = new Map(entries);
    const sorted = sortEntries([...entries]);
    expect(sorted.map((e) => e[0])).toEqual(entries.map((e) => e[0]).sort(compareCodePoints));
    for (const [k, v] of sorted) expect(byKey.get(k)).toBe(v);
  });
});
