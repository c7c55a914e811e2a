/**
 * The replay display's fast paths against the exact path they replace:
 * byte-identical JSON, the same scan facts and id widths, the same table
 * lines, the same --from-step projection (and errors), on every run-journal
 * vector and on generated journals full of hostile rows.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rebuildStateSync } from "../../src/journal/rebuild.ts";
import { dumps } from "../../src/pyjson/encode.ts";
import { setColorEnabled } from "../../src/render/ansi.ts";
import { sanitizeCell } from "../../src/render/table.ts";
import { measureIds } from "../../src/replay/display.ts";
import { projectionJson, projectionProse, projectRunFast } from "../../src/replay/fast-project.ts";
import { streamRunJson, streamRunJsonExact } from "../../src/replay/run-json.ts";
import { runTable, writeRunTable, writeRunTableExact } from "../../src/replay/run-table.ts";
import { scanRun, scanRunFast } from "../../src/replay/run-view.ts";
import { LongLineKernel } from "../../src/replay/kernel-row.ts";
import { RowTranscoder } from "../../src/replay/fast-json.ts";
import { VerifyKernel } from "../../src/journal/fast/kernel.ts";
import { FAST_LINE_MAX } from "../../src/replay/fast-lines.ts";
import { generateJournal } from "../../bench/journal-gen.ts";
import { CellSpool } from "../../src/replay/cell-spool.ts";
import { CollectingOutput } from "../../src/replay/sink.ts";
import { VECTORS } from "../helpers/cli.ts";
import { runPython } from "../helpers/python.ts";
import { foldingRows, HOSTILE_LINES, writeHostileJournal, writeLongRowJournal, writeWriterJournal } from "./hostile-rows.ts";

const dir = mkdtempSync(join(tmpdir(), "fast-display-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const hostile = join(dir, "hostile.jsonl");
writeHostileJournal(hostile, 240);
const clean = join(dir, "clean.jsonl");
writeWriterJournal(clean, 300);
const long = join(dir, "long.jsonl");
writeLongRowJournal(long);
// a chained journal of ~1 MB rows (the bench's large-rows shape): --from-step links them on the long-row kernel
const largeRows = generateJournal(join(dir, "large-rows"), "r1", 3e6, 5, "large-rows").path;
const vectors = readdirSync(join(VECTORS, "run-journal"))
  .filter((n) => n.endsWith(".jsonl"))
  .map((n) => join(VECTORS, "run-journal", n));
// rows the byte table writer (fast-cells.ts) takes, at its edges: cut and wrapped cells, ts a hair
// from a whole second, cost ties, zero ticks, empty and blank strings
const edges = join(dir, "edges.jsonl");
{
  const lines: string[] = ['{"ts": 1727000000.5, "event": "run_started", "run_id": "r"}'];
  const costs = ["0.00005", "0.00015", "0.12345", "-0.00004", "0", "-0.0", "12345.6789", "1e-7", "0.1", "3"];
  const tss = ["1727000001.5", "1727000002.50001", "1727000003.49999999", "1727000004.5000000001", "1727000005", "1e9", "-3.25", "0"];
  for (let i = 0; i < 160; i++) {
    const m: string[] = [`"ts": ${tss[i % tss.length]}`, `"event": "${"provider_state_mutation_x".slice(0, 4 + (i % 22))}"`];
    if (i % 3 === 0) m.push(`"agent_id": "${"agent-".repeat(1 + (i % 5))}${i}"`);
    if (i % 4 === 1) m.push(`"task_ids": [${['"T-1"', '"T-22"', '"T-333"'].slice(0, i % 4).join(", ")}]`);
    if (i % 5 === 2) m.push(`"task_id": "${i % 2 ? "" : "T-" + "9".repeat(i % 13)}"`);
    if (i % 2 === 0) m.push(`"model": "${"claude-sonnet ".repeat(i % 4)}${i % 7 ? "4-5" : " "}"`);
    if (i % 3 === 1) m.push(`"role": "${i % 6 ? "backend" : ""}"`);
    if (i % 3 === 2) m.push(`"cost_usd": ${costs[i % costs.length]}`);
    if (i % 7 === 3) m.push(`"tick": ${["0", "-0", "7", "-12"][i % 4]}`);
    if (i % 11 === 5) m.push(`"elapsed_s": ${i}.75`);
    const failed = ["[]", '["tests"]', '["tests", "lint"]', '["a", "b", "c", "d"]', '[1, "a"]', '"tests"', '["a\\n"]', '[["x"]]', '["x", 2]', '[ "s" ,"t" ]'];
    if (i % 4 === 3) m.push(`"failed_signals": ${failed[(i >> 2) % failed.length]}`);
    lines.push(`{${m.join(", ")}}`);
  }
  // failure reasons (display.ts REASON_EVENTS): shown on three events only, clipped, escaped; keys shaped like display fields
  const reasons = ['"agent_exit_1: boom"', '""', "null", '"line one\\nline two"', '"caf\\u00e9 \\u2028"', `"${"x".repeat(300)}"`, "7", '["a"]'];
  const reasonEvents = ["agent_failed", "task_failed", "task_requeued", "task_retried", "agent_spawned"];
  for (let i = 0; i < 40; i++) {
    const m = [`"ts": 1727000100.${i}`, `"event": "${reasonEvents[i % reasonEvents.length]}"`, `"task_id": "T-${i}"`, `"reason": ${reasons[i % reasons.length]}`];
    if (i % 3 === 0) m.push(`"failure_class": "${i % 2 ? "auth" : ""}"`);
    if (i % 4 === 1) m.push(`"cost_usd": 0.5`, `"rxason": "not a display field"`, `"ruason": 1`);
    lines.push(`{${m.join(", ")}}`);
  }
  // run_completed's cost_known (display.ts): with and without a run_id, with and without a cost
  for (let i = 0; i < 16; i++) {
    const m = [`"ts": 1727000200.${i}`, `"event": "${i % 4 ? "run_completed" : "task_completed"}"`, `"cost_known": ${["false", "true", "0", "null"][i % 4]}`];
    if (i % 2) m.push(`"cost_usd": ${i % 3 ? "0.03" : "0.0"}`);
    if (i % 3 === 1) m.push(`"run_id": "r"`);
    lines.push(`{${m.join(", ")}}`);
  }
  // fields detailText shows only on some events (fast-cells.ts SHOWN_BY_EVENT), or on any (SHOWN_ALWAYS), on
  // events that show them, events that do not, and an event name spelled with an escape
  const byEvent = ["run_id", "fingerprint", "reason", "failure_class", "cost_known", "adapter", "steps_done", "max_agents", "ticks"];
  const shownOn = ["run_started", "run_completed", "agent_spawned", "task_resumed", "task_resume_fallback", "task_failed", "dispatch_knob_selection", "provider_state_capability", "agent\\u005fspawned", "run_complete"];
  const values = ['"claude_code"', "false", "3", '""', '"fp0123456789abcdef"', "0"];
  for (let i = 0; i < byEvent.length * shownOn.length; i++) {
    const m = [`"ts": 1727000300.${i}`, `"event": "${shownOn[i % shownOn.length]}"`, `"${byEvent[Math.floor(i / shownOn.length)]}": ${values[i % values.length]}`];
    if (i % 3 === 0) m.push(`"model": "m-${i}"`, `"${byEvent[(i + 4) % byEvent.length]}": ${values[(i + 1) % values.length]}`);
    lines.push(`{${m.join(", ")}}`);
  }
  writeFileSync(edges, lines.join("\n") + "\n");
}
// rows a narrow terminal folds below the row, in the writer's spelling (the byte table writer takes them)
const folding = join(dir, "folding.jsonl");
writeFileSync(folding, foldingRows(120).join("\n") + "\n");
/**
 * `path` with every line ended by CR LF, as Python's text mode on Windows
 * writes a journal; with `odd`, some rows in every chunk the readers take
 * (256 KiB and 1 MiB) end by a lone CR or by CR CR LF instead (universal
 * newlines: a lone CR ends a line too, and CR CR LF is a line and a blank one).
 */
function windowsCopy(path: string, name: string, odd = false): string {
  const rows = readFileSync(path, "latin1").split("\n");
  const last = rows.pop()!;
  const out = rows.map((r, i) => {
    if (!odd || i % 97 !== 40) return `${r}\r\n`;
    return i % 2 ? `${r}\r` : `${r}\r\r\n`;
  });
  const copy = join(dir, name);
  writeFileSync(copy, out.join("") + last, "latin1");
  return copy;
}
// Python's writer on Windows: CR LF line ends (a chained journal over several reads, writer rows, hostile lines, ~1 MB
// rows), and lone CRs among them
const chained = generateJournal(join(dir, "chained"), "r1", 1.2e6, 6, "bench");
const windows = [
  windowsCopy(clean, "clean-crlf.jsonl"),
  windowsCopy(chained.path, "chained-crlf.jsonl"),
  windowsCopy(chained.path, "chained-crlf-odd.jsonl", true),
  windowsCopy(hostile, "hostile-crlf.jsonl"),
  windowsCopy(edges, "edges-crlf.jsonl"),
  windowsCopy(largeRows, "large-rows-crlf.jsonl"),
];
/**
 * `path` with each row line re-spelled by Python in another spacing than its writer's (a journal
 * rewritten by `jq -c`, say): compact, spaced out, or indented and joined back to one line; the
 * same values. The fast paths take such rows re-spaced (codec/writer-spacing.ts).
 */
function respacedCopy(path: string, name: string, spacing: "compact" | "spaced" | "pretty"): string {
  const script = `import json, sys
spacing, lines = json.load(sys.stdin)
def spell(l):
    try:
        o = json.loads(l)
    except ValueError:
        return l
    if not isinstance(o, dict):
        return l
    if spacing == "compact":
        return json.dumps(o, separators=(",", ":"))
    if spacing == "spaced":
        return json.dumps(o, separators=(" , ", " :  "))
    return "\\t" + json.dumps(o, indent=2).replace("\\n", " \\t") + " "
print(json.dumps([spell(l) for l in lines]))`;
  const lines = runPython(script, [spacing, readFileSync(path, "utf8").split("\n")]) as string[];
  const copy = join(dir, name);
  writeFileSync(copy, lines.join("\n"));
  return copy;
}
const respaced = [
  respacedCopy(clean, "clean-compact.jsonl", "compact"),
  respacedCopy(chained.path, "chained-compact.jsonl", "compact"),
  respacedCopy(chained.path, "chained-spaced.jsonl", "spaced"),
  respacedCopy(chained.path, "chained-pretty.jsonl", "pretty"),
  respacedCopy(largeRows, "large-rows-compact.jsonl", "compact"),
];
const journals = [hostile, clean, edges, folding, long, largeRows, ...windows, ...respaced, ...vectors];
const metadata = { run_id: "r", started_at: 1727000000.5, git_sha: "abc", git_branch: "main", config_hash: "c0", seed_path: null } as never;

async function json(fast: boolean, journal: string, limit?: number): Promise<string> {
  const out = new CollectingOutput();
  await (fast ? streamRunJson : streamRunJsonExact)({ journal, runId: "r", metadata, limit }, out);
  return out.text();
}

async function scan(fast: boolean, journal: string, limit?: number) {
  const ids = { agent: 0, task: 0 };
  const spool = fast ? CellSpool.open()! : undefined;
  try {
    const s = fast ? await scanRunFast(journal, limit, ids, spool) : await scanRun(journal, limit, (row) => measureIds(row, ids));
    return { ...s, ids };
  } finally {
    spool?.close();
  }
}

/** The table of the exact path, of the fast path from the scan's spool (as the command does), or without one ("journal"). */
async function table(path: "exact" | "spool" | "journal", journal: string, width: number, limit?: number): Promise<string> {
  const out = new CollectingOutput();
  const t = runTable({ agent: 14, task: 9 }, width);
  if (path === "exact") {
    await writeRunTableExact(journal, (await scanRun(journal, limit)).baseTs, limit, t, out);
    return out.text();
  }
  const spool = path === "spool" ? CellSpool.open()! : undefined;
  try {
    const s = await scanRunFast(journal, limit, undefined, spool);
    await writeRunTable(journal, s.baseTs, limit, t, out, spool);
  } finally {
    spool?.close();
  }
  return out.text();
}

function projectExact(journal: string, n: number): { json: string; prose: string } | { error: string } {
  try {
    const s = rebuildStateSync(journal, n);
    return {
      json: dumps({ events: s.events, head_hash: s.head_hash, ok: true, step_count: s.step_count }, { sortKeys: true }) + "\n",
      prose: `Rebuilt state for r through step ${s.step_count}\nhead: ${s.head_hash || "(empty)"}\nevents: ${sanitizeCell(s.events.join(", "))}\n`,
    };
  } catch (err) {
    return { error: `${(err as { code?: string }).code}: ${(err as Error).message}` };
  }
}

async function projectFast(journal: string, n: number, cap?: number): Promise<{ json: string; prose: string } | { error: string }> {
  try {
    const p = await projectRunFast(journal, n, cap);
    return {
      // a piece is valid until the next one: each is copied as it comes
      json: Buffer.concat(Array.from(projectionJson(journal, p), (b) => Buffer.from(b))).toString("latin1"),
      prose: Buffer.concat(Array.from(projectionProse("r", journal, p), (b) => Buffer.from(b))).toString("utf8"),
    };
  } catch (err) {
    return { error: `${(err as { code?: string }).code}: ${(err as Error).message}` };
  }
}

describe("replay display: fast path = exact path", () => {
  test("the generated journals hold what they should (hostile lines, writer rows)", async () => {
    const s = await scanRun(hostile);
    expect(s.discarded.length).toBeGreaterThan(12);
    expect(s.events).toBeGreaterThan(240 + HOSTILE_LINES.length / 2);
    expect(vectors.length).toBeGreaterThan(10);
  });

  test("--as-json: byte-identical on every journal, with and without --limit", async () => {
    for (const j of journals) {
      for (const limit of [undefined, 0, 1, 7, 100]) {
        expect([j, limit, await json(true, j, limit)]).toEqual([j, limit, await json(false, j, limit)]);
      }
    }
  }, 60_000);

  test("the scan (events, discarded lines, duration, time base, fingerprint, head, id widths) is the same", async () => {
    for (const j of journals) {
      for (const limit of [undefined, 0, 3, 50]) {
        expect([j, limit, await scan(true, j, limit)]).toEqual([j, limit, await scan(false, j, limit)]);
      }
    }
  }, 60_000);

  test("the table lines are the same at several widths and limits (wrapping, folding below the row on a narrow terminal, truncation), from the spool and without one", async () => {
    for (const j of journals) {
      for (const [width, limit] of [[100, undefined], [90, undefined], [79, 40], [70, undefined], [60, undefined], [50, undefined], [220, 20], [40, undefined], [24, undefined], [120, 0], [120, 1]] as const) {
        const exact = await table("exact", j, width, limit);
        expect([j, width, limit, await table("spool", j, width, limit)]).toEqual([j, width, limit, exact]);
        expect([j, width, limit, await table("journal", j, width, limit)]).toEqual([j, width, limit, exact]);
      }
    }
  }, 60_000);

  test("a failure's reason reaches DETAIL on the fast paths too (declined to the exact path)", async () => {
    for (const path of ["spool", "journal"] as const) {
      const lines = (await table(path, edges, 200)).split("\n");
      expect(lines.find((l) => l.includes("agent_failed") && l.includes("T-0 "))).toEndWith("agent_exit_1: boom");
      expect(lines.find((l) => l.includes("task_requeued") && l.includes("T-27 "))).toEndWith("line one\\x0aline two  class=auth");
      expect(lines.find((l) => l.includes("task_failed") && l.includes("T-16 "))).toEndWith("agent_exit_1: boom");
      expect(lines.find((l) => l.includes("agent_spawned") && l.includes(" T-24"))).not.toContain("boom");
    }
  });

  test("the table lines are the same in colour", async () => {
    setColorEnabled(true);
    try {
      for (const j of journals) {
        for (const [width, limit] of [[100, undefined], [90, 30], [60, 50], [40, 50]] as const) {
          expect([j, width, await table("spool", j, width, limit)]).toEqual([j, width, await table("exact", j, width, limit)]);
        }
      }
    } finally {
      setColorEnabled(false);
    }
  }, 60_000);

  test("--from-step N: the same JSON and prose at several N, also when the event list is too long to keep", async () => {
    for (const j of journals) {
      for (const n of [0, 1, 2, 5, 40, 150, 1e9]) {
        const exact = projectExact(j, n);
        expect([j, n, await projectFast(j, n)]).toEqual([j, n, exact]);
        expect([j, n, "cap", await projectFast(j, n, 64)]).toEqual([j, n, "cap", exact]);
      }
    }
  }, 60_000);

  test("--from-step: an unknown hash_profile is the same error at the same step", async () => {
    const bad = join(dir, "profile.jsonl");
    writeFileSync(bad, '{"event": "a"}\n{"event": "b", "hash_profile": "nope"}\n{"event": "c"}\n');
    const exact = projectExact(bad, 10);
    expect(exact).toHaveProperty("error");
    expect(await projectFast(bad, 10)).toEqual(exact);
    expect(await projectFast(bad, 1)).toEqual(projectExact(bad, 1));
  });

  test("long rows take the long-line kernel, and lines it must not take go on to the exact path (the test is not vacuous)", async () => {
    const take = LongLineKernel.prototype.take;
    let taken = 0;
    let declined = 0;
    LongLineKernel.prototype.take = function (this: LongLineKernel, bytes: Uint8Array) {
      const r = take.call(this, bytes);
      if (r === null) declined++;
      else taken++;
      return r;
    };
    try {
      await scanRunFast(long);
    } finally {
      LongLineKernel.prototype.take = take;
    }
    // 39 of the 40 writer rows with a blob (the first is one the kernel declines, short or long), 4 with long display
    // fields, the last row; that first row, 3 other spellings (the compact and the raw UTF-8 one twice: re-spaced, they
    // have no envelope) and a line that is no row are declined
    expect(taken).toBe(44);
    expect(declined).toBe(7);
  });

  test("--from-step links long rows on a kernel sized to them (the test is not vacuous)", async () => {
    const verify = VerifyKernel.prototype.verify;
    let long = 0;
    VerifyKernel.prototype.verify = function (this: VerifyKernel, p: number, bound: number, index: number, mode: number) {
      const end = verify.call(this, p, bound, index, mode);
      if (end === bound && this.rows === 1 && bound > FAST_LINE_MAX) long++;
      return end;
    };
    let steps: number;
    try {
      steps = (await projectRunFast(largeRows, 1e9)).step_count;
    } finally {
      VerifyKernel.prototype.verify = verify;
    }
    // every ~1 MB row but the first (the chain's head comes from the exact path)
    expect(steps).toBeGreaterThan(3);
    expect(long).toBeGreaterThanOrEqual(2);
  });

  test("CR LF line ends take the fast paths: --as-json re-indents the rows, --from-step links them in runs (the test is not vacuous)", async () => {
    const crlf = windows[1]!;
    const row = RowTranscoder.prototype.row;
    let reindented = 0;
    RowTranscoder.prototype.row = function (this: RowTranscoder, b: Uint8Array, s: number, e: number, pad: number) {
      const took = row.call(this, b, s, e, pad);
      if (took) reindented++;
      return took;
    };
    const verify = VerifyKernel.prototype.verify;
    let inRuns = 0;
    VerifyKernel.prototype.verify = function (this: VerifyKernel, p: number, bound: number, index: number, mode: number) {
      const end = verify.call(this, p, bound, index, mode);
      if (this.rows > 1) inRuns += this.rows;
      return end;
    };
    try {
      await json(true, crlf);
      expect((await projectRunFast(crlf, 1e9)).step_count).toBe(chained.rows);
    } finally {
      RowTranscoder.prototype.row = row;
      VerifyKernel.prototype.verify = verify;
    }
    expect(reindented).toBe(chained.rows);
    // all but the first row (the chain's head comes from the exact path) and each read's last
    expect(inRuns).toBeGreaterThan(chained.rows - 20);
  });

  test("writer rows in other spacings take the fast paths re-spaced, with the exact path's outputs (the test is not vacuous)", async () => {
    const take = LongLineKernel.prototype.take;
    const verify = VerifyKernel.prototype.verify;
    let taken = 0;
    let linked = 0;
    LongLineKernel.prototype.take = function (this: LongLineKernel, bytes: Uint8Array) {
      const r = take.call(this, bytes);
      if (r !== null) taken++;
      return r;
    };
    VerifyKernel.prototype.verify = function (this: VerifyKernel, p: number, bound: number, index: number, mode: number) {
      const end = verify.call(this, p, bound, index, mode);
      if (this.rows === 1 && end === bound) linked++;
      return end;
    };
    let steps: number;
    try {
      // every row of the compact copy but the first (the chain's head is the exact path's), on the display's kernel
      await scanRunFast(respaced[1]!);
      steps = (await projectRunFast(respaced[3]!, 1e9)).step_count;
    } finally {
      LongLineKernel.prototype.take = take;
      VerifyKernel.prototype.verify = verify;
    }
    const rows = readFileSync(chained.path, "utf8").trimEnd().split("\n").length;
    expect(taken).toBe(rows - 1);
    // --from-step links each row of the indented copy on a kernel of its own, re-spaced
    expect(steps).toBe(rows);
    expect(linked).toBe(rows - 1);
  });

  test("a journal of writer rows takes the fast paths (the test is not vacuous)", async () => {
    // the fast JSON differs from the exact only in speed; a change of spelling would show here
    const fastJson = await json(true, clean);
    expect(fastJson).toContain('"summary": "caf\u00e9 \u2014 \u{1f600}"');
    expect(fastJson).toContain("\\ud800 lone \\udfff");
    const p = await projectRunFast(clean, 1e9);
    expect(p.step_count).toBe(300);
    expect(p.events).not.toBeNull();
  });
});
