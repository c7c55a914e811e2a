/**
 * The timeline page's fast pass (src/timeline/rows.ts: rows, their
 * fields and fingerprint from the verify kernel, table payloads from the
 * bytes) against the reference pass (every row parsed whole,
 * `exactPass`): the same page, byte for byte, on generated journals of
 * every shape, on journals of hostile lines, on the run-journal fixtures,
 * and under every option that changes which rows the table shows.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { generateJournal, SHAPES } from "../../bench/journal-gen.ts";
import { readMetadata } from "../../src/journal/metadata.ts";
import { renderTimeline, type TimelineInput } from "../../src/timeline/generate.ts";
import { PAGE_FIELDS, readPageRows, verifyPageRows, type PageRowSink } from "../../src/timeline/rows.ts";
import { ReplayFingerprint } from "../../src/replay/fingerprint.ts";
import { DISPLAY_FIELDS } from "../../src/replay/fast-row.ts";
import { JournalFile, writeBigRun, writeHostileRun } from "../e2e/timeline/synthetic.ts";
import { writeHostileJournal, writeLongRowJournal, writeWriterJournal } from "../replay/hostile-rows.ts";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { dumps } from "../../src/pyjson/encode.ts";
import { eventHash, payloadHash } from "../../src/journal/hash.ts";
import { PyNum, pyFloat, type PyLike } from "../../src/pyjson/types.ts";
import { mulberry32 } from "../../tools/fuzz/rng.ts";

const ROOT = join(import.meta.dir, "..", "..");

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "bern-timeline-rows-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Options = Partial<Pick<TimelineInput, "window" | "maxEvents" | "maxBars" | "lanes">>;

/** The page (or the refusal) one pass writes. */
async function page(journal: string, runDir: string, exactPass: boolean, options: Options = {}): Promise<string> {
  let out = "";
  // the page is a stream of bytes: a character may straddle two chunks
  const text = new TextDecoder();
  try {
    const r = await renderTimeline(
      { runId: "r1", journal, metadata: readMetadata(runDir), seal: null, sealPath: null, threads: 1, allowEmpty: true, exactPass, ...options },
      (chunk) => {
        out += typeof chunk === "string" ? chunk : text.decode(chunk, { stream: true });
      },
    );
    return `${out}\n--\n${JSON.stringify({ ...r, verdict: undefined })}`;
  } catch (err) {
    return `${out}\n--\nrefused: ${(err as Error).message}`;
  }
}

async function expectSamePage(journal: string, runDir: string, options: Options = {}): Promise<string> {
  const exact = await page(journal, runDir, true, options);
  const fast = await page(journal, runDir, false, options);
  // compared as booleans first: a diff of megabytes is not a useful failure message
  if (fast !== exact) {
    let i = 0;
    while (i < fast.length && fast[i] === exact[i]) i++;
    expect(fast.slice(Math.max(0, i - 200), i + 200)).toBe(exact.slice(Math.max(0, i - 200), i + 200));
  }
  expect(fast === exact).toBe(true);
  return fast;
}

/** Options that move the table's window, cut it, and switch the attempts to curves. */
const VARIANTS: [string, Options][] = [
  ["defaults", {}],
  ["a window by index", { window: { from: { index: 17 }, to: { index: 400 } } }],
  ["a window by time", { window: { from: { time: 1727000100 } } }],
  ["few events, few bars, agent lanes", { maxEvents: 50, maxBars: 3, lanes: "agent" }],
];

/** Values of every JSON type and spelling a field the page reads may hold. */
const VALUES: PyLike[] = [
  "plain",
  "",
  "unknown",
  "caf\u00e9 \u{1f600}",
  "tab\tnew\nline \"q\" \\",
  "\ud800 lone",
  0,
  7,
  -3,
  pyFloat(0.5),
  pyFloat(1727000123.25),
  new PyNum("1E5", true),
  new PyNum("1.50", true),
  new PyNum("NaN", true),
  "12.5",
  " 3 ",
  "inf",
  null,
  true,
  false,
  [],
  ["gate:tests", "lint", "x", "y"],
  ["caf\u00e9", 5, null],
  {},
  { input: 3, output: 4 },
  // keys out of order: the kernel keeps nested values sorted, the exact reader in the row's order
  { output: 4, input: 3 },
  ["x", { z: 1, a: 2 }],
];
const EVENTS = [
  "run_started",
  "tick_start",
  "agent_spawned",
  "task_claimed",
  "task_completed",
  "task_verification_failed",
  "task_retried",
  "task_failed",
  "task_requeued",
  "task_cancelled",
  "task_result_discarded",
  "budget_exhausted",
  "agent_reaped",
  "agents_reaped",
  "run_completed",
  "task_resumed",
  "agent_failed",
  "something_else",
];
/** Every key the page reads (written out here, not taken from the code under test). */
const PAGE_KEYS = [
  ...["agent_id", "task_id", "task_ids", "model", "role", "failed_signals", "reason", "agent_ids", "failure_class", "adapter", "steps_done"],
  ...["cost_usd", "spent_usd", "cost_source", "cost_known", "tokens", "total_tokens", "input_tokens", "output_tokens"],
  ...["git_branch", "git_sha", "run_id", "max_agents", "ticks", "fingerprint", "tick", "elapsed_s", "ts", "event", "event_hash"],
];

/**
 * Rows of the orchestrator's events whose fields the page reads hold values
 * of every type, in the writer's spelling, compact, and with raw UTF-8;
 * agent and task ids from a small set so attempts open and close. With
 * `envelope`, every row has the writer's envelope (its hashes made up), so
 * the rows in the writer's spelling are the ones the fast pass takes.
 */
function writeFieldJournal(path: string, rows: number, seed: number, envelope = false): void {
  const rand = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const lines: string[] = [];
  let ts = 1727000000.5;
  for (let i = 0; i < rows; i++) {
    ts += rand() < 0.1 ? 30 : rand();
    const event = i === 0 ? "run_started" : pick(EVENTS);
    const row = new Map<string, PyLike>([
      ["ts", rand() < 0.05 ? pick(VALUES) : pyFloat(Math.round(ts * 1000) / 1000)],
      ["elapsed_s", pyFloat(i * 0.5)],
      ["index", i],
      ["event", rand() < 0.03 ? pick(VALUES) : event],
      ...(envelope ? ([["prev_hash", "ab".repeat(32)], ["payload_hash", "cd".repeat(32)]] as [string, PyLike][]) : []),
      ["event_hash", (i % 16).toString(16).repeat(64)],
      ["agent_id", rand() < 0.1 ? pick(VALUES) : `agent-${Math.floor(rand() * 6)}`],
      ["task_id", rand() < 0.1 ? pick(VALUES) : `T-${Math.floor(rand() * 8)}`],
    ]);
    // the cost flags only where a seed asks for them: one such row decides the page's cost_known
    for (const k of PAGE_KEYS) if (!row.has(k) && rand() < 0.3 && !k.startsWith("cost_")) row.set(k, pick(VALUES));
    if (i === 0) row.set("git_branch", "main").set("git_sha", seed % 2 ? "0123abc" : "caf\u00e9");
    if (event === "agents_reaped" && rand() < 0.7) row.set("agent_ids", ["agent-1", "agent-2", `agent-${Math.floor(rand() * 6)}`]);
    if (rand() < 0.2) row.set("cost_usd", pick(VALUES));
    if (seed === 2 && event === "task_completed" && rand() < 0.5) row.set("cost_source", rand() < 0.5 ? "unknown" : pick(VALUES));
    if (seed === 3 && event === "run_completed" && rand() < 0.5) row.set("cost_known", rand() < 0.5 ? false : pick(VALUES));
    const style = envelope ? rand() * 0.7 : rand();
    const text =
      style < 0.6
        ? dumps(row as unknown as PyLike)
        : style < 0.8
          ? dumps(row as unknown as PyLike, { separators: [",", ":"] })
          : dumps(row as unknown as PyLike, { ensureAscii: false });
    lines.push(text);
  }
  writeFileSync(path, lines.join("\n") + "\n");
}

/**
 * writeFieldJournal's fields as the payloads of a chain that verifies, its
 * rows in the same three spellings (the writer's, compact, raw UTF-8: the
 * hashes are of the rows' values, whatever their spelling), in the run
 * `sdd/runs/r1`; its path.
 */
function writeChainedFieldJournal(sdd: string, rows: number, seed: number): string {
  const rand = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const envelope = new Set(["ts", "elapsed_s", "index", "event", "prev_hash", "payload_hash", "event_hash"]);
  const runDir = join(sdd, "runs", "r1");
  mkdirSync(runDir, { recursive: true });
  const lines: string[] = [];
  let prev = "";
  let ts = 1727000000.5;
  for (let i = 0; i < rows; i++) {
    ts += rand() < 0.1 ? 30 : rand();
    const event = i === 0 ? "run_started" : pick(EVENTS);
    const payload: Record<string, PyLike> = {
      agent_id: rand() < 0.1 ? pick(VALUES) : `agent-${Math.floor(rand() * 6)}`,
      task_id: rand() < 0.1 ? pick(VALUES) : `T-${Math.floor(rand() * 8)}`,
    };
    for (const k of PAGE_KEYS) if (!(k in payload) && !envelope.has(k) && rand() < 0.3) payload[k] = pick(VALUES);
    if (i === 0) Object.assign(payload, { git_branch: "main", git_sha: "caf\u00e9" });
    if (event === "agents_reaped" && rand() < 0.7) payload.agent_ids = ["agent-1", "agent-2", `agent-${Math.floor(rand() * 6)}`];
    const ph = payloadHash(event, payload);
    const eh = eventHash(prev, event, ph, i);
    const row = { ts: pyFloat(Math.round(ts * 1000) / 1000), elapsed_s: pyFloat(i * 0.5), index: i, event, prev_hash: prev, payload_hash: ph, event_hash: eh, ...payload };
    prev = eh;
    const style = rand();
    // other spellings: compact, raw UTF-8 (re-spaced for the kernel, codec/writer-spacing.ts), and the event type's first
    // character escaped, as Python never writes it (the exact path's)
    const spelled = style < 0.7 ? dumps(row) : style < 0.8 ? dumps(row, { separators: [",", ":"] }) : style < 0.9 ? dumps(row, { ensureAscii: false }) : null;
    lines.push(spelled ?? dumps(row).replace(/"event": "([a-z])/, (_, c: string) => `"event": "\\u00${c.charCodeAt(0).toString(16)}`));
  }
  const path = join(runDir, "journal.jsonl");
  writeFileSync(path, lines.join("\n") + "\n");
  return path;
}

/** A sink counting the rows a reader hands on from a kernel, and those it read the exact way. */
function rowCounter(): { sink: PageRowSink; counts: [number, number] } {
  const counts: [number, number] = [0, 0];
  const sink: PageRowSink = {
    // the exact path's row is the whole row it shows; the kernel's is parsed anew when asked
    row: (r) => void counts[r.full() === r.shown ? 1 : 0]++,
    discarded: () => {},
    done: () => false,
  };
  return { sink, counts };
}

/** Rows of `journal` the fast pass takes from the kernel, and rows it reads the exact way. */
function passRows(journal: string): [number, number] {
  const { sink, counts } = rowCounter();
  for (const _ of readPageRows(journal, statSync(journal).size, new ReplayFingerprint(), sink));
  return counts;
}

/** passRows of the one pass (verifyPageRows: the rows the verify hands), and whether it handed the verdict's every row. */
async function onePassRows(journal: string): Promise<[number, number, boolean]> {
  const { sink, counts } = rowCounter();
  const { verdict, handed } = await verifyPageRows(journal, {}, new ReplayFingerprint(), sink, () => {});
  return [...counts, handed === verdict.count];
}

describe("timeline fast pass = exact pass", () => {
  test("every field the page reads, holding values of every type and spelling", async () => {
    const runDir = join(dir, "fields", "runs", "r1");
    mkdirSync(runDir, { recursive: true });
    const journal = join(runDir, "journal.jsonl");
    for (const seed of [1, 2, 3]) {
      writeFieldJournal(journal, 1500, seed);
      for (const [, options] of VARIANTS) await expectSamePage(journal, runDir, options);
      writeFieldJournal(journal, 1500, seed, true);
      for (const [, options] of VARIANTS) await expectSamePage(journal, runDir, options);
    }
    // not vacuous: the fast pass takes most of the enveloped rows, and the exact path the rest (other spellings, objects)
    const [fast, exact] = passRows(journal);
    expect(fast).toBeGreaterThan(300);
    expect(exact).toBeGreaterThan(50);
    // the same fields as the payloads of a chain that verifies: the one pass's rows (the verify's)
    for (const seed of [1, 2, 3]) {
      const chained = writeChainedFieldJournal(join(dir, `fields-chained-${seed}`), 1500, seed);
      for (const [, options] of VARIANTS) await expectSamePage(chained, dirname(chained), options);
      const [verifiedFast, verifiedExact, all] = await onePassRows(chained);
      expect(verifiedFast).toBeGreaterThan(300);
      expect(verifiedExact).toBeGreaterThan(50);
      expect(all).toBe(true);
    }
  }, 60_000);

  test("the one pass's page stands where the chain verifies; where it breaks, the page is drawn again after the verify", async () => {
    const sdd = join(dir, "sdd-one-pass");
    const { path } = generateJournal(sdd, "r1", 2e6, 7, "mixed");
    const runDir = join(sdd, "runs", "r1");
    const kept: boolean[] = [];
    const drawn = async () => {
      await renderTimeline({ runId: "r1", journal: path, metadata: readMetadata(runDir), seal: null, sealPath: null, onOnePass: (k) => kept.push(k) }, () => {});
      return kept.pop();
    };
    expect(await drawn()).toBe(true);
    const [fast, , all] = await onePassRows(path);
    expect(fast).toBeGreaterThan(1000);
    expect(all).toBe(true);
    // a row edited in the middle: the rows after it are not handed
    const lines = readFileSync(path, "utf8").split("\n");
    const mid = Math.floor(lines.length / 2);
    lines[mid] = lines[mid]!.replace('"event": "', '"event": "x');
    writeFileSync(path, lines.join("\n"));
    expect(await drawn()).toBe(false);
    await expectSamePage(path, runDir);
    // a row longer than the readers' copies take (LONG_LINE_MAX): drawn after the verify, whose reader bounds it
    const long = new JournalFile(join(dir, "sdd-one-pass-long"), "r1");
    long.add("run_started", { run_id: "r1", git_branch: "main", git_sha: "0123abc" });
    for (const n of [1000, 3_000_000, 1000]) long.add("tool_result", { agent_id: "a-1", output: "y".repeat(n) });
    long.close();
    const longRun = join(dir, "sdd-one-pass-long", "runs", "r1");
    await renderTimeline({ runId: "r1", journal: long.path, metadata: readMetadata(longRun), seal: null, sealPath: null, onOnePass: (k) => kept.push(k) }, () => {});
    expect(kept.pop()).toBe(false);
    await expectSamePage(long.path, longRun);
  }, 60_000);

  for (const shape of SHAPES) {
    test(`generated ${shape} journal`, async () => {
      const sdd = join(dir, `sdd-${shape}`);
      const { path, rows } = generateJournal(sdd, "r1", shape === "large-rows" ? 3e6 : 2e6, 5, shape);
      expect(rows).toBeGreaterThan(2);
      for (const [, options] of VARIANTS) await expectSamePage(path, join(sdd, "runs", "r1"), options);
    }, 120_000);
  }

  test("one row's cost flag decides the page's cost_known (task_completed.cost_source, run_completed.cost_known)", async () => {
    const sdd = join(dir, "cost");
    for (const [name, event, payload] of [
      ["source", "task_completed", { task_id: "T-1", agent_id: "a-1", cost_usd: pyFloat(0.25), cost_source: "unknown" }],
      ["known", "run_completed", { run_id: "known", cost_known: false }],
    ] as [string, string, Record<string, PyLike>][]) {
      const j = new JournalFile(sdd, name);
      j.add("run_started", { run_id: name, git_branch: "main", git_sha: "0123abc" });
      j.add("task_claimed", { task_id: "T-1", agent_id: "a-1", model: "m" });
      j.add(event, payload);
      j.close();
      expect(await expectSamePage(j.path, join(sdd, "runs", name))).toContain('"cost_known":false');
    }
  });

  test("journals of hostile lines (other spellings, escapes, duplicates, huge and broken lines, CR line ends)", async () => {
    const runDir = join(dir, "hostile", "runs", "r1");
    mkdirSync(runDir, { recursive: true });
    const journal = join(runDir, "journal.jsonl");
    writeHostileJournal(journal, 300);
    for (const [, options] of VARIANTS) await expectSamePage(journal, runDir, options);
    writeWriterJournal(journal, 500);
    for (const [, options] of VARIANTS) await expectSamePage(journal, runDir, options);
    // lines of 64 KiB and more: the ones the line reader hands over whole (the long-line kernel's)
    writeLongRowJournal(journal);
    for (const [, options] of VARIANTS) await expectSamePage(journal, runDir, options);
  }, 60_000);

  test("the last row's event_hash wherever the row was read: in place before a read's worth of unreadable lines, from a long line's copy a later long line overwrote", async () => {
    const sdd = join(dir, "last");
    const tails: [string, string[]][] = [
      // ~2 MB of lines that are not rows after the last row: the buffer it was read in is read into again
      ["chunk", Array.from({ length: 30_000 }, (_, i) => `not a row ${i} ${"x".repeat(60)}`)],
      // a long line that is not a row after a last row read from a longer line's copy: the copy's buffer is written again
      ["copy", [`[${"1, ".repeat(40_000)}1]`]],
    ];
    // the last row's event_hash spelled with an escape (json.loads reads the same hash)
    tails.push(["escaped", []]);
    for (const [name, tail] of tails) {
      const j = new JournalFile(sdd, name);
      j.add("run_started", { run_id: name, git_branch: "main", git_sha: "0123abc" });
      for (let k = 0; k < 50; k++) j.add("tool_call", { agent_id: "a-1", n: k });
      if (name === "copy") j.add("tool_result", { agent_id: "a-1", output: "y".repeat(200_000) });
      j.close();
      if (name === "escaped") {
        const text = readFileSync(j.path, "utf8");
        const at = text.lastIndexOf(`"event_hash": "${j.head}"`) + `"event_hash": "`.length;
        writeFileSync(j.path, text.slice(0, at) + `\\u00${j.head.charCodeAt(0).toString(16)}` + text.slice(at + 1));
      } else appendFileSync(j.path, tail.join("\n") + "\n");
      const page = await expectSamePage(j.path, join(sdd, "runs", name));
      expect({ name, head: page.includes(j.head) }).toEqual({ name, head: true });
    }
  }, 60_000);

  test("payloads cut at the page's bound (a pair cut in half, text that grows when escaped), and the table cut at its byte bound", async () => {
    const sdd = join(dir, "cut");
    const j = new JournalFile(sdd, "cut");
    j.add("run_started", { run_id: "cut", git_branch: "main", git_sha: "0123abc" });
    // each payload over PAYLOAD_CHARS, the cut falling on every alignment against the pairs; ~40 of them fill the table's bytes
    for (let k = 0; k < 60; k++) j.add("tool_result", { agent_id: "a-1", output: `${"a".repeat(k)}${"\u{1f600}<\u00e9\u2028".repeat(14_000)}`, n: k });
    j.add("tick_start", { tick: 1 });
    j.close();
    const page = await expectSamePage(j.path, join(sdd, "runs", "cut"));
    expect(page).toContain(" … [cut: ");
    // the table stopped at its byte bound, well before the run's end
    const result = JSON.parse(page.slice(page.lastIndexOf("\n--\n") + 4));
    expect(result.events).toBe(62);
    expect(result.embedded).toBeGreaterThan(10);
    expect(result.embedded).toBeLessThan(50);
  }, 60_000);

  test("table cells read from the row's bytes: cut at the page's bounds, script-unsafe ASCII, times far from the first", async () => {
    const sdd = join(dir, "cells");
    const j = new JournalFile(sdd, "cells");
    j.add("run_started", { run_id: "cells", git_branch: "main", git_sha: "0123abc" });
    // lengths around each cut (KEY_CHARS 128 for the event, FIELD_CHARS 512 for the others)
    for (const n of [127, 128, 129, 511, 512, 513, 1500]) {
      const text = (c: string) => `${c}<&>`.repeat(n).slice(0, n);
      j.add(text("e"), { agent_id: text("a"), task_id: text("t"), model: text("m"), role: "r" });
      j.add("task_verification_failed", { agent_id: "a-1", task_id: text("T"), failed_signals: [text("s"), "lint", text("u")] });
      j.add("agent_spawned", { agent_id: text("b"), task_ids: [text("x"), text("y")], role: text("q"), cost_usd: pyFloat(n / 7) });
    }
    // times as the page counts them from the first row: before it (-0 too), and too far for a safe integer
    for (const ts of [1764590000.0004, 1764589999.0, 1e300, -1e300, 1764590000.5]) j.add("tick_start", { ts: pyFloat(ts), tick: 3 });
    j.close();
    for (const [, options] of VARIANTS) await expectSamePage(j.path, join(sdd, "runs", "cells"), options);
  }, 60_000);

  test("the timeline tests' synthetic runs (a big run, a run whose every field is hostile)", async () => {
    const sdd = join(dir, "synthetic");
    const big = writeBigRun(sdd, "big", 12_000);
    for (const [, options] of VARIANTS) await expectSamePage(big.path, join(sdd, "runs", "big"), options);
    const hostile = writeHostileRun(sdd, "hostile");
    expect(await expectSamePage(hostile.path, join(sdd, "runs", "hostile"))).toContain("Chain intact");
  }, 60_000);

  test("the run-journal fixtures (test/fixtures/vectors/run-journal, upstream golden-100)", async () => {
    const vectors = join(ROOT, "test", "fixtures", "vectors", "run-journal");
    const files = [
      ...readdirSync(vectors)
        .filter((f) => f.endsWith(".jsonl"))
        .map((f) => join(vectors, f)),
      join(ROOT, "test", "fixtures", "upstream", "verdicts", "golden-100", "journal.jsonl"),
    ];
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      const runDir = join(dir, "fixtures", "runs", "r1");
      mkdirSync(runDir, { recursive: true });
      const journal = join(runDir, "journal.jsonl");
      copyFileSync(file, journal);
      await expectSamePage(journal, runDir);
      await expectSamePage(journal, runDir, { maxEvents: 2, window: { from: { index: 1 } } });
    }
  }, 60_000);
});

test("the fast pass reads every display field of a row (the table's cells)", () => {
  for (const f of DISPLAY_FIELDS) expect(PAGE_FIELDS).toContain(f);
});
