/**
 * scripts/bench.ts's verb table in a tiny mode (1 MB journals of every
 * shape, a 200-step receipt, one repetition) through the binary under test.
 * Checks the tables' structure and that their numbers are sane, never a speed.
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
  ["from-step-prose", 3],
  // not issue 19's: `replay <RUN> --verify`, measured since its gate was found at 72-79 MB (target: ours)
  ["verify-run", 2],
  ["repair", 1],
  ["html", 3],
  ["follow", 3],
  ["follow-json", 2],
  ["verify-torn", 1.2],
  ["repair-torn", 1],
  ["record-one", 1.2],
  // not issue 19's: the signed run receipt of the whole journal and its verify, measured since verify run was found at 4 GB (target: ours)
  ["receipt-run", 3],
  ["receipt-check", 3],
  ["receipt-verify", null],
  ["export", 2],
  ["publish", 2],
  ["diff-journal", 2.5],
  ["agent-view", 2],
  ["agent-prose", 3],
  ["debug", 3],
  ["debug-foreign", 3],
  ["debug-late", 3],
];
/** The run-journal verbs (baseline first): those before the receipt group's baseline. */
const RUN_VERB_COUNT = ISSUE_TARGETS.findIndex(([k]) => k === "receipt-verify");

let dir: string;

async function bench(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = Bun.spawn([process.execPath, join(ROOT, "scripts", "bench.ts"), ...args], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

function tiny(results: string, more: string[] = [], bin = binPath()): string[] {
  return ["--verbs", "--mb", "1", "--receipt-steps", "200", "--reps", "1", "--bin", bin, "--work-dir", join(dir, "work"), "--results", results, ...more];
}

/** The body lines (after the header and the |---| line) of the `n`th table printed (0: the single-shape one). */
function tableRows(stdout: string, n = 0): string[] {
  return tableLines(stdout, n).slice(2);
}

function tableLines(stdout: string, n: number): string[] {
  const tables = stdout.split(/\n(?!\|)/).map((block) => block.split("\n").filter((l) => l.startsWith("|"))).filter((t) => t.length > 0);
  return tables[n] ?? [];
}

const cellsOf = (line: string): string[] => line.split("|").slice(1, -1).map((c) => c.trim());

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
    for (const k of ["show-json", "show-prose", "from-step", "from-step-prose", "html", "agent-view", "agent-prose"]) expect(rows.find((v) => v.key === k)!.stdout_bytes).toBeGreaterThan(1000);
    expect(doc.verbs.run_journal.rows).toBe(4096);
    expect(doc.verbs.run_journal.from_step).toBe(4096 - 205);
    expect(doc.verbs.receipt.steps).toBe(200);
    expect(doc.verbs.all_met).toBe(rows.every((v) => v.ratio_met !== false && v.rss_met));

    const table = tableRows(r.stdout);
    expect(table).toHaveLength(ISSUE_TARGETS.length);
    table.forEach((line, i) => {
      const cells = cellsOf(line);
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

    // issue 28: by default the run-journal verbs ran on every shape, each against its own baseline
    expect(doc.verbs.params.shapes).toEqual(["bench", "mixed", "large-rows", "python", "windows", "compact"]);
    expect(doc.verbs.run_journal.shape).toBe("bench");
    const runKeys = ISSUE_TARGETS.slice(0, RUN_VERB_COUNT).map(([k]) => k);
    for (const s of doc.verbs.shapes) {
      expect(s.verbs.map((v: Row) => v.key)).toEqual(runKeys);
      expect(s.verbs[0].ratio).toBe(1);
      expect(s.rows).toBeGreaterThan(1);
      expect(s.bytes).toBeGreaterThanOrEqual(1e6);
    }
    expect(doc.verbs.shapes[0].verbs).toEqual(rows.slice(0, RUN_VERB_COUNT));
    const shapeHead = cellsOf(tableLines(r.stdout, 1)[0]!);
    expect(shapeHead).toEqual(["verb", ...["bench", "mixed", "large-rows", "python", "windows", "compact", "agent"].flatMap((g) => [`${g} s`, `${g} ×`, `${g} MB`])]);
    const byShape = tableRows(r.stdout, 1);
    expect(byShape).toHaveLength(ISSUE_TARGETS.length);
    const python = doc.verbs.shapes[3].verbs as Row[];
    const windows = doc.verbs.shapes[4].verbs as Row[];
    const compact = doc.verbs.shapes[5].verbs as Row[];
    byShape.slice(0, RUN_VERB_COUNT).forEach((line, i) => {
      const cells = cellsOf(line);
      expect(cells[10]).toBe(python[i]!.wall_s.toFixed(3));
      expect(cells[12]).toContain(python[i]!.rss_mb.toFixed(1));
      expect(cells[13]).toBe(windows[i]!.wall_s.toFixed(3));
      expect(cells[15]).toContain(windows[i]!.rss_mb.toFixed(1));
      expect(cells[16]).toBe(compact[i]!.wall_s.toFixed(3));
      expect(cells[18]).toContain(compact[i]!.rss_mb.toFixed(1));
      expect(cells.slice(19)).toEqual(["-", "-", "-"]);
    });
    expect(cellsOf(byShape[RUN_VERB_COUNT]!).slice(1, 19)).toEqual(Array(18).fill("-"));
    expect(r.stdout).toContain(`every target met on every shape: ${doc.verbs.all_shapes_met ? "yes" : "no"}`);
  }, 240_000);

  test("--shapes picks the shapes (the first one's table printed first), --size is the journal size", async () => {
    const results = join(dir, "shapes.json");
    const r = await bench(["--verbs", "--size", "1", "--shapes", "python,mixed", "--pick", "from-step", "--reps", "1", "--bin", binPath(), "--work-dir", join(dir, "work"), "--results", results]);
    expect(r.code).toBe(0);
    const doc = JSON.parse(readFileSync(results, "utf8"));
    expect(doc.verbs.params).toMatchObject({ mb: 1, shapes: ["python", "mixed"] });
    expect(doc.verbs.shapes.map((s: { shape: string }) => s.shape)).toEqual(["python", "mixed"]);
    expect(doc.verbs.run_journal.shape).toBe("python");
    expect(doc.verbs.rows).toEqual(doc.verbs.shapes[0].verbs);
    expect(r.stdout).toContain("Verbs: python run journal ");
    expect(tableRows(r.stdout, 0).map((l) => cellsOf(l)[0])).toEqual(["`journal verify --threads 1`", `\`replay a --from-step ${doc.verbs.run_journal.from_step} --as-json\``]);
    expect(cellsOf(tableLines(r.stdout, 1)[0]!)).toEqual(["verb", "python s", "python ×", "python MB", "mixed s", "mixed ×", "mixed MB"]);
    expect(tableRows(r.stdout, 1)).toHaveLength(2);
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
    for (const args of [
      ["--verb"],
      ["--verbs", "--pick", "lsit"],
      ["--verbs", "--reps", "0"],
      ["--verbs", "--mb"],
      ["--verbs", "--shapes", "nope"],
      ["--verbs", "--shapes", "bench,bench"],
      ["--verbs", "--shapes", ","],
      ["--verbs", "--mb", "1", "--size", "1"],
      ["--verbs", "--size", "0"],
    ]) {
      const r = await bench(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toStartWith("bench: ");
      expect(r.stderr).not.toContain("    at ");
      expect(r.stdout).toBe("");
    }
  });
});
