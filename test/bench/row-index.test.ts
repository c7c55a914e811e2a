/**
 * bench/row-index.ts: the structure of its results and table, and its
 * refusals (timings never belong in a test).
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { measureShape, table } from "../../bench/row-index.ts";

const SCRIPT = join(import.meta.dir, "..", "..", "bench", "row-index.ts");

describe("bench/row-index.ts", () => {
  test("measures every scanner on a small journal of a shape after checking they agree, and tabulates it", () => {
    const dir = mkdtempSync(join(tmpdir(), "row-index-bench-"));
    try {
      const results = (["bench", "mixed"] as const).map((shape) => measureShape(shape, dir, 0.2, 1));
      for (const r of results) {
        expect(r.rows).toBeGreaterThan(0);
        expect(Object.keys(r.mbs).sort()).toEqual(["JavaScript", "WebAssembly", "auto"]);
        for (const v of Object.values(r.mbs)) expect(v).toBeGreaterThan(0);
      }
      const lines = table(results).split("\n");
      expect(lines[0]).toBe("| shape | rows | mean row | JavaScript | WebAssembly | auto | WebAssembly ÷ JavaScript |");
      expect(lines.length).toBe(4);
      expect(lines[2]).toStartWith(`| bench | ${results[0]!.rows} | `);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  test("a bad option is refused with exit 2 and the usage", () => {
    for (const args of [["--mb", "x"], ["--shapes", "nope"], ["--passes"], ["--bogus", "1"]]) {
      const r = Bun.spawnSync([process.execPath, SCRIPT, ...args], { stdout: "pipe", stderr: "pipe" });
      expect(r.exitCode).toBe(2);
      expect(r.stderr.toString()).toContain("usage: bun bench/row-index.ts");
      expect(r.stdout.toString()).toBe("");
    }
  });
});
