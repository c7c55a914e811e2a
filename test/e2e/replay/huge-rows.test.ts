/**
 * A run journal holding a row over the old 16 MiB reader limit (a 20 MB
 * tool result, `journal record`'s own output): every replay verb of a run
 * reads it (the run journal's row limit is the writer's, 256 MiB), with the
 * exact pass's output, within 64 MB + 3x the row. The row is too long for
 * the readers' kernel, so it takes the exact path, whose strings of a
 * megabyte or more stay bytes: the page (`--html`) and `--follow` write
 * such a row from its bytes in pieces, never as one text.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readJournalSync } from "../../../src/journal/reader.ts";
import { readMetadata } from "../../../src/journal/metadata.ts";
import { renderJson } from "../../../src/render/json.ts";
import { renderTimeline } from "../../../src/timeline/generate.ts";
import { bernstein, bernsteinPeak, expectWithinRowBound, longestLine } from "../../helpers/cli.ts";

let sdd: string;
let runDir: string;
let journal: string;
let rowBytes = 0;

beforeAll(async () => {
  sdd = mkdtempSync(join(tmpdir(), "bern-huge-rows-"));
  runDir = join(sdd, "runs", "h");
  journal = join(runDir, "journal.jsonl");
  // ~20 MB once json.dumps escapes it: non-ASCII, surrogate pairs, quotes and line breaks in a string of
  // megabytes; a nested list; a long `reason` the page reads of a failure
  const text = "résumé \"q\" 😀 line\nbreak\\ ".repeat(340_000);
  const events = [
    { event: "run_started", run_id: "h", goal: "huge rows" },
    { event: "task_claimed", task_id: "t1", agent_id: "a1", role: "backend", model: "m" },
    { event: "tool_result", task_id: "t1", agent_id: "a1", output: text, nested: [1.5, { k: text.slice(0, 300_000) }, null] },
    { event: "task_failed", task_id: "t1", agent_id: "a1", reason: "é😀".repeat(400_000) },
    { event: "run_completed" },
  ];
  const record = async (run: string, rows: Record<string, unknown>[]) => {
    const r = await bernstein(["journal", "record", run, "--sdd-dir", sdd], { stdin: rows.map((e) => JSON.stringify(e)).join("\n") + "\n" });
    expect(r.code).toBe(0);
  };
  await record("h", events);
  // for replay diff: the same run again (its run id aside), and one whose huge tool result ends otherwise
  await record("same", events.map((e) => (e.event === "run_started" ? { ...e, run_id: "same" } : e)));
  await record("other", events.map((e) => (e.event === "tool_result" ? { ...e, output: text + "!" } : e)));
  rowBytes = longestLine(journal);
  expect(rowBytes).toBeGreaterThan(16 * 1024 * 1024);
}, 60_000);
afterAll(() => rmSync(sdd, { recursive: true, force: true }));

/** The binary run with `args` on the test's state directory: stdout, exit code, peak RSS. */
function run(args: string[]): ReturnType<typeof bernsteinPeak> {
  return bernsteinPeak([...args, "--sdd-dir", sdd]);
}

/** Within 64 MB + `k` x the longest row (k = 3 for one journal; replay diff reads two). */
function bounded(args: string[], kb: number | null, k = 3): void {
  expectWithinRowBound(args, kb, rowBytes, k);
}

/** The journal's rows as the exact reader reads them (its huge values as bytes: renderJson writes them alike). */
function rows(): Map<string, unknown>[] {
  const out: Map<string, unknown>[] = [];
  for (const item of readJournalSync(journal)) if (item.kind === "row") out.push(item.row);
  return out;
}

describe("replay verbs on a run journal with a 20 MB row", () => {
  test("--html: the exact pass's page", async () => {
    let exact = "";
    await renderTimeline(
      { runId: "h", journal, metadata: readMetadata(runDir), seal: null, sealPath: null, exactPass: true, paths: { [journal]: "<run_dir>/journal.jsonl", [runDir]: "<run_dir>", [sdd]: "<sdd_dir>" } },
      (chunk) => {
        exact += typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk);
      },
    );
    const args = ["replay", "h", "--html", "-"];
    const r = await run(args);
    expect(r.code).toBe(0);
    expect(r.stdout.length).toBeGreaterThan(100_000);
    expect(r.stdout.includes("characters as recorded")).toBe(true);
    expect(r.stdout === exact).toBe(true);
    bounded(args, r.kb);
  }, 60_000);

  test("--follow --as-json: each event as renderJson writes the row, then the verdict", async () => {
    const args = ["replay", "h", "--follow", "--as-json"];
    const r = await run(args);
    expect(r.code).toBe(0);
    const lines = r.stdout.split("\n");
    const expected = rows().map((row, i) => `{"index": ${i}, "event": ${renderJson(row, null)}}`);
    expect(lines.length).toBe(expected.length + 2);
    for (let i = 0; i < expected.length; i++) expect({ i, same: lines[i] === expected[i] }).toEqual({ i, same: true });
    expect(JSON.parse(lines[expected.length]!)).toMatchObject({ ok: true, ended: "run_completed", count: expected.length });
    bounded(args, r.kb);
  }, 60_000);

  test("the display, --as-json, --follow, --from-step and --verify read it", async () => {
    const parsed = readFileSync(journal, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
    const cases: [string[], (out: string) => boolean][] = [
      [["replay", "h"], (out) => out.startsWith("Deterministic Replay\nRun: h ") && out.includes("Events: 5")],
      [["replay", "h", "--as-json"], (out) => JSON.stringify(JSON.parse(out).events) === JSON.stringify(parsed)],
      [["replay", "h", "--follow"], (out) => out.includes("tool_result") && out.includes("chain intact")],
      [["replay", "h", "--from-step", "4", "--as-json"], (out) => JSON.parse(out).step_count === 4],
      [["replay", "h", "--verify", "--as-json"], (out) => JSON.parse(out).ok === true],
    ];
    for (const [args, check] of cases) {
      const r = await run(args);
      expect({ args, code: r.code, read: check(r.stdout) }).toEqual({ args, code: 0, read: true });
      bounded(args, r.kb);
    }
  }, 120_000);
});

describe("replay diff of runs with a 20 MB row", () => {
  /** Row `i` of run `run`'s journal, as json.loads reads it. */
  const rowOf = (run: string, i: number) => JSON.parse(readFileSync(join(sdd, "runs", run, "journal.jsonl"), "utf8").split("\n")[i]!);

  test("identical runs: no divergence, the huge rows compared on their bytes", async () => {
    const args = ["replay", "diff", "h", "same", "--as-json"];
    const r = await run(args);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, diverged: false, reason: "identical: 5 events match" });
    bounded(args, r.kb, 6);
  }, 60_000);

  test("a divergence in the huge row: --as-json prints both rows whole, the prose cuts the value and says how long it is", async () => {
    let args = ["replay", "diff", "h", "other", "--as-json"];
    let r = await run(args);
    expect(r.code).toBe(1);
    const d = JSON.parse(r.stdout);
    expect(d).toMatchObject({ ok: false, error: "divergence", index: 2, reason_code: "payload_mismatch", fields_changed: ["output"] });
    expect(d.a_event).toEqual(rowOf("h", 2));
    expect(d.b_event).toEqual(rowOf("other", 2));
    bounded(args, r.kb, 6);
    args = ["replay", "diff", "h", "other"];
    r = await run(args);
    expect(r.code).toBe(1);
    // run A's value, in the left column
    const chars = JSON.stringify(rowOf("h", 2).output).length;
    expect(chars).toBeGreaterThan(65_536);
    // the side-by-side wraps the note in its column
    const noted = new RegExp(`\\[cut: ${chars}\\s+characters as recorded; --as-json prints it\\s+whole\\]`);
    expect({ noted: noted.test(r.stdout.replace(/ {2,}\S.*$/gm, "")), bytes: r.stdout.length < 1_000_000 }).toEqual({ noted: true, bytes: true });
    bounded(args, r.kb, 6);
  }, 60_000);
});
