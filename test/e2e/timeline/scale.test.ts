/**
 * A timeline that scales: the page's size is bounded whatever the journal's
 * (curves per lane past --max-bars, the table a window of at most
 * --max-events, payloads and journal text cut), lanes by role by default,
 * --from/--to windows by index and by time, no absolute local path in the
 * page, and a drawing progress line on a terminal only. The thresholds are
 * set by flag so a journal of a few MB exercises them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { binPath, bernstein, bernsteinJson, ROOT } from "../../helpers/cli.ts";
import { journalRows } from "./fixture.ts";
import { JournalFile, writeBigRun } from "./synthetic.ts";

/** The JSON data blocks of a page, parsed (what its script reads). */
function blocks(html: string, kind: string): any[] {
  const out: any[] = [];
  for (const m of html.matchAll(/<script type="application\/json" class="tl-data" data-kind="(\w+)">([^<]*)<\/script>/g)) {
    if (m[1] === kind) out.push(JSON.parse(m[2]!));
  }
  return out;
}

const ROLES = ["architect", "backend", "docs", "qa"];
const RUN = "20990101-000010";
const dir = mkdtempSync(join(tmpdir(), "bern-timeline-scale-"));
const sdd = join(dir, ".sdd");
let big: { path: string; count: number; attempts: number };
let rows: Record<string, any>[];
let n = 0;
const out = () => join(dir, `page-${n++}.html`);

beforeAll(() => {
  // ~20,000 events, ~3,300 attempts, each on its own agent (a one-bar lane each, per agent): ~5 MB.
  big = writeBigRun(sdd, RUN, 20_000);
  rows = journalRows(big.path);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("replay <RUN> --html at scale (compiled binary)", () => {
  test("past the thresholds the page is bounded: attempts as curves per role lane, bars and table for the window", async () => {
    const file = out();
    const r = await bernsteinJson(["replay", RUN, "--html", file, "--max-events", "2000", "--max-bars", "500", "--sdd-dir", sdd]);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ ok: true, events: big.count, embedded_events: 2000, attempts: big.attempts, curves: true, window: { from: 0, to: 1999 } });
    expect(r.json.drawn_attempts).toBeGreaterThan(0);
    expect(r.json.drawn_attempts).toBeLessThan(big.attempts / 5);
    const size = statSync(file).size;
    expect(r.json.bytes).toBe(size);
    // 2,000 events of ~400 bytes, the window's bars, four lanes of 512 buckets, the script: well under the journal's ~5 MB.
    expect(statSync(big.path).size).toBeGreaterThan(4_000_000);
    expect(size).toBeLessThan(1_500_000);
    const html = readFileSync(file, "utf8");
    const events = blocks(html, "events").flat();
    expect(events.map((e) => e[0])).toEqual(Array.from({ length: 2000 }, (_, i) => i));
    // Only attempts that overlap the window are bars: each was claimed within it.
    const attempts = blocks(html, "attempts").flat();
    expect(attempts).toHaveLength(r.json.drawn_attempts);
    expect(attempts.every((a) => a[9][0] <= 1999)).toBe(true);
    const [summary] = blocks(html, "summary");
    expect(summary.lanes).toBe("role");
    expect(summary.window).toMatchObject({ from: 0, to: 1999, cut: "max-events" });
    // Every attempt of the run is in one role's curve, on the run's time axis.
    expect(summary.density.by).toBe("role");
    expect(summary.density.lanes.map((l: any) => l.key).sort()).toEqual(ROLES);
    expect(summary.density.lanes.reduce((s: number, l: any) => s + l.attempts, 0)).toBe(big.attempts);
    expect(summary.density.bucket_ms).toBe(summary.series.bucket_ms);
    for (const lane of summary.density.lanes) expect(lane.busy).toHaveLength(summary.series.events.length);
    // Every 7th attempt fails its gate: the curves count them.
    const failed = summary.density.lanes.reduce((s: number, l: any) => s + l.failed.reduce((a: number, b: number) => a + b, 0), 0);
    expect(failed).toBe(rows.filter((row) => row.event === "task_verification_failed" || row.event === "task_requeued").length);

    const prose = await bernstein(["replay", RUN, "--html", out(), "--max-events", "2000", "--max-bars", "500", "--sdd-dir", sdd]);
    expect(prose.stdout).toContain(`  events:   ${big.count} (#0..#1999, 2000 listed in the page's table)`);
    expect(prose.stdout).toMatch(/attempts: \d+ \(drawn as curves per lane; \d+ as bars\)/);
  });

  test("--lanes agent: one curve per agent up to the lane bound, the rest folded into (other); still bounded", async () => {
    const file = out();
    const r = await bernsteinJson(["replay", RUN, "--html", file, "--lanes", "agent", "--max-events", "100", "--max-bars", "100", "--sdd-dir", sdd]);
    expect(r.code).toBe(0);
    const [summary] = blocks(readFileSync(file, "utf8"), "summary");
    expect(summary.lanes).toBe("agent");
    expect(summary.density.by).toBe("agent");
    expect(summary.density.lanes).toHaveLength(256);
    expect(summary.density.lanes.at(-1).key).toBe("(other)");
    expect(summary.density.folded_attempts).toBe(big.attempts - 255);
    expect(statSync(file).size).toBeLessThan(2_500_000);
  });

  test("below the thresholds every attempt is a bar, in role lanes by default; --lanes sets the page's grouping", async () => {
    const file = out();
    const r = await bernsteinJson(["replay", RUN, "--html", file, "--max-events", "10", "--sdd-dir", sdd]);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ curves: false, drawn_attempts: big.attempts, embedded_events: 10, window: null });
    const html = readFileSync(file, "utf8");
    expect(blocks(html, "attempts").flat()).toHaveLength(big.attempts);
    const [summary] = blocks(html, "summary");
    expect(summary).toMatchObject({ lanes: "role", window: null, density: null, embedded: 10 });
    // The lane selector offers role first (the default), then agent and model.
    expect(html).toContain('<select id="group"><option value="role">per role</option><option value="agent">per agent</option><option value="model">per model</option></select>');
    const byModel = await bernsteinJson(["replay", RUN, "--html", out(), "--lanes", "model", "--max-events", "10", "--sdd-dir", sdd]);
    expect(byModel.code).toBe(0);
    expect(blocks(readFileSync(byModel.json.output, "utf8"), "summary")[0].lanes).toBe("model");
  });

  test("--from/--to by event index and by ISO time: exactly that window in full", async () => {
    const byIndex = out();
    const r = await bernsteinJson(["replay", RUN, "--html", byIndex, "--from", "100", "--to", "199", "--max-bars", "50", "--sdd-dir", sdd]);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ embedded_events: 100, window: { from: 100, to: 199 }, curves: true });
    const html = readFileSync(byIndex, "utf8");
    const events = blocks(html, "events").flat();
    expect(events.map((e) => e[0])).toEqual(Array.from({ length: 100 }, (_, i) => 100 + i));
    expect(events.map((e) => JSON.parse(e[6]).event_hash)).toEqual(rows.slice(100, 200).map((row) => row.event_hash));
    // The bars are the attempts that overlap the window, and all of them.
    const attempts = blocks(html, "attempts").flat();
    const reapedAt = new Map(rows.map((row, i) => [row, i] as const).filter(([row]) => row.event === "agent_reaped").map(([row, i]) => [row.agent_id, i]));
    const overlapping = rows
      .map((row, i) => [row, i] as const)
      .filter(([row, i]) => row.event === "task_claimed" && i <= 199 && reapedAt.get(row.agent_id)! >= 100)
      .map(([row]) => row.agent_id);
    expect(overlapping.length).toBeGreaterThan(10);
    expect(attempts.map((a) => a[0]).sort()).toEqual(overlapping.sort());
    const [summary] = blocks(html, "summary");
    expect(summary.window).toMatchObject({ from: 100, to: 199, cut: null });
    expect(summary.window.t0).toBe(Math.round((rows[100]!.ts - rows[0]!.ts) * 1000));

    const iso = (ts: number) => new Date(Math.round(ts * 1000)).toISOString();
    const byTime = await bernsteinJson(["replay", RUN, "--html", out(), "--from", iso(rows[300]!.ts), "--to", iso(rows[349]!.ts), "--sdd-dir", sdd]);
    expect(byTime.code).toBe(0);
    expect(byTime.json).toMatchObject({ embedded_events: 50, window: { from: 300, to: 349 }, curves: false });
    const timed = blocks(readFileSync(byTime.json.output, "utf8"), "events").flat();
    expect(timed.map((e) => e[0])).toEqual(Array.from({ length: 50 }, (_, i) => 300 + i));

    // A window past the end is empty, not an error.
    const empty = await bernsteinJson(["replay", RUN, "--html", out(), "--from", String(big.count + 10), "--sdd-dir", sdd]);
    expect(empty.code).toBe(0);
    expect(empty.json).toMatchObject({ embedded_events: 0, window: { from: null, to: null } });
  });

  test("bad --from/--to/--lanes/--max-events are usage errors that write nothing; other verbs refuse the flags", async () => {
    const file = join(dir, "never.html");
    for (const args of [
      ["--from", "yesterday"],
      ["--to", "12abc"],
      ["--from", "10", "--to", "5"],
      ["--from", "2026-12-02T00:00:00Z", "--to", "2026-12-01T00:00:00Z"],
      ["--lanes", "team"],
      ["--max-events", "-1"],
      ["--max-bars", "many"],
    ]) {
      const r = await bernsteinJson(["replay", RUN, "--html", file, ...args, "--sdd-dir", sdd]);
      expect(r.code).toBe(2);
      expect(r.json.ok).toBe(false);
      expect(r.stderr).not.toContain("    at ");
    }
    expect(() => statSync(file)).toThrow();
    for (const flag of ["--lanes", "--from", "--to", "--max-events", "--max-bars"]) {
      const r = await bernsteinJson(["replay", RUN, flag, "1", "--sdd-dir", sdd]);
      expect(r.code).toBe(2);
      expect(r.json.error).toBe("flag_not_applicable");
    }
  });

  test("a payload and journal text beyond the page's bounds are cut, saying so", async () => {
    const runId = "20990101-000011";
    const j = new JournalFile(sdd, runId);
    const long = "x".repeat(200_000);
    j.add("run_started", { run_id: runId, git_sha: "", git_branch: "", config_hash: "" }, 0);
    j.add("agent_spawned", { agent_id: `a-${long}`, role: `r-${long}`, model: "m", task_ids: ["T"] });
    j.add("task_claimed", { task_id: "T", agent_id: `a-${long}`, model: "m" });
    j.add("tool_result", { output: long, agent_id: "b" });
    j.add("agent_reaped", { agent_id: `a-${long}` });
    j.close();
    const file = out();
    const r = await bernsteinJson(["replay", runId, "--html", file, "--sdd-dir", sdd]);
    expect(r.code).toBe(0);
    expect(statSync(file).size).toBeLessThan(400_000);
    const html = readFileSync(file, "utf8");
    const events = blocks(html, "events").flat();
    expect(events[3][6].length).toBeLessThan(65_536 + 200);
    expect(events[3][6]).toContain(" … [cut: ");
    const [attempt] = blocks(html, "attempts").flat();
    expect(attempt[0]).toHaveLength(513);
    expect(attempt[0].endsWith("…")).toBe(true);
    expect(attempt[3]).toHaveLength(513);
  });

  test("text that grows sixfold when escaped for the page still stays within the table's byte bound", async () => {
    // 400 rows of 10 KB of "<" (each written into the page as \u003c), each with its own long event name.
    const runId = "20990101-000012";
    const j = new JournalFile(sdd, runId);
    for (let i = 0; i < 400; i++) j.add(`${i}${"<".repeat(300)}`, { output: "<".repeat(10_000) });
    j.close();
    expect(statSync(j.path).size).toBeLessThan(5_000_000);
    const file = out();
    const r = await bernsteinJson(["replay", runId, "--html", file, "--sdd-dir", sdd]);
    expect(r.code).toBe(0);
    expect(r.json.events).toBe(400);
    // ~24 MB if every row were embedded; the table stops at 5 MB.
    expect(r.json.embedded_events).toBeLessThan(100);
    expect(r.json.embedded_events).toBeGreaterThan(50);
    expect(statSync(file).size).toBeLessThan(5_600_000);
    const [summary] = blocks(readFileSync(file, "utf8"), "summary");
    // Event type names are cut at 128 characters in the filter's list.
    expect(Object.keys(summary.types)).toHaveLength(400);
    expect(Object.keys(summary.types).every((k) => k.length === 129 && k.endsWith("…"))).toBe(true);
  });

  test("no absolute local path in the page, even where the verdict names the seal", async () => {
    const runDir = join(sdd, "runs", RUN);
    writeFileSync(join(runDir, "seal.json"), JSON.stringify({ head: "0".repeat(64), event_count: big.count }));
    try {
      const file = out();
      const r = await bernsteinJson(["replay", RUN, "--html", file, "--max-events", "10", "--sdd-dir", sdd]);
      expect(r.code).toBe(1);
      expect(r.json.error).toBe("seal_mismatch");
      const html = readFileSync(file, "utf8");
      expect(html).toContain("(&#60;run_dir&#62;/seal.json)");
      for (const p of [dir, sdd, runDir, tmpdir(), ROOT]) expect(html.includes(p)).toBe(false);
      expect(html.match(/(?:^|[\s"'(>])\/(?:tmp|home|root|work|var|Users|private)\/\S{0,40}/)?.[0] ?? null).toBeNull();
    } finally {
      rmSync(join(runDir, "seal.json"));
    }
  });

  test("a drawing progress line on a terminal (stderr), none when piped", async () => {
    // The binary on a pseudo-terminal (a python3 pty relay), the line shown at once.
    const relay = [
      "import os, pty, sys",
      "pid, fd = pty.fork()",
      "if pid == 0:",
      "    os.execv(sys.argv[1], sys.argv[1:])",
      "while True:",
      "    try: data = os.read(fd, 65536)",
      "    except OSError: break",
      "    if not data: break",
      "    os.write(1, data)",
      "sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) & 255)",
    ].join("\n");
    const file = out();
    const proc = Bun.spawn(["python3", "-c", relay, binPath(), "replay", RUN, "--html", file, "--max-events", "10", "--sdd-dir", sdd], {
      env: { ...process.env, NO_COLOR: "1", BERNSTEIN_PROGRESS_DELAY_MS: "0" },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const [tty, , code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect(code).toBe(0);
    expect(tty).toMatch(/\rdrawing [0-9.]+ MB \/ [0-9.]+ MB \(\d+%\)/);
    // Erased before the report.
    const last = tty.lastIndexOf("\rdrawing");
    expect(tty.indexOf("\r\x1b[K", last + 1)).toBeGreaterThan(last);
    expect(tty.indexOf("Timeline written")).toBeGreaterThan(tty.indexOf("\r\x1b[K", last + 1));

    const piped = await bernstein(["replay", RUN, "--html", out(), "--max-events", "10", "--sdd-dir", sdd], { env: { BERNSTEIN_PROGRESS_DELAY_MS: "0" } });
    expect(piped.code).toBe(0);
    expect(piped.stderr).toBe("");
    expect(piped.stdout).not.toContain("\r");
  });
});
