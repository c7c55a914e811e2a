import { expect, test } from "bun:test";
import { KeyedTable, textHash } from "../../src/timeline/keyed-table.ts";
import { mulberry32 } from "../../tools/fuzz/rng.ts";

interface Entry {
  key: string;
}

test("KeyedTable holds what a Map holds through random adds and removes, colliding hashes and growth included", () => {
  for (const hashBits of [32, 3, 0]) {
    const rand = mulberry32(hashBits + 1);
    // few hash values: long probe runs that wrap around, so removal's shifting is exercised
    const hashOf = (k: string) => (hashBits === 32 ? textHash(k) : textHash(k) & ((1 << hashBits) - 1));
    const table = new KeyedTable<Entry, string>((e, k) => e.key === k);
    const map = new Map<string, Entry>();
    for (let i = 0; i < 20_000; i++) {
      const key = `k${Math.floor(rand() * (i < 10_000 ? 3000 : 60))}`;
      const have = map.get(key);
      expect(table.get(hashOf(key), key, "")).toBe(have);
      if (have && rand() < 0.6) {
        expect(table.remove(hashOf(key), have)).toBe(true);
        expect(table.remove(hashOf(key), have)).toBe(false);
        map.delete(key);
      } else if (!have) {
        const e = { key };
        table.add(hashOf(key), e);
        map.set(key, e);
      }
      expect(table.size).toBe(map.size);
    }
    for (const [key, e] of map) expect(table.get(hashOf(key), key, "")).toBe(e);
  }
});

test("textHash spreads ids that differ in one character over the low bits", () => {
  const low = new Set<number>();
  for (let i = 0; i < 1024; i++) low.add(textHash(`agent-${i.toString(16).padStart(8, "0")}`) & 1023);
  expect(low.size).toBeGreaterThan(600);
});
