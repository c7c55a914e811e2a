/**
 * Issue 30's bound: a journal with a row of tens of megabytes verifies in
 * at most 64 MB + 2 x its longest row of peak RSS (getrusage, what
 * `/usr/bin/time -f %M` reports), through the compiled binary, with the
 * Python reference's head. Two shapes that cost many times the row
 * before: one long string with escapes and non-ASCII (decoded into JS
 * strings), and a nested object with unsorted keys holding a long array
 * (its canonical pre-image buffered whole to sort it, then copied). A
 * shorter one-string row (under the display's 16 MiB limit) through the
 * replay table and --as-json, held to the same bound; and rows whose
 * *shown* fields (agent, task, model, reason…) are megabytes long, which
 * the table decodes and lays out piece by piece.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EventJournal } from "../../../src/journal/writer.ts";
import { ROOT } from "../../helpers/cli.ts";
import { measuredRun } from "../../helpers/dense-rows.ts";

const MB = 1024 * 1024;

const GEN = `
import json, os, sys
sys.path.insert(0, os.path.join(sys.argv[1], "test", "reference"))
from verify_journal import event_hash, payload_hash
out, kind, target = sys.argv[2], sys.argv[3], int(sys.argv[4])
chunk = "R\\u00e9sum\\u00e9 \\"q\\" back\\\\slash line\\nbreak \\U0001F680 \\u2603\\t " * 8
if kind == "object":
    unit = {"c": [1, None], "b": "xy", "a": 1.5}
    payload = {"result": {"zz": [dict(unit) for _ in range(target // 38)], "k\\u00e9y": {"y": 2, "x": [1.5, "\\u2603"]}, "aa": 1}}
else:
    payload = {"output": "".join(chunk + str(k) for k in range(target // len(json.dumps(chunk)))), "alpha": "x"}
rows, prev = [], ""
for i, (event, p) in enumerate([("run_started", {"run_id": "r"}), ("tool_result", payload), ("run_completed", {"ok": True})]):
    ph = payload_hash(event, p); eh = event_hash(prev, event, ph, i)
    row = {"ts": 1727000000.5 + i, "elapsed_s": 0.1 * i, "index": i, "event": event, "prev_hash": prev, "payload_hash": ph, "event_hash": eh}
    row.update(p); rows.append(json.dumps(row)); prev = eh
d = os.path.join(out, "runs", "r"); os.makedirs(d)
open(os.path.join(d, "journal.jsonl"), "w").write("\\n".join(rows) + "\\n")
s = payload.get("output", "")
print(json.dumps({"head": prev, "row_bytes": max(len(r) for r in rows), "units": len(s.encode("utf-16-le")) // 2}))
`;

interface Fixture {
  sdd: string;
  journal: string;
  head: string;
  rowBytes: number;
  units: number;
}

function writeFixture(dir: string, kind: "string" | "object", bytes: number): Fixture {
  const sdd = join(dir, kind + bytes);
  const r = Bun.spawnSync(["python3", "-c", GEN, ROOT, sdd, kind, String(bytes)], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`python3 failed: ${r.stderr.toString()}`);
  const o = JSON.parse(r.stdout.toString());
  return { sdd, journal: join(sdd, "runs", "r", "journal.jsonl"), head: o.head, rowBytes: o.row_bytes, units: o.units };
}

function within(r: { peakRss: number; stderr: string }, what: string, rowBytes: number): void {
  const bound = 64 * MB + 2 * rowBytes;
  if (process.env.DENSE_RSS_LOG) console.error(`${what}: ${(r.peakRss / MB).toFixed(1)} MB (bound ${(bound / MB).toFixed(1)})`);
  if (r.peakRss > bound) throw new Error(`${what}: peak RSS ${(r.peakRss / MB).toFixed(1)} MB > bound ${(bound / MB).toFixed(1)} MB\n${r.stderr}`);
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "bernstein-large-row-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("journal verify of a ~25 MB row: peak RSS <= 64 MB + 2 x the row", () => {
  for (const kind of ["string", "object"] as const) {
    test(`one ${kind}: 2 threads, 1 thread and stdin, Python's head`, async () => {
      const fx = writeFixture(dir, kind, 25_000_000);
      expect(fx.rowBytes).toBeGreaterThan(20 * MB);
      for (const args of [["--threads", "2"], ["--threads", "1"]]) {
        const r = await measuredRun(["journal", "verify", fx.journal, ...args, "--as-json"]);
        expect(r.code).toBe(0);
        expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, count: 3, head: fx.head });
        within(r, `${kind}: journal verify ${args.join(" ")}`, fx.rowBytes);
      }
      const s = await measuredRun(["journal", "verify", "-", "--as-json"], { stdinFile: fx.journal });
      expect(s.code).toBe(0);
      expect(JSON.parse(s.stdout)).toMatchObject({ ok: true, count: 3, head: fx.head });
      within(s, `${kind}: journal verify -`, fx.rowBytes);
    }, 60_000);
  }
});

describe("replay of a ~12 MB one-string row: peak RSS <= 64 MB + 2 x the row", () => {
  test("the table and --as-json (the string printed whole)", async () => {
    const fx = writeFixture(dir, "string", 12_000_000);
    const table = await measuredRun(["replay", "r", "--sdd-dir", fx.sdd]);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain("tool_result");
    within(table, "replay r", fx.rowBytes);
    const json = await measuredRun(["replay", "r", "--sdd-dir", fx.sdd, "--as-json"]);
    expect(json.code).toBe(0);
    const doc = JSON.parse(json.stdout);
    expect(doc.events[1].output.length).toBe(fx.units);
    expect(doc.events[2].event_hash).toBe(fx.head);
    within(json, "replay r --as-json", fx.rowBytes);
  }, 60_000);
});

/** A string of about `chars` characters, escapes (quotes, backslashes, controls), non-ASCII, wide, combining and astral characters throughout. */
function shownText(chars: number, seed: number): string {
  const pieces = ["agent ", "t\u00e2che \u2713 ", 'say "hi" ', "back\\slash ", "tab\there ", "line\nbreak ", "\u{1F680}", "\u6f22\u5b57", "e\u0301", "\u0007bel ", "\u200bzw ", "\ud83d\ude00x", "\u03a9\u2248\u00e7 "];
  const out: string[] = [];
  let n = 0;
  for (let k = seed; n < chars; k++) {
    const p = pieces[k % pieces.length]!;
    out.push(p);
    n += p.length;
  }
  return out.join("");
}

describe("replay of rows whose shown fields are megabytes: peak RSS <= 64 MB + 2 x the row", () => {
  // (--as-json of this journal is held by the one-string case above: it never decodes a field to show it)
  test("the table (ids cut, DETAIL wrapped) and --from-step", async () => {
    const sdd = join(dir, "shown-fields");
    const j = EventJournal.create("r", { sddDir: sdd });
    try {
      j.record("run_started", { run_id: "r", max_agents: 3 });
      j.record("agent_spawned", { agent_id: shownText(1_500_000, 1), task_id: shownText(1_200_000, 2), model: shownText(1_200_000, 3), role: shownText(1_000_000, 4), adapter: "claude" });
      j.record("task_failed", { agent_id: shownText(1_200_000, 5), task_id: shownText(1_300_000, 6), reason: shownText(1_600_000, 7), failure_class: shownText(1_000_000, 8) });
      j.record("task_claimed", { agent_id: "a-1", task_id: "T-1" });
    } finally {
      j.close();
    }
    const journal = join(sdd, "runs", "r", "journal.jsonl");
    const rowBytes = Math.max(...readFileSync(journal, "utf8").split("\n").map((l) => Buffer.byteLength(l)));
    expect(rowBytes).toBeGreaterThan(8 * MB);
    expect(rowBytes).toBeLessThan(16 * MB);
    const table = await measuredRun(["replay", "r", "--sdd-dir", sdd]);
    expect(table.code).toBe(0);
    // the ids' first cells and the cut; DETAIL wraps the model whole (so the output is megabytes)
    expect(table.stdout).toContain("task_claimed");
    expect(table.stdout).toMatch(/ t\u00e2che \u2713 say "hi" [^\n]*\u2026  /);
    expect(table.stdout.length).toBeGreaterThan(4 * MB);
    within(table, "replay r (shown fields)", rowBytes);
    const from = await measuredRun(["replay", "r", "--sdd-dir", sdd, "--from-step", "2"]);
    expect(from.code).toBe(0);
    within(from, "replay r --from-step 2 (shown fields)", rowBytes);
  }, 60_000);
});
