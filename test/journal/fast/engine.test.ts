/**
 * The fast engine gives the exact verifier's verdict — the whole result
 * object — on every vector, on seeded tampered copies, for 1..7 threads and
 * tiny ranges/chunks (many boundaries), in-process and on real workers.
 */
import { afterAll, describe, expect, spyOn, test } from "bun:test";
import { appendFileSync, copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateJournal } from "../../../bench/journal-gen.ts";
import { verifyJournalFast, type FastVerifyOptions, type FastVerifyResult } from "../../../src/journal/fast/engine.ts";
import { DECLINED_AT_KEPT, RangeVerifier } from "../../../src/journal/fast/range.ts";
import { stitch } from "../../../src/journal/fast/stitch.ts";
import { VerifyWorkers } from "../../../src/journal/model.ts";
import { verifyJournalSync, type JournalVerifyResult } from "../../../src/journal/verify.ts";
import { EventJournal } from "../../../src/journal/writer.ts";
import { eventHash } from "../../../src/journal/hash.ts";
import { VECTORS } from "../../helpers/cli.ts";
import { countMemories } from "../../helpers/wasm-memories.ts";
import { referenceVerdicts, tempDirs } from "../tmp.ts";
import { prng } from "./rows.ts";
import { compactLines, foreignLines } from "../../helpers/python.ts";

const dirs = tempDirs("fast-verify");
afterAll(() => dirs.cleanup());
const VDIR = join(VECTORS, "run-journal");
const VECTOR_FILES = readdirSync(VDIR)
  .filter((f) => f.endsWith(".jsonl"))
  .sort()
  .map((f) => join(VDIR, f));

/** The exact verifier's fields of a fast result (the extra fields describe how it ran). */
function core(r: FastVerifyResult): JournalVerifyResult {
  const { mode, payloads_checked, snapshot_bytes, grew_by, threads, rows_by_path, bytes_read, stream, ...rest } = r;
  void mode, payloads_checked, snapshot_bytes, grew_by, threads, rows_by_path, bytes_read, stream;
  return rest;
}

const CONFIGS: FastVerifyOptions[] = [
  { threads: 1 },
  { threads: 2, minRangeBytes: 1, inProcess: true },
  { threads: 3, minRangeBytes: 1, inProcess: true, chunkSize: 97 },
  { threads: 7, minRangeBytes: 1, inProcess: true, chunkSize: 64 },
];

async function expectSameAsExact(path: string, configs = CONFIGS): Promise<void> {
  const exact = verifyJournalSync(path);
  for (const cfg of configs) {
    const fast = await verifyJournalFast(path, cfg);
    expect({ path, cfg, verdict: core(fast) }).toEqual({ path, cfg, verdict: exact });
    expect(fast.snapshot_bytes).toBe(statSync(path).size);
    // Every byte read once, whatever the split into ranges and threads.
    expect(fast.bytes_read).toBe(statSync(path).size);
    expect([fast.mode, fast.payloads_checked, fast.grew_by]).toEqual(["full", true, 0]);
  }
}

describe("fast verify = exact verify", () => {
  test("every run-journal vector, threads 1, 2, 3, 7 with tiny ranges and chunks", async () => {
    expect(VECTOR_FILES.length).toBe(16);
    for (const f of VECTOR_FILES) await expectSameAsExact(f);
  }, 30_000);

  test("on real worker threads (3 workers over tiny ranges)", async () => {
    for (const f of VECTOR_FILES) await expectSameAsExact(f, [{ threads: 3, minRangeBytes: 1 }]);
  }, 30_000);

  test("worker threads kept across journals (VerifyWorkers): every verdict the exact one, one pool per mode, closed by the caller", async () => {
    const kept = new VerifyWorkers();
    try {
      // full verifies of every vector, one after another on the same threads
      for (const f of VECTOR_FILES) await expectSameAsExact(f, [{ threads: 3, minRangeBytes: 1, workers: kept }]);
      const pool = kept.pool;
      expect(pool?.hashing).toBe(true);
      // links-only on the kept hashing pool: a pool of its own (the kept one stays), the same counts
      for (const f of VECTOR_FILES) {
        const links = await verifyJournalFast(f, { threads: 3, minRangeBytes: 1, linksOnly: true, workers: kept });
        const alone = await verifyJournalFast(f, { threads: 3, minRangeBytes: 1, linksOnly: true });
        expect({ f, count: links.count, ok: links.ok, divergent: links.divergent_index }).toEqual({ f, count: alone.count, ok: alone.ok, divergent: alone.divergent_index });
      }
      expect(kept.pool).toBe(pool);
    } finally {
      kept.close();
    }
    expect(kept.pool).toBeNull();
    // a links-only sequence keeps a links-only pool
    const links = new VerifyWorkers();
    try {
      for (const f of VECTOR_FILES.slice(0, 4)) await verifyJournalFast(f, { threads: 2, minRangeBytes: 1, linksOnly: true, workers: links });
      expect(links.pool?.hashing).toBe(false);
    } finally {
      links.close();
    }
  }, 60_000);

  test("seeded tampering (byte edit, deleted/swapped/duplicated lines, junk, blank, CR, whitespace, truncation) agrees with exact and with Python", async () => {
    const dir = dirs.make();
    const gen = generateJournal(join(dir, "sdd"), "gen", 150_000, 3);
    const sources = [join(VDIR, "hazards.jsonl"), join(VDIR, "foreign-writer.jsonl"), gen.path];
    const r = prng(4242);
    const files: string[] = [];
    const tamper = (bytes: Uint8Array): Uint8Array => {
      const text = Buffer.from(bytes).toString("latin1");
      const lines = text.split("\n");
      const at = (n: number) => Math.floor(r() * n);
      switch (at(10)) {
        case 0: {
          const b = Buffer.from(bytes);
          b[at(b.length)] = 0x20 + at(95);
          return b;
        }
        case 1:
          lines.splice(at(lines.length), 1);
          break;
        case 2: {
          const i = at(lines.length - 1);
          [lines[i], lines[i + 1]] = [lines[i + 1]!, lines[i]!];
          break;
        }
        case 3:
          lines.splice(at(lines.length), 0, ["not json", "[]", '{"a": 1', "\u00ff\u00fe"][at(4)]!);
          break;
        case 4:
          lines.splice(at(lines.length), 0, ["", "   ", "\t", "\x1c"][at(4)]!);
          break;
        case 5: {
          const i = at(lines.length);
          lines[i] = lines[i] + "\r";
          break;
        }
        case 6: {
          const i = at(lines.length);
          lines.splice(i, 0, lines[i]!);
          break;
        }
        case 7:
          return bytes.subarray(0, at(bytes.length));
        case 8: {
          const i = at(lines.length);
          lines[i] = (lines[i] ?? "").replace('"event": "', '"event": "x');
          break;
        }
        default: {
          const i = at(lines.length);
          lines[i] = " " + lines[i];
        }
      }
      return Buffer.from(lines.join("\n"), "latin1");
    };
    for (let i = 0; i < 36; i++) {
      const src = sources[i % sources.length]!;
      let bytes: Uint8Array = readFileSync(src);
      const edits = 1 + Math.floor(r() * 3);
      for (let k = 0; k < edits; k++) bytes = tamper(bytes);
      const p = join(dir, `t${i}.jsonl`);
      writeFileSync(p, bytes);
      files.push(p);
    }
    const configs: FastVerifyOptions[] = [
      { threads: 1 },
      { threads: 2, minRangeBytes: 1, inProcess: true, chunkSize: 4096 },
      { threads: 7, minRangeBytes: 1, inProcess: true, chunkSize: 333 },
    ];
    const ours: JournalVerifyResult[] = [];
    for (const f of files) {
      await expectSameAsExact(f, configs);
      ours.push(verifyJournalSync(f));
    }
    const python = referenceVerdicts(files);
    files.forEach((f, i) => {
      const want = python[i]!;
      const got: Record<string, unknown> = {};
      for (const k of Object.keys(want)) got[k] = (ours[i] as unknown as Record<string, unknown>)[k];
      expect({ f, ...got }).toEqual({ f, ...want });
    });
  }, 60_000);

  test("a range's base row index guessed from a wrong or missing stored index is redone at the true base", async () => {
    // The stored `index` is not hashed (Python hashes the position), so a
    // journal whose stored indices lie is still intact: every guess fails,
    // every range is redone, and the verdict must still be the exact one.
    const dir = dirs.make();
    const gen = generateJournal(join(dir, "sdd"), "gen", 60_000, 5);
    const rows = readFileSync(gen.path, "utf8").split("\n").filter(Boolean);
    expect(rows.length).toBeGreaterThan(50);
    const lying = join(dir, "lying.jsonl");
    const lie = (line: string, i: number): string => {
      const m = i % 4;
      if (m === 0) return line.replace(/"index": \d+/, `"index": ${i + 3}`);
      if (m === 1) return line.replace(/"index": \d+/, `"index": "${i}"`);
      if (m === 2) return line.replace(/"index": \d+, /, "");
      return line.replace(/"index": \d+/, `"index": ${i}.0`);
    };
    writeFileSync(lying, rows.map(lie).join("\n") + "\n");
    const exact = verifyJournalSync(lying);
    expect([exact.chain_consistent, exact.count]).toEqual([true, rows.length]);
    await expectSameAsExact(lying, [...CONFIGS, { threads: 3, minRangeBytes: 1 }, { threads: 1, ranges: 8, minRangeBytes: 1 }]);
    // One thread takes each range's base from the ranges before it: nothing is read twice. Guessing (the
    // workers', here in this thread) reads the ranges again whose guess was wrong.
    const { threadVerifier } = await import("../../../src/journal/fast/range.ts");
    const runs = spyOn(threadVerifier(), "run");
    try {
      await verifyJournalFast(lying, { threads: 1, ranges: 8, minRangeBytes: 1 });
      expect(runs).toHaveBeenCalledTimes(8);
      runs.mockClear();
      await verifyJournalFast(lying, { threads: 2, ranges: 8, minRangeBytes: 1, inProcess: true });
      expect(runs.mock.calls.length).toBeGreaterThan(8);
    } finally {
      runs.mockRestore();
    }
    // A deleted row shifts every later stored index by one: the guesses are
    // right, the chain is broken at the deletion, and the verdict names it.
    const deleted = join(dir, "deleted.jsonl");
    writeFileSync(deleted, rows.filter((_, i) => i !== 20).join("\n") + "\n");
    await expectSameAsExact(deleted, [...CONFIGS, { threads: 3, minRangeBytes: 1 }]);
  }, 30_000);

  test("a long line (longer than the read area) and lone-CR files", async () => {
    const dir = dirs.make();
    for (const f of VECTOR_FILES) {
      for (const kernel of ["always", "never"] as const) {
        const v = new RangeVerifier(256, kernel); // most rows are longer than 256 bytes
        const size = statSync(f).size;
        const r = v.run({ path: f, start: 0, end: size, isLast: true, baseIndex: 0, linksOnly: false, chunkSize: 100 });
        expect({ f, kernel, v: stitch({ path: f, exists: true, results: [r] }) }).toEqual({ f, kernel, v: verifyJournalSync(f) });
      }
    }
    const cr = join(dir, "cr.jsonl");
    writeFileSync(cr, readFileSync(join(VDIR, "hazards.jsonl"), "latin1").replaceAll("\n", "\r"), "latin1");
    await expectSameAsExact(cr);
    const mixed = join(dir, "mixed.jsonl");
    writeFileSync(mixed, readFileSync(join(VDIR, "chain-4.jsonl"), "latin1").replace("\n", "\r\r\n").replace("\n", "\r"), "latin1");
    await expectSameAsExact(mixed);
  });

  test("a short hash whose tentative 64 bytes run into the next line never merges two lines into a row", async () => {
    // The scanner finds a row's end itself and takes a 64-byte hash
    // tentatively. Here a row's last field is a 52-byte event_hash (or
    // prev_hash): its "64 bytes" end on a quote inside the next line, after
    // which that line parses on as members of this row. The hex comparisons
    // must reject it, and the verdict must be the exact one.
    const dir = dirs.make();
    const gen = generateJournal(join(dir, "sdd"), "gen", 30_000, 6);
    const rows = readFileSync(gen.path, "utf8").split("\n").filter(Boolean);
    for (const field of ["event_hash", "prev_hash"]) {
      const lines = [...rows];
      const i = 5;
      const re = new RegExp(`, "${field}": "([0-9a-f]{64})"`);
      const h = re.exec(lines[i]!)![1]!;
      lines[i] = lines[i]!.replace(re, "").replace(/}$/, `, "${field}": "${h.slice(0, 52)}"}`);
      lines.splice(i + 1, 0, '{"zz": "q", "k": 1}');
      const p = join(dir, `merged-${field}.jsonl`);
      writeFileSync(p, lines.join("\n") + "\n");
      const exact = verifyJournalSync(p);
      expect([field, exact.divergent_index, exact.count]).toEqual([field, i, lines.length]);
      await expectSameAsExact(p, [...CONFIGS, { threads: 2, minRangeBytes: 1 }]);
      const links = await verifyJournalFast(p, { linksOnly: true, threads: 3, minRangeBytes: 1, inProcess: true });
      expect([field, links.divergent_index]).toEqual([field, i]);
    }
  });

  test("a range's first row taken by the fast path keeps the decoded event type for the stitcher", async () => {
    // Every row is a range's first row here (1-byte ranges). Deleting a row
    // makes the next one a prev_hash break found by the stitcher, whose
    // expected hash is recomputed from the first row's strings: the event
    // type must be the decoded string (`tâche ✓`), not its escaped bytes.
    const dir = dirs.make();
    const j = EventJournal.create("esc", { sddDir: join(dir, "sdd") });
    try {
      for (let i = 0; i < 12; i++) j.record(i % 2 ? "tâche ✓" : 'say "hi"\\', { n: i, note: "é" });
    } finally {
      j.close();
    }
    const path = join(dir, "sdd", "runs", "esc", "journal.jsonl");
    const rows = readFileSync(path, "utf8").split("\n").filter(Boolean);
    expect(rows[1]).toContain('"event": "t\\u00e2che \\u2713"');
    // Row 5 re-chained onto a foreign prev_hash: consistent on its own at
    // its position, so the fast path takes it as its range's first row.
    const row5 = JSON.parse(rows[5]!) as { event: string; prev_hash: string; payload_hash: string; event_hash: string };
    const foreign = "ab".repeat(32);
    const rechained = rows[5]!.replace(row5.prev_hash, foreign).replace(
      row5.event_hash,
      eventHash(foreign, row5.event, row5.payload_hash, 5),
    );
    for (const [name, lines] of [
      ["rechained", rows.map((r, i) => (i === 5 ? rechained : r))],
      ["deleted", rows.filter((_, i) => i !== 5)],
    ] as const) {
      const p = join(dir, `${name}.jsonl`);
      writeFileSync(p, lines.join("\n") + "\n");
      const exact = verifyJournalSync(p);
      expect([name, exact.divergent_index, exact.errors[0], exact.expected_hash === null]).toEqual([name, 5, "step 5: prev_hash break", false]);
      await expectSameAsExact(p, [...CONFIGS, { threads: 2, minRangeBytes: 1 }]);
    }
  });

  test("missing file, seal identity, unknown hash_profile", async () => {
    const dir = dirs.make();
    const missing = join(dir, "none.jsonl");
    const seal = { head: "", event_count: 0 };
    expect(core(await verifyJournalFast(missing))).toEqual(verifyJournalSync(missing));
    expect(core(await verifyJournalFast(missing, { seal }))).toEqual(verifyJournalSync(missing, { seal }));
    const chain = join(VDIR, "chain-4.jsonl");
    const head = "beb8b92285cb2d3e5f1a4fc30b1024fb9848da6105bbada9fa19fb0933847f71";
    for (const s of [{ head, event_count: 4 }, { head, event_count: 3 }, { head: "x", event_count: 4 }]) {
      expect(core(await verifyJournalFast(chain, { seal: s, threads: 2, minRangeBytes: 1, inProcess: true }))).toEqual(
        verifyJournalSync(chain, { seal: s }),
      );
    }
    const prof = join(dir, "profile.jsonl");
    const lines = readFileSync(chain, "utf8").split("\n");
    lines[2] = lines[2]!.replace("}", ', "hash_profile": "jcs-v3"}');
    writeFileSync(prof, lines.join("\n"));
    await expectSameAsExact(prof);
  });
});

describe("--links-only", () => {
  test("finds a prev_hash break but not a payload edit, and says payloads were not checked", async () => {
    for (const name of ["hazards-prev-hash-edit", "hazards-row-deleted", "hazards-rows-swapped"]) {
      const p = join(VDIR, `${name}.jsonl`);
      const exact = verifyJournalSync(p);
      for (const cfg of [{ threads: 1 }, { threads: 3, minRangeBytes: 1, inProcess: true }, { threads: 2, minRangeBytes: 1 }]) {
        const r = await verifyJournalFast(p, { ...cfg, linksOnly: true });
        expect([name, r.mode, r.payloads_checked, r.chain_consistent]).toEqual([name, "links-only", false, false]);
        expect([name, r.divergent_index]).toEqual([name, exact.divergent_index]);
        expect(r.errors[0]).toBe(`step ${exact.divergent_index}: prev_hash break`);
      }
    }
    for (const name of ["hazards-payload-edit", "hazards-event-type-edit", "foreign-writer"]) {
      const r = await verifyJournalFast(join(VDIR, `${name}.jsonl`), { linksOnly: true });
      expect([name, r.ok, r.chain_consistent, r.payloads_checked]).toEqual([name, true, true, false]);
    }
    // coverage is still exact in links-only mode
    const junk = join(VDIR, "hazards-junk-line-middle.jsonl");
    const r = await verifyJournalFast(junk, { linksOnly: true, threads: 3, minRangeBytes: 1, inProcess: true });
    expect([r.coverage, r.discarded_line_indices]).toEqual(["partial", verifyJournalSync(junk).discarded_line_indices]);
  });

  test("a malformed stored event_hash is a links-only failure", async () => {
    const dir = dirs.make();
    const p = join(dir, "j.jsonl");
    const lines = readFileSync(join(VDIR, "chain-4.jsonl"), "utf8").split("\n");
    const h = /"event_hash": "([0-9a-f]{64})"/.exec(lines[3]!)![1]!;
    lines[3] = lines[3]!.replace(h, h.toUpperCase());
    writeFileSync(p, lines.join("\n"));
    const r = await verifyJournalFast(p, { linksOnly: true });
    expect([r.divergent_index, r.expected_hash, r.actual_hash]).toEqual([3, null, h.toUpperCase()]);
    expect(r.errors[0]).toBe("step 3: event_hash is not a 64-character lowercase hex SHA-256 digest");
  });
});

describe("rows whose stored hashes are not hex (the modes that compute no digest)", () => {
  /**
   * Links-only and the count past a failure hash nothing, so the kernel
   * must check the stored hashes' bytes itself: a non-UTF-8 byte in a
   * payload_hash, or a quote inside an event_hash, makes a line the reader
   * discards. Found by the display fuzz target: links-only counted such
   * lines as rows (and could call an intact chain's coverage complete).
   */
  test("links-only and after a break: the count, coverage and discarded lines are the exact reader's", async () => {
    const dir = dirs.make();
    const gen = generateJournal(join(dir, "sdd"), "r", 400_000, 5);
    const lines = readFileSync(gen.path).toString("latin1").split("\n");
    const n = lines.length - 1;
    const edit = (i: number, field: string, at: number, bytes: string) => {
      const key = `"${field}": "`;
      const s = lines[i]!.indexOf(key) + key.length + at;
      lines[i] = lines[i]!.slice(0, s) + bytes + lines[i]!.slice(s + bytes.length);
    };
    edit(Math.floor(n / 4), "payload_hash", 25, "\xca"); // not UTF-8
    edit(Math.floor(n / 2), "event_hash", 5, '"x"'); // a quote: not JSON any more
    edit(Math.floor((3 * n) / 4), "payload_hash", 0, "\x7f"); // valid JSON, not hex
    const intact = join(dir, "intact.jsonl");
    writeFileSync(intact, Buffer.from(lines.join("\n"), "latin1"));
    // The same after a prev_hash break near the start (the rest is only counted).
    edit(3, "prev_hash", 10, lines[3]!.includes('"prev_hash": "0') ? "1" : "0");
    const broken = join(dir, "broken.jsonl");
    writeFileSync(broken, Buffer.from(lines.join("\n"), "latin1"));
    for (const p of [intact, broken]) {
      const exact = verifyJournalSync(p);
      expect(exact.discarded_line_indices.length).toBe(2);
      for (const cfg of CONFIGS) {
        for (const linksOnly of [true, false]) {
          const r = await verifyJournalFast(p, { ...cfg, linksOnly });
          const got = { count: r.count, coverage: r.coverage, discarded: r.discarded_line_indices, ok: r.ok };
          expect(got).toEqual({ count: exact.count, coverage: exact.coverage, discarded: exact.discarded_line_indices, ok: false });
        }
      }
    }
  });
});

describe("a growing journal", () => {
  function liveJournal(): { path: string; rows: string[] } {
    const dir = dirs.make();
    const gen = generateJournal(join(dir, "sdd"), "live", 60_000, 11);
    const rows = readFileSync(gen.path, "utf8").split("\n").filter(Boolean);
    return { path: gen.path, rows };
  }

  test("appends after the snapshot are not read: the verdict is the snapshot's", async () => {
    const { path, rows } = liveJournal();
    const head = rows.slice(0, 50);
    writeFileSync(path, head.join("\n") + "\n");
    const size = statSync(path).size;
    const r = await verifyJournalFast(path, {
      threads: 2,
      minRangeBytes: 1,
      inProcess: true,
      afterSnapshot: () => appendFileSync(path, rows.slice(50).join("\n") + "\n"),
    });
    expect([r.ok, r.count, r.snapshot_bytes, r.coverage]).toEqual([true, 50, size, "complete"]);
    expect(r.grew_by).toBe(statSync(path).size - size);
  });

  test("a snapshot that ends inside a line being written is cut at the last full line, not reported torn", async () => {
    const { path, rows } = liveJournal();
    const full = rows.slice(0, 40).join("\n") + "\n";
    const half = rows[40]!.slice(0, 100);
    writeFileSync(path, full + half);
    const r = await verifyJournalFast(path, {
      threads: 1,
      afterSnapshot: () => appendFileSync(path, rows[40]!.slice(100) + "\n" + rows.slice(41).join("\n") + "\n"),
    });
    expect([r.ok, r.count, r.coverage, r.discarded_line_indices]).toEqual([true, 40, "complete", []]);
    expect(r.snapshot_bytes).toBe(Buffer.byteLength(full));
    expect(r.grew_by).toBeGreaterThan(0);
    // Without growth the same bytes are a torn tail, as the exact verifier says.
    writeFileSync(path, full + half);
    expect(core(await verifyJournalFast(path))).toEqual(verifyJournalSync(path));
    expect((await verifyJournalFast(path)).coverage).toBe("partial");
  });

  test("an explicit endOffset verifies exactly that prefix", async () => {
    const { path } = liveJournal();
    const bytes = readFileSync(path);
    const cut = Math.floor(bytes.length / 2);
    const dir = dirs.make();
    const prefix = join(dir, "prefix.jsonl");
    mkdirSync(dir, { recursive: true });
    writeFileSync(prefix, bytes.subarray(0, cut));
    const r = await verifyJournalFast(path, { endOffset: cut, threads: 3, minRangeBytes: 1, inProcess: true });
    expect({ ...core(r), path: prefix }).toEqual(verifyJournalSync(prefix));
    expect(r.snapshot_bytes).toBe(cut);
  });
});

test("copy helper sanity: vectors are read-only inputs, copies are writable", () => {
  const dir = dirs.make();
  const p = join(dir, "c.jsonl");
  copyFileSync(join(VDIR, "chain-4.jsonl"), p);
  expect(statSync(p).size).toBe(statSync(join(VDIR, "chain-4.jsonl")).size);
});

describe("divergent_line: the divergent row's 1-based physical line, from the verify itself", () => {
  /**
   * 12 rows laid out among blank, whitespace-only and junk (discarded)
   * lines, a row with a leading space (exact path), and LF, CRLF and lone-CR
   * terminators; `lineOf[k]` is row k's 1-based physical line.
   */
  function layout(dir: string): { rows: string[]; write: (name: string, rows: string[]) => string; lineOf: number[] } {
    const j = EventJournal.create("lines", { sddDir: join(dir, "sdd") });
    try {
      for (let i = 0; i < 12; i++) j.record(i % 3 ? "step" : "tâche", { n: i, note: "x" });
    } finally {
      j.close();
    }
    const rows = readFileSync(join(dir, "sdd", "runs", "lines", "journal.jsonl"), "utf8").split("\n").filter(Boolean);
    const fillers: Record<number, string[]> = { 0: [], 2: ["", "   "], 5: ["junk"], 6: ["", "{not json", ""], 9: ["[1, 2]"] };
    const terminators = ["\n", "\r\n", "\r"];
    const lineOf: number[] = [];
    const write = (name: string, rs: string[]): string => {
      let text = "";
      let line = 0;
      rs.forEach((r, k) => {
        for (const f of fillers[k] ?? []) {
          text += f + terminators[line % 3];
          line++;
        }
        lineOf[k] = ++line;
        text += (k === 7 ? " " : "") + r + terminators[line % 3];
      });
      const p = join(dir, name);
      writeFileSync(p, text);
      return p;
    };
    write("clean.jsonl", rows);
    return { rows, write, lineOf: [...lineOf] };
  }

  test("a payload edit and a deleted row, exact and fast (one range, tiny ranges, kernel ranges split at every line)", async () => {
    const dir = dirs.make();
    const { rows, write, lineOf } = layout(dir);
    expect(verifyJournalSync(join(dir, "clean.jsonl"))).toMatchObject({ chain_consistent: true, count: 12, divergent_line: null });
    let kernelRows = 0;
    for (const k of [0, 1, 2, 3, 6, 7, 9, 11]) {
      const edited = write(`edit-${k}.jsonl`, rows.map((r, i) => (i === k ? r.replace('"note": "x"', '"note": "y"') : r)));
      const deleted = write(`del-${k}.jsonl`, rows.filter((_, i) => i !== k));
      // Row k re-chained onto a foreign prev_hash: consistent on its own, so the kernel takes it as a range's first row.
      const row = JSON.parse(rows[k]!) as { event: string; prev_hash: string; payload_hash: string; event_hash: string };
      const foreign = "ab".repeat(32);
      const rechained = rows[k]!.replace(`"prev_hash": "${row.prev_hash}"`, `"prev_hash": "${foreign}"`).replace(row.event_hash, eventHash(foreign, row.event, row.payload_hash, k));
      const relinked = write(`relink-${k}.jsonl`, rows.map((r, i) => (i === k ? rechained : r)));
      // The deleted row's successor breaks the chain at row k, on the line row k now occupies (the last row has none).
      for (const [p, line] of [[edited, lineOf[k]], [deleted, k === 11 ? null : lineOf[k]], [relinked, lineOf[k]]] as const) {
        const exact = verifyJournalSync(p);
        expect([p, exact.divergent_index, exact.divergent_line]).toEqual([p, line === null ? null : k, line]);
        await expectSameAsExact(p, [...CONFIGS, { threads: 2, minRangeBytes: 1 }]);
        // Two ranges on the kernel, split at each line boundary: the divergence in either range, or at the seam.
        const bytes = readFileSync(p);
        for (let s = 1; s < bytes.length; s++) {
          if (bytes[s - 1] !== 0x0a && !(bytes[s - 1] === 0x0d && bytes[s] !== 0x0a)) continue;
          const v = new RangeVerifier(1 << 16, "always");
          const a = v.run({ path: p, start: 0, end: s, isLast: false, baseIndex: 0, linksOnly: false });
          const b = v.run({ path: p, start: s, end: bytes.length, isLast: true, baseIndex: a.rows, linksOnly: false });
          kernelRows += a.kernelRows + b.kernelRows;
          expect({ p, s, v: stitch({ path: p, exists: true, results: [a, b] }) }).toEqual({ p, s, v: exact });
        }
      }
    }
    expect(kernelRows).toBeGreaterThan(0);
  }, 60_000);
});

describe("rows by path: where the kernel declined a row as written (re-spaced, or the exact path's)", () => {
  test("declined_at lists those rows' offsets, whatever the split into ranges, threads and reads; null past DECLINED_AT_KEPT", async () => {
    const dir = dirs.make();
    const g = generateJournal(join(dir, "sdd"), "r", 2_500_000, 7, "bench");
    const lines = readFileSync(g.path, "utf8").split("\n");
    lines.pop(); // (after the last line break)
    const compacted = compactLines(lines);
    const foreign = foreignLines(lines);
    // rows re-spelled compact (the same values and hashes) are taken re-spaced; rows spelled
    // as Python's writer never spells a string are the exact path's
    const compact = new Set([5, 6, 200, 201, 777, lines.length - 1]);
    const odd = new Set([7, 300, 301, lines.length - 2]);
    const spelled = lines.map((l, i) => (compact.has(i) ? compacted[i]! : odd.has(i) ? foreign[i]! : l));
    const path = join(dir, "some-compact.jsonl");
    writeFileSync(path, spelled.map((l) => l + "\n").join(""));
    let at = 0;
    const want: number[] = [];
    spelled.forEach((l, i) => {
      // (the first row's empty prev_hash is the exact path's too)
      if (i === 0 || compact.has(i) || odd.has(i)) want.push(at);
      at += Buffer.byteLength(l) + 1;
    });
    const exact = odd.size + 1;
    // with whole reads the kernel takes every other row, and the compact ones re-spaced
    for (const cfg of [{ threads: 1 }, { threads: 2, minRangeBytes: 1 }, { threads: 3, minRangeBytes: 1, inProcess: true }]) {
      const v = await verifyJournalFast(path, cfg);
      expect({ cfg, ok: v.ok, byPath: v.rows_by_path }).toEqual({ cfg, ok: true, byPath: { kernel: v.count - exact, exact, respaced: compact.size, declined_at: want } });
    }
    // tiny reads and ranges leave more rows to the exact path: each is listed, at its line's start, in order
    const starts = new Set([0, ...[...readFileSync(path).entries()].filter(([, c]) => c === 10).map(([i]) => i + 1)]);
    for (const cfg of CONFIGS.slice(2)) {
      const v = await verifyJournalFast(path, cfg);
      const listed = v.rows_by_path.declined_at!;
      expect({ cfg, ok: v.ok, listed: listed.length }).toEqual({ cfg, ok: true, listed: v.rows_by_path.exact + v.rows_by_path.respaced });
      expect(listed.every((o, i) => starts.has(o) && (i === 0 || o > listed[i - 1]!))).toBe(true);
      expect(want.every((o) => listed.includes(o))).toBe(true);
    }
    // journals the kernel declines whole: too many rows to list; the exact path's, and re-spaced
    const allForeign = join(dir, "all-foreign.jsonl");
    writeFileSync(allForeign, foreign.map((l) => l + "\n").join(""));
    const v = await verifyJournalFast(allForeign, { threads: 1 });
    expect(v.ok).toBe(true);
    expect(v.rows_by_path.exact).toBeGreaterThan(DECLINED_AT_KEPT);
    expect(v.rows_by_path.declined_at).toBeNull();
    const allCompact = join(dir, "all-compact.jsonl");
    writeFileSync(allCompact, compacted.map((l) => l + "\n").join(""));
    const c = await verifyJournalFast(allCompact, { threads: 1 });
    expect({ ok: c.ok, exact: c.rows_by_path.exact, respaced: c.rows_by_path.respaced, kernel: c.rows_by_path.kernel }).toEqual({ ok: true, exact: 1, respaced: c.count - 1, kernel: c.count - 1 });
    expect(c.rows_by_path.declined_at).toBeNull();
  }, 60_000);
});

describe("one thread's verifies share its kernels", () => {
  test("a second verify in the process makes no WebAssembly memory; a kernel a long row grew is let go after its verify", async () => {
    const dir = dirs.make();
    const gen = generateJournal(join(dir, "sdd"), "gen", 600_000, 9);
    const long = join(dir, "long.jsonl");
    const j = EventJournal.create("long", { sddDir: join(dir, "sdd2"), env: {} });
    j.record("tool_result", { output: "x".repeat(6 << 20) });
    j.close();
    copyFileSync(join(dir, "sdd2", "runs", "long", "journal.jsonl"), long);
    const first = await verifyJournalFast(gen.path, { threads: 1 });
    expect(first.ok).toBe(true);
    const { made, restore } = countMemories();
    try {
      expect((await verifyJournalFast(gen.path, { threads: 1 })).ok).toBe(true);
      expect(made).toEqual([]);
      // the long row needs a kernel of its own, made for it and not kept
      expect((await verifyJournalFast(long, { threads: 1 })).ok).toBe(true);
      expect(made.length).toBe(1);
      expect((await verifyJournalFast(long, { threads: 1 })).ok).toBe(true);
      expect(made.length).toBe(2);
      expect((await verifyJournalFast(gen.path, { threads: 1 })).ok).toBe(true);
      expect(made.length).toBe(2);
    } finally {
      restore();
    }
  });
});
