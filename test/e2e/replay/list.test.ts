import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bernstein, bernsteinJson } from "../../helpers/cli.ts";
import { runPython } from "../../helpers/python.ts";
import { RUN_VECTORS, makeSdd, writeMetadata, type SddTree } from "./fixture.ts";

const CACHE = ".replay-list-cache.json";

describe("replay list (compiled binary)", () => {
  let t: SddTree;
  beforeAll(() => {
    t = makeSdd({
      "20260101-090000": "chain-4",
      "20260102-090000": "hazards",
      "20260103-090000": "hazards-torn-tail",
      "20260104-090000": "hazards-junk-line-middle",
    });
    writeMetadata(t.runDir("20260102-090000"), {
      run_id: "20260102-090000",
      started_at: 1767344400.25,
      git_sha: "abcdef0123456789abcdef0123456789abcdef01",
      git_branch: "main",
      config_hash: "",
      seed_path: null,
    });
    mkdirSync(t.runDir("no-journal-here"), { recursive: true });
  });
  afterAll(() => t.cleanup());

  test("--as-json: every run with a journal, newest start first, with usable-row counts and sizes", async () => {
    const r = await bernsteinJson(["replay", "list"], { cwd: t.cwd });
    expect(r.code).toBe(0);
    // 20260102 started (metadata) 2026-01-02; 04 and 03 have no metadata and share the first ts
    // 1763000001.36 (2025-11-13, ties broken by id, greatest first); 01's first ts is 2024-09-22.
    expect(r.json.map((e: any) => e.run_id)).toEqual(["20260102-090000", "20260104-090000", "20260103-090000", "20260101-090000"]);
    const expectCount = (v: string) => JSON.parse(readFileSync(join(RUN_VECTORS, `${v}.expect.json`), "utf8")).count;
    expect(r.json.map((e: any) => e.event_count)).toEqual([
      expectCount("hazards"),
      expectCount("hazards-junk-line-middle"),
      expectCount("hazards-torn-tail"),
      expectCount("chain-4"),
    ]);
    const hz = r.json[0];
    expect(hz).toEqual({
      run_id: "20260102-090000",
      started_at: 1767344400.25,
      git_branch: "main",
      git_sha: "abcdef0123456789abcdef0123456789abcdef01",
      event_count: 300,
      size_bytes: statSync(t.journal("20260102-090000")).size,
      journal: t.journal("20260102-090000"),
      continues: null,
    });
    expect(r.json[3].started_at).toBeNull();
  });

  test("the table shows Run ID, Started, Branch, short SHA, Events and Size", async () => {
    const r = await bernstein(["replay", "list"], { cwd: t.cwd });
    expect(r.code).toBe(0);
    const started = runPython(
      "import json,sys,datetime\nprint(json.dumps(datetime.datetime.fromtimestamp(json.load(sys.stdin)).strftime('%Y-%m-%d %H:%M')))",
      1767344400.25,
    ) as string;
    const lines = r.stdout.split("\n");
    expect(lines[0]).toBe("Available Runs");
    expect(lines[1]).toMatch(/^Run ID +Started +Branch +SHA +Events +Size$/);
    const kb = (run: string) => runPython("import json,sys\nprint(json.dumps('%.1f KB' % (json.load(sys.stdin)/1024)))", statSync(t.journal(run)).size);
    expect(r.stdout).toMatch(new RegExp(`20260102-090000 +${started} +main +abcdef01 +300 +${(kb("20260102-090000") as string).replace(".", "\\.")}`));
    expect(r.stdout).toMatch(/20260101-090000 +- +- +- +4 +1\.3 KB/);
    expect(r.stdout).not.toContain("no-journal-here");
    expect(r.stdout).not.toContain("\x1b[");
  });

  test("--limit N lists the N newest runs", async () => {
    const r = await bernsteinJson(["replay", "list", "--limit", "2"], { cwd: t.cwd });
    expect(r.json.map((e: any) => e.run_id)).toEqual(["20260102-090000", "20260104-090000"]);
    const bad = await bernsteinJson(["replay", "list", "--limit", "two"], { cwd: t.cwd });
    expect(bad.code).toBe(2);
    expect(bad.json).toMatchObject({ ok: false, error: "usage" });
  });

  test("counts are cached in a sidecar keyed by the journal's stat, and a change is noticed", async () => {
    await bernstein(["replay", "list"], { cwd: t.cwd });
    const cachePath = join(t.sdd, "runs", CACHE);
    const cache = JSON.parse(readFileSync(cachePath, "utf8"));
    expect(cache.version).toBe(3);
    expect(Object.keys(cache.runs).sort()).toEqual(["20260101-090000", "20260102-090000", "20260103-090000", "20260104-090000"]);
    // Served from the cache while the journal is unchanged: a planted count shows through.
    cache.runs["20260101-090000"].event_count = 41;
    writeFileSync(cachePath, JSON.stringify(cache));
    let r = await bernsteinJson(["replay", "list"], { cwd: t.cwd });
    expect(r.json.find((e: any) => e.run_id === "20260101-090000").event_count).toBe(41);
    // Appending changes size and mtime: recounted.
    appendFileSync(t.journal("20260101-090000"), '{"event": "extra"}\n');
    r = await bernsteinJson(["replay", "list"], { cwd: t.cwd });
    expect(r.json.find((e: any) => e.run_id === "20260101-090000").event_count).toBe(5);
  });

  test("a corrupt or foreign cache file is ignored and replaced", async () => {
    const cachePath = join(t.sdd, "runs", CACHE);
    for (const junk of ["{not json", "[]", JSON.stringify({ version: 99, runs: {} }), JSON.stringify({ version: 3, runs: { x: { event_count: -1 } } })]) {
      writeFileSync(cachePath, junk);
      const r = await bernsteinJson(["replay", "list"], { cwd: t.cwd });
      expect(r.code).toBe(0);
      expect(r.json.find((e: any) => e.run_id === "20260102-090000").event_count).toBe(300);
      expect(JSON.parse(readFileSync(cachePath, "utf8")).version).toBe(3);
    }
  });

  test("a run directory symlinked out of the runs root is skipped with a warning", async () => {
    const outside = join(t.cwd, "outside");
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, "journal.jsonl"), readFileSync(join(RUN_VECTORS, "chain-4.jsonl")));
    symlinkSync(outside, t.runDir("escaped"));
    const r = await bernsteinJson(["replay", "list"], { cwd: t.cwd });
    expect(r.json.map((e: any) => e.run_id)).not.toContain("escaped");
    expect(r.stderr).toContain("escaped");
  });

  test("no runs directory / no journals: a plain message, exit 0, and [] under --as-json", async () => {
    const empty = makeSdd();
    try {
      let r = await bernstein(["replay", "list"], { cwd: empty.cwd });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("No replay logs found");
      r = await bernstein(["replay", "list", "--sdd-dir", join(empty.cwd, "nowhere")], { cwd: empty.cwd });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("No runs recorded yet");
      const j = await bernsteinJson(["replay", "list", "--sdd-dir", join(empty.cwd, "nowhere")], { cwd: empty.cwd });
      expect(j.json).toEqual([]);
      expect(existsSync(join(empty.cwd, "nowhere"))).toBe(false); // listing never creates state
    } finally {
      empty.cleanup();
    }
  });

  test("flags that do not apply are refused by name", async () => {
    const r = await bernsteinJson(["replay", "list", "--verify"], { cwd: t.cwd });
    expect(r.code).toBe(2);
    expect(r.json).toMatchObject({ ok: false, error: "flag_not_applicable" });
    expect(r.json.detail).toContain("--verify");
  });

  test("10,000 runs list completely, newest first (equal starts: greatest id first), and the second listing is served from the cache", async () => {
    const big = makeSdd();
    try {
      const row = readFileSync(join(RUN_VECTORS, "chain-4.jsonl"));
      for (let i = 0; i < 10_000; i++) {
        const dir = big.runDir(`run-${String(i).padStart(5, "0")}`);
        mkdirSync(dir);
        writeFileSync(join(dir, "journal.jsonl"), row);
      }
      const first = await bernstein(["replay", "list", "--as-json"], { cwd: big.cwd });
      expect(first.code).toBe(0);
      const runs = JSON.parse(first.stdout);
      expect(runs).toHaveLength(10_000);
      expect(runs[0].run_id).toBe("run-09999");
      expect(runs[9_999].run_id).toBe("run-00000");
      expect(runs.every((e: any) => e.event_count === 4)).toBe(true);
      const cache = JSON.parse(readFileSync(join(big.sdd, "runs", CACHE), "utf8"));
      expect(Object.keys(cache.runs)).toHaveLength(10_000);
      const second = await bernstein(["replay", "list", "--as-json"], { cwd: big.cwd });
      expect(second.stdout).toBe(first.stdout);
    } finally {
      big.cleanup();
    }
  }, 60_000); // 10,000 run directories are created first: a budget for a loaded machine, not a timing
});
