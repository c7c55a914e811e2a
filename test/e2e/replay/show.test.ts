import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bernstein, bernsteinJson } from "../../helpers/cli.ts";
import { runPython } from "../../helpers/python.ts";
import { makeSdd, writeMetadata, type SddTree } from "./fixture.ts";

const CHAIN4_HEAD = "beb8b92285cb2d3e5f1a4fc30b1024fb9848da6105bbada9fa19fb0933847f71";

describe("replay <RUN_ID> / latest (compiled binary)", () => {
  let t: SddTree;
  beforeAll(() => {
    t = makeSdd({ "20260101-000000": "chain-4", "20260102-000000": "hazards", fw: "foreign-writer", torn: "hazards-torn-tail" });
    writeMetadata(t.runDir("20260101-000000"), {
      run_id: "20260101-000000",
      started_at: 1727000000.5,
      git_sha: "0123456789abcdef0123456789abcdef01234567",
      git_branch: "feature/replay",
      config_hash: "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210",
      seed_path: "bernstein.yaml",
    });
  });
  afterAll(() => t.cleanup());

  test("header, table and an honest footer for the four-row worked example", async () => {
    const r = await bernstein(["replay", "20260101-000000"], { cwd: t.cwd });
    expect(r.code).toBe(0);
    const fp = runPython(
      `import hashlib,json,sys
h=hashlib.sha256()
for line in open(sys.stdin.read().strip('"')):
    row=json.loads(line); row.pop("ts",None); row.pop("elapsed_s",None)
    h.update((json.dumps(row,sort_keys=True,separators=(",",":"))+"\\n").encode())
print(json.dumps(h.hexdigest()))`,
      t.journal("20260101-000000"),
    ) as string;
    const started = runPython(
      "import json,sys,datetime\nprint(json.dumps(datetime.datetime.fromtimestamp(json.load(sys.stdin)).strftime('%Y-%m-%d %H:%M:%S')))",
      1727000000.5,
    ) as string;
    expect(r.stdout).toContain(`Run: 20260101-000000  Events: 4  Duration: 0m03s  Fingerprint: ${fp.slice(0, 16)}...`);
    expect(r.stdout).toContain(`Started: ${started}  Branch: feature/replay  SHA: 0123456789ab  Config: fedcba987654...`);
    expect(r.stdout).toMatch(/TIME +EVENT +AGENT +TASK +DETAIL/);
    expect(r.stdout).toMatch(/0:00 +run_started +id=run-1/);
    expect(r.stdout).toMatch(/0:01 +task_claimed +T-1/);
    expect(r.stdout).toMatch(/0:03 +run_completed +id=run-1/);
    expect(r.stdout).toContain(`SHA-256 fingerprint: ${fp}`);
    expect(r.stdout).toContain(`Merkle head: ${CHAIN4_HEAD}`);
    // Prose wraps at the terminal width (100 when not a terminal): compare with whitespace folded.
    expect(r.stdout.replace(/\s+/g, " ")).toContain("it proves the stream is complete only if it also matches a seal");
    expect(r.stdout).toContain("Seal: none");
    expect(r.stdout).not.toContain("\x1b[");
  });

  test("the footer says whether a seal exists and matches", async () => {
    const sealPath = join(t.runDir("20260101-000000"), "seal.json");
    writeFileSync(sealPath, JSON.stringify({ event_count: 4, head: CHAIN4_HEAD }));
    let r = await bernstein(["replay", "20260101-000000"], { cwd: t.cwd });
    expect(r.stdout).toContain("Seal: matches");
    writeFileSync(sealPath, JSON.stringify({ event_count: 5, head: CHAIN4_HEAD }));
    r = await bernstein(["replay", "20260101-000000"], { cwd: t.cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Seal: DOES NOT MATCH");
    writeFileSync(sealPath, "{not json");
    r = await bernstein(["replay", "20260101-000000"], { cwd: t.cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Seal: unreadable");
    const { unlinkSync } = await import("node:fs");
    unlinkSync(sealPath);
  });

  test("--as-json is {run_id, metadata, events} with every event exactly as recorded", async () => {
    // NaN/Infinity are recorded in this journal, so the document is read by Python's json (which accepts them).
    const r = await bernstein(["replay", "fw", "--as-json"], { cwd: t.cwd });
    expect(r.code).toBe(0);
    // Numbers keep their recorded spelling (a re-serialiser would print 1e-05).
    expect(r.stdout).toContain("1E-5");
    const same = runPython(
      `import json,sys
job=json.load(sys.stdin)
doc=json.loads(job["out"])
rows=[json.loads(l) for l in open(job["path"], encoding="utf-8") if l.strip()]
print(json.dumps([list(doc), doc["run_id"], doc["metadata"], len(doc["events"]), json.dumps(doc["events"],sort_keys=True)==json.dumps(rows,sort_keys=True)]))`,
      { out: r.stdout, path: t.journal("fw") },
    );
    expect(same).toEqual([["ok", "run_id", "metadata", "events"], "fw", null, 300, true]);
  });

  test("--as-json with metadata keeps its fields and spells started_at as a float", async () => {
    const r = await bernsteinJson(["replay", "20260101-000000", "--limit", "2"], { cwd: t.cwd });
    expect(r.json.metadata).toEqual({
      run_id: "20260101-000000",
      started_at: 1727000000.5,
      git_sha: "0123456789abcdef0123456789abcdef01234567",
      git_branch: "feature/replay",
      config_hash: "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210",
      seed_path: "bernstein.yaml",
    });
    expect(r.json.events.map((e: any) => e.event)).toEqual(["run_started", "task_claimed"]);
  });

  test("latest is the run that started last, announced on stderr and never inside the JSON", async () => {
    // Without metadata, 'torn' and 20260102 share their first ts; the id breaks the tie.
    let r = await bernsteinJson(["replay", "latest", "--limit", "1"], { cwd: t.cwd });
    expect(r.code).toBe(0);
    expect(r.json.run_id).toBe("torn");
    // A run whose metadata says it started later wins, although its id is the smallest.
    mkdirSync(t.runDir("a-late"), { recursive: true });
    writeFileSync(t.journal("a-late"), readFileSync(t.journal("20260101-000000")));
    writeMetadata(t.runDir("a-late"), { run_id: "a-late", started_at: 1800000000.5, git_sha: "", git_branch: "", config_hash: "", seed_path: null });
    try {
      r = await bernsteinJson(["replay", "latest", "--limit", "1"], { cwd: t.cwd });
      expect(r.json.run_id).toBe("a-late");
      expect(r.stderr).toContain("Replaying latest run: a-late");
      const p = await bernstein(["replay", "latest", "--limit", "3"], { cwd: t.cwd });
      expect(p.stdout).toContain("Run: a-late");
    } finally {
      rmSync(t.runDir("a-late"), { recursive: true });
    }
  });

  test("--limit shows the first N events and says so; the header facts come from what was read", async () => {
    const r = await bernstein(["replay", "20260102-000000", "--limit", "3"], { cwd: t.cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Events: 3 (first 3 events shown)");
    expect(r.stdout).toContain("the first 3 events shown");
    expect(r.stdout.match(/^\d+:\d\d /gm)).toHaveLength(3);
    const j = await bernsteinJson(["replay", "20260102-000000", "--limit", "0"], { cwd: t.cwd });
    expect(j.json.events).toEqual([]);
  });

  test("lines the reader discards are not shown and are reported on stderr", async () => {
    const r = await bernstein(["replay", "torn"], { cwd: t.cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Events: 299 ");
    expect(r.stderr).toContain("physical line(s) 299");
  });

  test("colour: none under NO_COLOR or --no-color, event colours with FORCE_COLOR=1", async () => {
    const plain = await bernstein(["replay", "20260102-000000", "--limit", "6"], { cwd: t.cwd });
    expect(plain.stdout).not.toContain("\x1b[");
    const forced = await bernstein(["replay", "20260102-000000", "--limit", "6"], { cwd: t.cwd, env: { NO_COLOR: "", FORCE_COLOR: "1" } });
    expect(forced.stdout).toContain("\x1b[1m\x1b[92mrun_started"); // bold bright green
    expect(forced.stdout).toContain("\x1b[1m\x1b[96magent_spawned"); // bold bright cyan
    expect(forced.stdout).toContain("\x1b[1m\x1b[91magent_reaped"); // bold bright red
    expect(forced.stdout).toContain("\x1b[93mtask_claimed"); // bright yellow
    const flag = await bernstein(["replay", "20260102-000000", "--limit", "6", "--no-color"], { cwd: t.cwd, env: { NO_COLOR: "", FORCE_COLOR: "1" } });
    expect(flag.stdout).not.toContain("\x1b[");
    const json = await bernstein(["replay", "20260102-000000", "--limit", "6", "--as-json"], { cwd: t.cwd, env: { NO_COLOR: "", FORCE_COLOR: "1" } });
    expect(json.stdout).not.toContain("\x1b[");
  });

  test("hostile journal text cannot inject terminal escapes, even with colour on", async () => {
    const dir = t.runDir("hostile");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "journal.jsonl"),
      '{"ts": 1.0, "elapsed_s": 0.0, "index": 0, "event": "run_started\\u001b[2J", "agent_id": "x\\u001b]0;pwned\\u0007", "model": "m\\u202eevil"}\n',
    );
    const r = await bernstein(["replay", "hostile"], { cwd: t.cwd, env: { NO_COLOR: "", FORCE_COLOR: "1" } });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain("\x1b[2J");
    expect(r.stdout).not.toContain("\x1b]0;");
    expect(r.stdout).not.toContain("\u202e");
    expect(r.stdout).toContain("run_started\\x1b[2J");
  });

  test("a journal that cannot be read is one JSON error document (exit 3), never a half-written stream", async () => {
    mkdirSync(join(t.runDir("dirjournal"), "journal.jsonl"), { recursive: true });
    const r = await bernsteinJson(["replay", "dirjournal"], { cwd: t.cwd });
    expect(r.code).toBe(3);
    expect(r.json).toMatchObject({ ok: false, error: "input_not_regular_file", run_id: "dirjournal" });
    const p = await bernstein(["replay", "dirjournal"], { cwd: t.cwd });
    expect(p.code).toBe(3);
    expect(p.stdout).toBe("");
    expect(p.stderr).not.toContain("    at ");
  });

  test("an empty journal says so and exits 0", async () => {
    mkdirSync(t.runDir("empty"), { recursive: true });
    writeFileSync(t.journal("empty"), "\n\n");
    const r = await bernstein(["replay", "empty"], { cwd: t.cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Replay log is empty.");
    const j = await bernsteinJson(["replay", "empty"], { cwd: t.cwd });
    expect(j.json).toEqual({ ok: true, run_id: "empty", metadata: null, events: [] });
  });

  test("the table fits the terminal width (COLUMNS) and wraps DETAIL instead of overflowing", async () => {
    for (const cols of ["80", "120"]) {
      const r = await bernstein(["replay", "20260102-000000", "--limit", "40"], { cwd: t.cwd, env: { COLUMNS: cols } });
      const tableLines = r.stdout.split("\n").filter((l) => /^(TIME|\d+:\d\d|\s{20,}\S)/.test(l));
      expect(tableLines.length).toBeGreaterThan(40);
      for (const l of tableLines) expect([...l].length).toBeLessThanOrEqual(Number(cols));
    }
  });

  test("a row appended while nothing else changed shows up (no stale display)", async () => {
    const before = await bernsteinJson(["replay", "20260101-000000"], { cwd: t.cwd });
    appendFileSync(t.journal("20260101-000000"), '{"event": "late", "index": 4}\n');
    const after = await bernsteinJson(["replay", "20260101-000000"], { cwd: t.cwd });
    expect(after.json.events.length).toBe(before.json.events.length + 1);
    expect(readFileSync(t.journal("20260101-000000"), "utf8")).toContain('"late"');
  });
});
