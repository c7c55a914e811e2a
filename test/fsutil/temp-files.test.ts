import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeLiveTemps, trackTemp, untrackTemp } from "../../src/fsutil/temp-files.ts";

const root = mkdtempSync(join(tmpdir(), "temp-files-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

test("removeLiveTemps removes tracked files and tracked private directories (a spooled copy), never untracked ones", () => {
  const file = join(root, "out.tmp.1.abcdef01");
  writeFileSync(file, "half");
  const spool = join(root, "bernstein-stdin-x");
  mkdirSync(spool);
  writeFileSync(join(spool, "stdin"), "copy");
  const kept = join(root, "kept.tmp.1.abcdef02");
  writeFileSync(kept, "done");
  trackTemp(file);
  trackTemp(spool);
  trackTemp(kept);
  untrackTemp(kept);
  trackTemp(join(root, "already-gone"));
  expect(removeLiveTemps().sort()).toEqual([spool, file].sort());
  expect(existsSync(file)).toBe(false);
  expect(existsSync(spool)).toBe(false);
  expect(existsSync(kept)).toBe(true);
  // Each is removed once: the set is empty afterwards.
  expect(removeLiveTemps()).toEqual([]);
});
