/**
 * scripts/bench.ts's verb table in a tiny mode (one 2 MB journal, a
 * 200-step receipt, one repetition) through the binary under test. Checks
 * the table's structure and that its numbers are sane, never a speed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { VerbRow as Row } from "../../bench/verbs.ts";
import { ROOT, binPath } from "../helpers/cli.ts";

/** Every verb of issue 19 with the ratio it sets (null: the group's baseline). */
const ISSUE_TARGETS: [string, number | null][] = [
  ["verify", null],
  ["list", 1],
  ["diff", 2.5],
  ["show-json", 2],
  ["show-prose", 3],
  ["from-step", 2],
  ["repair", 1],
  ["receipt-verify", null],
  ["export", 2],
  ["publish", 2],
  ["diff-journal", 2.5],
  ["agent-view", 2],
];

let dir: string;

async function bench(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = Bun.spawn([process.execPath, join(ROOT, "scripts", "bench.ts"), ...args], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

function tiny(results: string, more: string[] = [], bin = binPath()): string[] {
  return ["--verbs", "--mb", "1", "--receipt-steps", "200", "--reps", "1", "--bin", bin, "--work-dir", join(dir, "work"), "--results", results, ...more];
}

/** The table's body lines (after the header and the |---| line). */
function tableRows(stdout: string): string[] {
  const lines = stdout.split("\n").filter((l) => l.startsWith("|"));
  return lines.slice(2);
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "bernstein-bench-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("npm run bench -- --verbs", () => {
  test("a row for every verb of issue 19 with its target, a ratio, a peak RSS; other figures in the results file are kept", async () => {
    const results = join(dir, "results.json");
    writeFileSync(results, JSON.stringify({ verify: ["kept"] }));
    const r = await bench(tiny(results));
    expect(r.code).toBe(0);
    const doc = JSON.parse(readFileSync(results, "utf8"));
    expect(doc.verify).toEqual(["kept"]);
    const rows: Row[] = doc.verbs.rows;
    expect(rows.map((v) => [v.key, v.target_ratio])).toEqual(ISSUE_TARGETS);
    for (const v of rows) {
      expect(v.wall_s).toBeGreaterThan(0);
      expect(v.wall_s).toBeLessThan(600);
      expect(Number.isFinite(v.ratio) && v.ratio > 0).toBe(true);
      // a process's own peak RSS: more than nothing, less than the machine
      expect(v.rss_mb).toBeGreaterThan(1);
      expect(v.rss_mb).toBeLessThan(64_000);
      expect(v.rss_met).toBe(v.rss_mb <= 64);
      if (v.target_ratio === null) {
        expect(v.ratio).toBe(1);
        expect(v.ratio_met).toBeNull();
      } else expect(v.ratio_met).toBe(v.ratio <= v.target_ratio);
    }
    // the displays wrote their output through the pipe (counted, not kept)
    for (const k of ["show-json", "show-prose", "from-step", "agent-view"]) expect(rows.find((v) => v.key === k)!.stdout_bytes).toBeGreaterThan(1000);
    expect(doc.verbs.run_journal.rows).toBe(4096);
    expect(doc.verbs.run_journal.from_step).toBe(4096 - 205);
    expect(doc.verbs.receipt.steps).toBe(200);
    expect(doc.verbs.all_met).toBe(rows.every((v) => v.ratio_met !== false && v.rss_met));

    const table = tableRows(r.stdout);
    expect(table).toHaveLength(ISSUE_TARGETS.length);
    table.forEach((line, i) => {
      const cells = line.split("|").slice(1, -1).map((c) => c.trim());
      const v = rows[i]!;
      expect(cells[0]).toBe(v.verb);
      expect(cells[1]).toBe(v.wall_s.toFixed(3));
      expect(cells[2]).toBe(v.target_ratio === null ? "1 (baseline)" : `${v.ratio.toFixed(2)}×`);
      expect(cells[3]).toBe(v.target_ratio === null ? "-" : `≤ ${v.target_ratio}×`);
      expect(cells[4]).toBe(v.ratio_met === null ? "-" : v.ratio_met ? "yes" : "**no**");
      expect(cells[5]).toBe(v.rss_mb.toFixed(1));
      expect(cells[6]).toBe(v.rss_met ? "yes" : "**no**");
    });
    expect(r.stdout).toContain(`every target met: ${doc.verbs.all_met ? "yes" : "no"}`);
  }, 120_000);

  test("--pick measures those verbs and their baseline only", async () => {
    const results = join(dir, "picked.json");
    const r = await bench(tiny(results, ["--pick", "repair"]));
    expect(r.code).toBe(0);
    const doc = JSON.parse(readFileSync(results, "utf8"));
    expect(doc.verbs.rows.map((v: Row) => v.key)).toEqual(["verify", "repair"]);
    expect(doc.verbs.receipt).toBeNull();
    expect(tableRows(r.stdout)).toHaveLength(2);
  }, 60_000);

  test("a binary whose verbs print the wrong thing stops the bench (exit 1) before any table or results file", async () => {
    const fake = join(dir, "fake-bernstein");
    // verifies and exports like the real one would (exit 0), but lists nothing
    writeFileSync(fake, `#!/bin/sh\nexec ${JSON.stringify(binPath())} "$@" >/dev/null\n`);
    chmodSync(fake, 0o755);
    const results = join(dir, "never.json");
    const r = await bench(tiny(results, ["--pick", "list"], fake));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("bench: `replay list` (cold cache; runs a, b): runs a and b not both listed");
    expect(r.stdout).toBe("");
    expect(existsSync(results)).toBe(false);
  }, 60_000);

  test("a misspelt flag or an unknown verb is refused (exit 2), nothing is measured", async () => {
    for (const args of [["--verb"], ["--verbs", "--pick", "lsit"], ["--verbs", "--reps", "0"], ["--verbs", "--mb"]]) {
      const r = await bench(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toStartWith("bench: ");
      expect(r.stderr).not.toContain("    at ");
      expect(r.stdout).toBe("");
    }
  });
});
