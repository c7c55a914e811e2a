import { expect, test } from "bun:test";
import { GrowthCollector } from "../../src/fsutil/turn.ts";

test("GrowthCollector collects once the set grew past its bound above its low since the last collection", () => {
  let rss = 100;
  const gc = new GrowthCollector(10, () => rss);
  rss = 110;
  expect(gc.poll()).toBe(false);
  rss = 111;
  expect(gc.poll()).toBe(true);
  // the mark is the set read right after the collection (111), then its low
  rss = 105;
  expect(gc.poll()).toBe(false);
  rss = 116;
  expect(gc.poll()).toBe(true);
  rss = 120;
  expect(gc.poll()).toBe(false);
});
