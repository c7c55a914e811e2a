/**
 * The bench's journal shapes (issue 28): each, generated at a few MB, is a
 * journal the compiled binary and the Python reference verifier both call
 * ok, with as many events as the generator says it wrote; same seed, same
 * bytes; and each carries what makes it that shape.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, bernstein, bernsteinJson } from "../helpers/cli.ts";

let dir: string;

function gen(args: string[]): { code: number; stdout: string; stderr: string } {
  const p = Bun.spawnSync([process.execPath, join(ROOT, "bench", "journal-gen.ts"), ...args], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  return { code: p.exitCode, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
}

function written(args: string[]): { path: string; rows: number; bytes: number; shape: string } {
  const r = gen(args);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}

function pythonVerdict(path: string): { ok: boolean; count: number; coverage: string } {
  const p = Bun.spawnSync(["python3", join(ROOT, "test", "reference", "verify_journal.py"), path], { stdout: "pipe", stderr: "pipe" });
  expect(p.stderr.toString()).toBe("");
  return JSON.parse(p.stdout.toString());
}

const SIZE = "3e6";
const made = new Map<string, { path: string; rows: number; bytes: number; text: string }>();

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "bernstein-journal-shapes-"));
  for (const shape of ["bench", "mixed", "large-rows", "python", "windows", "compact"]) {
    const w = written(["--sdd", join(dir, shape), "--run", `r-${shape}`, "--bytes", SIZE, "--shape", shape, "--seed", "3"]);
    expect(w.shape).toBe(shape);
    made.set(shape, { ...w, text: readFileSync(w.path, "latin1") });
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("bench journal shapes", () => {
  test.each(["bench", "mixed", "large-rows", "python", "windows", "compact"])("%s: at least the size asked, verified ok by the binary and by the Python reference, event counts equal", async (shape) => {
    const m = made.get(shape)!;
    expect(m.bytes).toBeGreaterThanOrEqual(3e6);
    expect(readFileSync(m.path).length).toBe(m.bytes);
    const lines = m.text.split(shape === "windows" ? "\r\n" : "\n");
    expect(lines.pop()).toBe("");
    expect(lines.length).toBe(m.rows);
    const v = await bernsteinJson(["journal", "verify", m.path, "--as-json"]);
    expect(v.code).toBe(0);
    expect(v.json).toMatchObject({ ok: true, chain_consistent: true, coverage: "complete", count: m.rows });
    const py = pythonVerdict(m.path);
    expect(py).toMatchObject({ ok: true, coverage: "complete", count: m.rows });
  });

  // Speed on journals the bench did not tune to starts with the codec taking what Python writes: escaped keys, NaN, big ints, CR LF.
  test.each(["bench", "mixed", "large-rows", "python", "windows"])("%s: the verify kernel takes every row but the first (whose prev_hash is empty)", async (shape) => {
    const m = made.get(shape)!;
    const r = await bernstein(["journal", "verify", m.path, "--threads", "1"], { env: { BERNSTEIN_VERIFY_STATS: "1" } });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`verify stats: rows by kernel ${m.rows - 1}, exact 1; threads 1`);
  });

  test.each(["mixed", "large-rows", "python", "windows", "compact"])("%s: the same seed writes the same bytes, another seed others", (shape) => {
    const again = written(["--sdd", join(dir, `${shape}-again`), "--run", `r-${shape}`, "--bytes", SIZE, "--shape", shape, "--seed", "3"]);
    expect(readFileSync(again.path, "latin1")).toBe(made.get(shape)!.text);
    const other = written(["--sdd", join(dir, `${shape}-other`), "--run", `r-${shape}`, "--bytes", "1", "--shape", shape, "--seed", "4"]);
    expect(made.get(shape)!.text.startsWith(readFileSync(other.path, "latin1"))).toBe(false);
  });

  test("mixed: every spec §9 event kind, keys in the writer's order, hard floats in Python's spelling, escapes, multi-KB output", () => {
    const m = made.get("mixed")!;
    const rows = m.text.trimEnd().split("\n");
    const kinds = new Set(rows.map((l) => /"event": "([^"]+)"/.exec(l)![1]));
    for (const k of [
      "run_started", "tick_start", "plan.graph", "plan.graph.full", "agent_spawned", "context.files_attached", "skills.injected",
      "task_claimed", "tool_call", "task_completed", "task_verification_failed", "task_retried", "provider_state_mutation",
      "provider_state_capability", "agent_reaped", "wal_recovery", "batch_job_submitted", "dispatch_knob_selection",
      "loaded_extension_set", "run_completed",
    ]) {
      expect(kinds.has(k)).toBe(true);
    }
    expect(rows[0]).toMatch(/^\{"ts": [0-9.]+, "elapsed_s": [0-9.]+, "index": 0, "event": "run_started", "prev_hash": "", "payload_hash": "[0-9a-f]{64}", "event_hash": "[0-9a-f]{64}", "run_id": "r-mixed", "max_agents": 8, "budget_usd": 12.5, /);
    // the last row closes the run; its fingerprint is the head before it
    const last = JSON.parse(rows.at(-1)!);
    expect(last.event).toBe("run_completed");
    expect(last.fingerprint).toBe(last.prev_hash);
    for (const f of ["1e-07", "1e+22", "123456789.125", "0.30000000000000004", "5e-324", "1.7976931348623157e+308", "-0.0", "1e+16"]) {
      expect(m.text).toContain(`: ${f}`);
    }
    for (const esc of ["\\u4fee\\u590d", "\\ud83d\\ude80", "\\u0000", "\\u007f", "\\u2028", "\\\"quoted\\\"", "back\\\\slash", "\\t", "\\n", "\\u001b[31m"]) {
      expect(m.text).toContain(esc);
    }
    expect(m.text).toMatch(/"failed_signals": \["[a-z_]+"/);
    expect(m.text).toMatch(/"entries": \[\{"path": "[^"]+", "sha256": "[0-9a-f]{16}", "bytes": \d+, "lines": \{"first": 1/);
    expect(Math.max(...rows.map((l) => l.length))).toBeGreaterThan(4000);
  });

  test("large-rows: every row after run_started is about 1 MB, with escapes, non-ASCII and nested lists", () => {
    const rows = made.get("large-rows")!.text.trimEnd().split("\n");
    expect(rows.length).toBeGreaterThanOrEqual(3);
    for (const row of rows.slice(1)) {
      expect(row.length).toBeGreaterThan(900_000);
      expect(row.length).toBeLessThan(2_000_000);
    }
    expect(rows[1]).toContain("\\u4fee\\u590d");
    expect(rows[1]).toMatch(/"chunks": \[\{"seq": 0, "lines": \["/);
  });

  test("python: rows as Python's json.dumps writes them: NaN, Infinity, ints past 2**64, lone surrogates, tuples as lists", () => {
    const m = made.get("python")!;
    for (const s of [": NaN", ": Infinity", ": -Infinity", "\\udc80", "\"task_ids\": [\"T-1\"]", "\"path\": \"src/core/mod_"]) expect(m.text).toContain(s);
    expect(m.text).toMatch(/"big": 1844674407370955\d{4}/);
    // metrics rows: 16- and 17-digit doubles in both notations (the float decision's hard cases)
    expect(m.text).toMatch(/"event": "metrics".*"values": \[[^\]]*\d\.\d{15,16}e-\d\d/);
    expect(m.text).toMatch(/"values": \[[^\]]*\d\.\d{15,16}e\+\d\d/);
    expect(m.text).toMatch(/"values": \[[^\]]*0\.000\d{16,17}[,\]]/);
    const meta = readFileSync(join(dir, "python", "runs", "r-python", "metadata.json"), "utf8");
    expect(JSON.parse(meta)).toMatchObject({ run_id: "r-python", git_sha: "", seed_path: null });
  });

  test("windows: the python shape's rows, every line ended by CR LF as Python's text mode writes them on Windows", () => {
    const w = made.get("windows")!;
    const p = made.get("python")!;
    // the same events (the rows differ in the run's id, r-windows, and so in their hashes), as many as the size asked holds with the longer line ends
    expect(w.rows).toBeGreaterThan(p.rows * 0.99);
    expect(w.text.split("\r\n").length).toBe(w.rows + 1);
    expect(/[^\r]\n/.test(w.text)).toBe(false);
    const firstRows = (text: string, eol: string) => text.split(eol).slice(0, 50).map((l) => /"event": "([^"]+)"/.exec(l)![1]);
    expect(firstRows(w.text, "\r\n")).toEqual(firstRows(p.text, "\n"));
  });

  test("compact: the python shape's rows as `jq -c` rewrites them, taken by the kernel re-spaced", async () => {
    const c = made.get("compact")!;
    const p = made.get("python")!;
    // no whitespace between tokens, raw UTF-8; the same events in the same order as the python shape's (its run id differs)
    expect(c.text).not.toMatch(/^\{"ts": /m);
    expect(Buffer.from(c.text, "latin1").toString("utf8")).toContain("修复");
    expect(c.text).toMatch(/^\{"ts":[0-9.]+,"elapsed_s":[0-9.]+,"index":0,"event":"run_started","prev_hash":"",/);
    const events = (text: string, sep: string) => text.split("\n").slice(0, 50).map((l) => new RegExp(`"event":${sep}"([^"]+)"`).exec(l)![1]);
    expect(events(c.text, "")).toEqual(events(p.text, " "));
    const r = await bernstein(["journal", "verify", c.path, "--threads", "1"], { env: { BERNSTEIN_VERIFY_STATS: "1" } });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`verify stats: rows by kernel ${c.rows - 1}, exact 1; threads 1; re-spaced ${c.rows - 1} of the kernel's`);
  });

  test("an unknown shape, or --shape with an agent journal, is refused (exit 2, nothing written)", () => {
    const bad = gen(["--sdd", join(dir, "bad"), "--run", "x", "--bytes", "1", "--shape", "nope"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.split("\n")[0]).toBe('journal-gen: --shape takes one of bench, mixed, large-rows, python, windows, compact, got "nope"');
    const agent = gen(["--sdd", join(dir, "bad"), "--agent", "x", "--steps", "1", "--shape", "mixed"]);
    expect(agent.code).toBe(2);
    expect(agent.stderr.split("\n")[0]).toBe("journal-gen: --shape goes with --run, not --agent");
    expect(existsSync(join(dir, "bad"))).toBe(false);
    // python3 never sees an unsafe run id: the project's path rule refuses it first
    const unsafe = gen(["--sdd", join(dir, "bad"), "--run", "../escape", "--bytes", "1", "--shape", "python"]);
    expect(unsafe.code).toBe(2);
    expect(unsafe.stderr).toStartWith('journal-gen: unsafe run_id for journal path: "../escape"');
    expect(existsSync(join(dir, "bad"))).toBe(false);
  });
});
