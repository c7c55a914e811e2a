import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bernstein, VECTORS } from "../../helpers/cli.ts";
import { makeSdd, writeMetadata, type SddTree } from "./fixture.ts";

const AGENT = "architect-1fa9af3c2d7e";
const TASK = "T-20261201-0001-design-the-api";
const LONG_RUN = "20261201-101948-a1b2c3d4e5f6a7b8";
const WIDTHS = [60, 80, 200];

/** Terminal cells of a line (the fixtures are ASCII plus `…`). */
const cells = (line: string) => [...line].length;

describe("tables fit the terminal and never cut an id below 20 cells (compiled binary)", () => {
  let t: SddTree;
  beforeAll(() => {
    t = makeSdd();
    mkdirSync(t.runDir("r1"), { recursive: true });
    const rows = [
      { event: "run_started", run_id: "20261201-101948-abc" },
      { event: "agent_spawned", agent_id: AGENT, role: "architect", model: "claude-sonnet-4-5-20250929" },
      { event: "task_claimed", agent_id: AGENT, task_id: TASK, model: "claude-sonnet-4-5-20250929", cost_usd: 0.125, failed_signals: ["lint", "tests", "types"], tick: 3 },
      { event: "task_verification_failed", agent_id: "backend-77aa", task_id: "T-2", model: { a: 1, b: null, c: false } },
    ];
    writeFileSync(t.journal("r1"), rows.map((r, i) => JSON.stringify({ ts: 1764583188 + i, ...r })).join("\n") + "\n");
    mkdirSync(t.runDir(LONG_RUN), { recursive: true });
    writeFileSync(t.journal(LONG_RUN), '{"event": "run_started"}\n');
    writeMetadata(t.runDir(LONG_RUN), {
      run_id: LONG_RUN,
      started_at: 1764583188.5,
      git_sha: "0123456789abcdef",
      git_branch: "feature/a-long-branch-name",
      config_hash: "",
      seed_path: null,
    });
  });
  afterAll(() => t.cleanup());

  for (const width of WIDTHS) {
    test(`replay <RUN_ID> at ${width} columns: full ids, every table line within the width`, async () => {
      const r = await bernstein(["replay", "r1"], { cwd: t.cwd, env: { COLUMNS: String(width) } });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(AGENT);
      expect(r.stdout).toContain(TASK);
      const lines = r.stdout.split("\n");
      const table = lines.slice(lines.findIndex((l) => l.startsWith("TIME")), lines.findIndex((l) => l.startsWith("SHA-256")));
      expect(table.length).toBeGreaterThan(4);
      for (const l of table) expect([width, l, cells(l) <= width]).toEqual([width, l, true]);
      // Outside the hashes (64 hex, never split), the prose wraps too.
      for (const l of lines.filter((x) => !/[0-9a-f]{64}/.test(x))) expect([width, l, cells(l) <= width]).toEqual([width, l, true]);
      // DETAIL is whole (wrapped, never cut): its words all appear.
      const flat = table.join(" ").replace(/\s+/g, " ");
      for (const w of ["claude-sonnet-4-5-20250929", "$0.1250", "failed: lint, tests, types", "tick #3"]) expect(flat).toContain(w);
      // Only EVENT names give way with … on a narrow terminal; ids never.
      for (const l of table.filter((x) => x.includes("…"))) expect(l).toMatch(/^\d+:\d\d\s+\S+…\s/);
    });

    test(`replay list at ${width} columns: run ids whole or at least 20 cells with …, lines within the width`, async () => {
      const r = await bernstein(["replay", "list"], { cwd: t.cwd, env: { COLUMNS: String(width) } });
      expect(r.code).toBe(0);
      for (const l of r.stdout.split("\n")) expect([width, l, cells(l) <= width]).toEqual([width, l, true]);
      const idCell = r.stdout.split("\n").find((l) => l.startsWith(LONG_RUN.slice(0, 19)))!.split(/\s{2,}/)[0]!;
      if (idCell !== LONG_RUN) {
        expect(idCell.endsWith("…")).toBe(true);
        expect(cells(idCell)).toBeGreaterThanOrEqual(20);
      }
      expect(r.stdout).toContain("0123456"); // the SHA is shown, in its column or below the row
      if (width >= 120) expect(idCell).toBe(LONG_RUN);
    });
  }

  test("the agent view fits 60 columns (model and tool fold below the row) and keeps Python's layout where it fits", async () => {
    cpSync(join(VECTORS, "agent-journal", "sdd"), t.sdd, { recursive: true });
    const wide = await bernstein(["replay", "agent-a"], { cwd: t.cwd, env: { COLUMNS: "200" } });
    expect(wide.code).toBe(0);
    expect(wide.stdout).toMatch(/^seq {4}step_hash {11}prev_hash {11}model {20}tool$/m);
    for (const width of [60, 72]) {
      const r = await bernstein(["replay", "agent-a"], { cwd: t.cwd, env: { COLUMNS: String(width) } });
      expect(r.code).toBe(0);
      const lines = r.stdout.split("\n").filter((x) => !/[0-9a-f]{64}/.test(x));
      for (const l of lines) expect([width, l, cells(l) <= width]).toEqual([width, l, true]);
      // Nothing is lost: every model shown wide is shown narrow (in its column or folded below).
      for (const m of new Set(wide.stdout.match(/claude-[a-z0-9-]+|gpt-[a-z0-9.-]+/g) ?? [])) expect(r.stdout).toContain(m);
    }
  });

  test("human output shows values as JSON, never Python reprs", async () => {
    const r = await bernstein(["replay", "r1"], { cwd: t.cwd, env: { COLUMNS: "200" } });
    expect(r.stdout).toContain('{"a": 1, "b": null, "c": false}');
    for (const py of ["None", "False", "True", "{'a'"]) expect(r.stdout).not.toContain(py);
  });
});
