/** EventJournal: Python-identical rows, resume, locking, crash safety, metadata. */
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import {
  EventJournal,
  journalPath,
  metadataText,
  readMetadata,
  repairJournalTail,
  verifyJournal,
} from "../../src/journal/index.ts";
import { parse, pyFloat, type PyObject } from "../../src/pyjson/index.ts";
import { runPython } from "../helpers/python.ts";
import { Gen } from "../pyjson/gen.ts";
import { referenceVerdicts, tempDirs } from "./tmp.ts";

const dirs = tempDirs("writer");
afterAll(() => dirs.cleanup());

const RESERVED = new Set(["event", "prev_hash", "payload_hash", "event_hash", "hash_profile"]);

/** A hostile payload the writer accepts (reserved keys dropped). */
function hostilePayload(g: Gen): PyObject {
  const m = parse(g.objectText(0, 2)) as PyObject;
  for (const k of [...m.keys()]) if (RESERVED.has(k)) m.delete(k);
  return m;
}

describe("rows", () => {
  test("envelope first, payload in caller order, envelope-named keys overwrite in place", () => {
    const dir = dirs.make();
    const j = EventJournal.create("run-1", { sddDir: dir });
    const row = j.record("step", { zeta: 1, alpha: "a", index: 7, ts: "custom" });
    j.close();
    expect([...row.keys()]).toEqual(["ts", "elapsed_s", "index", "event", "prev_hash", "payload_hash", "event_hash", "zeta", "alpha"]);
    const line = readFileSync(j.path, "utf8");
    expect(line).toMatch(/^\{"ts": "custom", "elapsed_s": \d+\.\d+(e-\d\d)?, "index": 7, "event": "step", "prev_hash": "", /);
    expect(line.endsWith('"zeta": 1, "alpha": "a"}\n')).toBe(true);
  });

  test("200 hostile rows: each line is byte-identical to Python json.dumps of the same dict, and verifies in Python", async () => {
    const dir = dirs.make();
    const g = new Gen(424242);
    const j = EventJournal.create("hostile", { sddDir: dir });
    for (let i = 0; i < 200; i++) j.record(g.pick(["tick", "agent_spawned", "h\u00e9\ud83d\ude80", "\u2028", "e"]), hostilePayload(g));
    j.record("js_values", { one: 1, half: 1.5, negzero: -0, nan: NaN, inf: -Infinity, big: 10n ** 30n, f: pyFloat(2), nested: { b: [1, "x", null, true], a: {} }, skipped: undefined });
    j.close();
    const lines = readFileSync(j.path, "utf8").split("\n").filter((l) => l !== "");
    const py = runPython(
      `import json, sys
print(json.dumps([json.dumps(json.loads(l)) == l for l in json.load(sys.stdin)]))`,
      lines,
    ) as boolean[];
    expect(py.every(Boolean)).toBe(true);
    expect(py.length).toBe(201);
    const ours = await verifyJournal(j.path);
    const [ref] = referenceVerdicts([j.path]);
    expect(ours.ok).toBe(true);
    expect(ref).toMatchObject({ ok: true, count: 201, head: ours.head, discarded_line_indices: [] });
  });

  test("refuses payloads that would break the chain and empty event types", () => {
    const j = EventJournal.create("r", { sddDir: dirs.make() });
    for (const key of ["event", "prev_hash", "payload_hash", "event_hash"]) {
      expect(() => j.record("e", { [key]: "x" })).toThrow(expect.objectContaining({ code: "invalid_payload", exitCode: 2 }));
    }
    expect(() => j.record("e", { hash_profile: "jcs-v3" })).toThrow(expect.objectContaining({ code: "unknown_hash_profile" }));
    expect(() => j.record("")).toThrow(expect.objectContaining({ code: "invalid_event" }));
    expect(j.count()).toBe(0);
    expect(readFileSync(j.path, "utf8")).toBe("");
    j.close();
  });

  test("recordMany writes the same chain as record, and rollback undoes a batch", () => {
    const a = EventJournal.create("a", { sddDir: dirs.make() });
    const b = EventJournal.create("b", { sddDir: dirs.make() });
    const items = Array.from({ length: 50 }, (_, i) => ({ event: `e${i % 3}`, payload: { i, s: "\u00e9".repeat(i) } }));
    for (const it of items) a.record(it.event, it.payload);
    const mark = b.mark();
    b.recordMany(items);
    expect([b.head(), b.count()]).toEqual([a.head(), a.count()]);
    b.rollback(mark);
    expect([b.head(), b.count(), statSync(b.path).size]).toEqual(["", 0, 0]);
    b.recordMany(items.slice(0, 3));
    expect(b.count()).toBe(3);
    a.close();
    b.close();
  });
});

describe("create / resume / lock", () => {
  test("create refuses an existing non-empty journal unless overwrite", () => {
    const dir = dirs.make();
    const j = EventJournal.create("r", { sddDir: dir });
    j.record("a");
    j.close();
    expect(() => EventJournal.create("r", { sddDir: dir })).toThrow(expect.objectContaining({ code: "journal_exists" }));
    const k = EventJournal.create("r", { sddDir: dir, overwrite: true });
    expect([k.count(), statSync(k.path).size]).toEqual([0, 0]);
    k.close();
  });

  test("a second writer is refused while the first holds the lock; released on close", async () => {
    const dir = dirs.make();
    const j = EventJournal.create("r", { sddDir: dir });
    expect(existsSync(join(dir, "runs", "r", "journal.lock"))).toBe(true);
    await expect(EventJournal.resume("r", { sddDir: dir })).rejects.toMatchObject({ code: "journal_locked", exitCode: 2 });
    j.close();
    expect(existsSync(join(dir, "runs", "r", "journal.lock"))).toBe(false);
    const k = await EventJournal.resume("r", { sddDir: dir });
    k.close();
  });

  test("resume continues the chain from the tail (same head as writing in one go)", async () => {
    const dir = dirs.make();
    const one = EventJournal.create("one", { sddDir: dir });
    const two = EventJournal.create("two", { sddDir: dir });
    for (let i = 0; i < 5; i++) one.record("e", { i });
    for (let i = 0; i < 3; i++) two.record("e", { i });
    two.close();
    const again = await EventJournal.resume("two", { sddDir: dir });
    expect(again.count()).toBe(3);
    for (let i = 3; i < 5; i++) again.record("e", { i });
    expect(again.head()).toBe(one.head());
    one.close();
    again.close();
    expect((await verifyJournal(again.path)).ok).toBe(true);
  });

  test("resume terminates a newline-less last row before appending", async () => {
    const dir = dirs.make();
    const j = EventJournal.create("r", { sddDir: dir });
    j.record("a");
    j.close();
    truncateSync(j.path, statSync(j.path).size - 1); // drop the final "\n"
    const k = await EventJournal.resume("r", { sddDir: dir });
    k.record("b");
    k.close();
    const r = await verifyJournal(k.path);
    expect([r.ok, r.count]).toEqual([true, 2]);
  });

  test("resume refuses a torn tail (naming replay repair), middle junk and a broken chain", async () => {
    const dir = dirs.make();
    const j = EventJournal.create("run-9", { sddDir: dir });
    j.record("a");
    j.record("b");
    j.close();
    const good = readFileSync(j.path, "utf8");
    appendFileSync(j.path, '{"ts": 1.0, "ela');
    const torn = await EventJournal.resume("run-9", { sddDir: dir }).catch((e) => e);
    expect(torn.code).toBe("journal_torn_tail");
    expect(torn.message).toBe(
      `cannot resume journal ${j.path}: reader discarded physical line(s): 2; the tail is a torn write \u2014 repair it first with 'bernstein replay repair run-9'`,
    );
    writeFileSync(j.path, "junk\n" + good);
    const middle = await EventJournal.resume("run-9", { sddDir: dir }).catch((e) => e);
    expect(middle.code).toBe("journal_corrupt");
    expect(middle.message).not.toContain("repair");
    writeFileSync(j.path, good.replace('"event": "b"', '"event": "c"'));
    const broken = await EventJournal.resume("run-9", { sddDir: dir }).catch((e) => e);
    expect(broken.code).toBe("journal_corrupt");
    expect(broken.message).toContain("step 1: event_hash mismatch");
    // Refusals release the lock.
    expect(existsSync(join(dir, "runs", "run-9", "journal.lock"))).toBe(false);
  });

  test("resume decides as the exact reader and walker would: every tail, line ending and break (its refusal, or the chain it continues)", async () => {
    const { scanTail } = await import("../../src/journal/tail-scan.ts");
    const { EventChainWalker } = await import("../../src/journal/chain.ts");
    const { JOURNAL_MAX_ROW_BYTES } = await import("../../src/fsutil/input.ts");
    /** What the exact reference makes of the journal: the refusal's code and facts, or the next row's index and prev_hash. */
    const exact = (path: string): unknown => {
      const walker = new EventChainWalker();
      const scan = scanTail(path, (row) => walker.push(row), JOURNAL_MAX_ROW_BYTES);
      if (scan.discarded.length > 0) return { code: scan.tornTail ? "journal_torn_tail" : "journal_corrupt", facts: { discarded_line_indices: scan.discarded } };
      const d = walker.divergence;
      if (d !== null) return { code: "journal_corrupt", error: d.error, facts: { divergent_index: d.index } };
      return { next: [walker.count, walker.prefixHead] };
    };
    const ours = (dir: string, path: string): unknown => {
      try {
        const k = EventJournal.resumeSync("r", { sddDir: dir });
        k.record("next");
        k.close();
        const lines = readFileSync(path, "utf8").split(/\r\n|\r|\n/).filter((l) => l !== "");
        const row = JSON.parse(lines[lines.length - 1]!) as { index: number; prev_hash: string };
        return { next: [row.index, row.prev_hash] };
      } catch (err) {
        const e = err as { code: string; message: string; facts: Record<string, unknown> };
        const { run_id, path: p, ...facts } = e.facts;
        void run_id, p;
        const error = e.message.match(/: (step \d+: .*)$/)?.[1];
        return error === undefined ? { code: e.code, facts } : { code: e.code, error, facts };
      }
    };
    const src = dirs.make();
    const w = EventJournal.create("r", { sddDir: src });
    for (const e of ["a", "b", "c", "d"]) w.record(e, { n: e });
    w.close();
    const rows = readFileSync(w.path, "utf8").split("\n").slice(0, 4);
    const bodies = { intact: rows, swapped: [rows[0], rows[2], rows[1], rows[3]], "last-swapped": [rows[0], rows[1], rows[3], rows[2]], edited: [rows[0], rows[1]!.replace('"n": "b"', '"n": "x"'), rows[2], rows[3]] };
    const torn = rows[3]!.slice(0, 40);
    let cases = 0;
    for (const [b, body] of Object.entries(bodies)) {
      for (const nl of ["\n", "\r\n", "\r"]) {
        const text = body.join(nl) + nl;
        const tails = [text, text + torn, text + nl + torn, text + nl, text + "junk" + nl, text + "junk" + nl + torn, [body[0], "junk", ...body.slice(1)].join(nl) + nl, body.join(nl)];
        for (const t of tails) {
          const dir = dirs.make();
          const path = journalPath(dir, "r");
          const { mkdirSync } = await import("node:fs");
          mkdirSync(join(dir, "runs", "r"), { recursive: true });
          writeFileSync(path, t);
          const want = exact(path);
          expect([b, JSON.stringify(t.slice(-60)), ours(dir, path)]).toEqual([b, JSON.stringify(t.slice(-60)), want]);
          cases++;
        }
      }
    }
    expect(cases).toBe(96);
  });

  test("resume refuses a sealed run unless allowSealed", async () => {
    const dir = dirs.make();
    const j = EventJournal.create("r", { sddDir: dir });
    j.record("a");
    j.close();
    writeFileSync(join(dir, "runs", "r", "seal.json"), JSON.stringify({ event_count: 1, head: j.head() }));
    await expect(EventJournal.resume("r", { sddDir: dir })).rejects.toMatchObject({ code: "journal_sealed" });
    (await EventJournal.resume("r", { sddDir: dir, allowSealed: true })).close();
  });
});

describe("crash safety", () => {
  test("a row is wholly there or a torn tail; repair removes it and resume continues the same chain", async () => {
    const dir = dirs.make();
    const j = EventJournal.create("crash", { sddDir: dir });
    for (let i = 0; i < 10; i++) j.record("e", { i, s: "\u00e9\ud83d\ude80" });
    const headBefore = j.head();
    const sizeBefore = statSync(j.path).size;
    j.record("e", { i: 10 });
    j.close();
    const full = readFileSync(j.path);
    const lastRow = full.subarray(sizeBefore);
    // Only the final "\n" missing: a complete row, not a tear.
    writeFileSync(j.path, full.subarray(0, full.length - 1));
    expect((await verifyJournal(j.path)).count).toBe(11);
    // Tears of the last write anywhere before its closing brace:
    for (const cut of [1, 7, Math.floor(lastRow.length / 2), lastRow.length - 2]) {
      writeFileSync(j.path, full.subarray(0, sizeBefore + cut));
      const torn = await verifyJournal(j.path);
      expect([torn.chain_consistent, torn.coverage, torn.count, torn.discarded_line_indices]).toEqual([true, "partial", 10, [10]]);
      const rep = await repairJournalTail(j.path);
      expect([rep.repaired, rep.event_count, rep.head, rep.removed_line_indices]).toEqual([true, 10, headBefore, [10]]);
      expect(Buffer.compare(readFileSync(j.path), full.subarray(0, sizeBefore))).toBe(0);
      const k = await EventJournal.resume("crash", { sddDir: dir });
      expect(k.head()).toBe(headBefore);
      k.record("e", { i: 10 });
      k.close();
      const r = await verifyJournal(j.path);
      expect([r.ok, r.count]).toEqual([true, 11]);
    }
  });
});

describe("metadata.json", () => {
  test("written at create: Python json.dumps(asdict, indent=2) bytes, no trailing newline, mode 0600", () => {
    const dir = dirs.make();
    const j = EventJournal.create("meta", {
      sddDir: dir,
      metadata: { started_at: 1727000000.1234567, git_sha: "abc", git_branch: "m\u00e4in", config_hash: "", seed_path: "/x/bernstein.yaml" },
    });
    j.close();
    const path = join(dir, "runs", "meta", "metadata.json");
    const text = readFileSync(path, "utf8");
    const py = runPython(
      `import json, sys
d = json.load(sys.stdin)
print(json.dumps(json.dumps({"run_id": "meta", "started_at": 1727000000.1234567, "git_sha": "abc", "git_branch": "m\\u00e4in", "config_hash": "", "seed_path": d}, indent=2)))`,
      "/x/bernstein.yaml",
    ) as string;
    expect(text).toBe(py);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readMetadata(join(dir, "runs", "meta"))).toEqual({
      run_id: "meta", started_at: 1727000000.1234567, git_sha: "abc", git_branch: "m\u00e4in", config_hash: "", seed_path: "/x/bernstein.yaml",
    });
    expect(metadataText({ run_id: "x", started_at: 5, git_sha: "", git_branch: "", config_hash: "", seed_path: null })).toContain('"started_at": 5.0');
  });

  test("readMetadata coerces like Python and gives null for unreadable files", () => {
    const dir = dirs.make();
    writeFileSync(join(dir, "metadata.json"), '{"started_at": "12.5", "git_sha": null, "seed_path": "", "git_branch": 3}');
    expect(readMetadata(dir)).toEqual({ run_id: basename(dir), started_at: 12.5, git_sha: "None", git_branch: "3", config_hash: "", seed_path: null });
    for (const bad of ["[]", "{", '{"started_at": "soon"}']) {
      writeFileSync(join(dir, "metadata.json"), bad);
      expect(readMetadata(dir)).toBeNull();
    }
    expect(readMetadata(dirs.make())).toBeNull();
  });

  test("journalPath is where the writer writes", () => {
    const dir = dirs.make();
    const j = EventJournal.create("p", { sddDir: dir });
    j.close();
    expect(j.path).toBe(journalPath(dir, "p"));
  });
});

describe("EventJournal.open", () => {
  test("starts a new run at genesis with metadata, resumes an existing one, never rewrites metadata", () => {
    const dir = dirs.make();
    const a = EventJournal.open("o", { sddDir: dir, metadata: { git_branch: "main" } });
    a.record("a");
    a.close();
    const metaPath = join(dir, "runs", "o", "metadata.json");
    const meta = readFileSync(metaPath, "utf8");
    expect(JSON.parse(meta).git_branch).toBe("main");
    const b = EventJournal.open("o", { sddDir: dir, metadata: { git_branch: "other" } });
    expect(b.count()).toBe(1);
    b.record("b");
    b.close();
    expect(readFileSync(metaPath, "utf8")).toBe(meta);
  });
});

describe("a new run's files appear with its first row; the row limit is the written row's (issue 29)", () => {
  test("open() of a new run creates no journal.jsonl or metadata.json until a row is written", async () => {
    const dir = dirs.make();
    const j = EventJournal.open("fresh", { sddDir: dir });
    expect(existsSync(j.path)).toBe(false);
    expect(existsSync(join(j.runDirPath, "metadata.json"))).toBe(false);
    j.record("first", { n: 1 });
    expect(existsSync(j.path)).toBe(true);
    expect(readMetadata(j.runDirPath)?.run_id).toBe("fresh");
    j.close();
    expect(await verifyJournal(j.path)).toMatchObject({ ok: true, count: 1 });
  });

  test("a rollback to before the first row removes the journal and metadata it created", async () => {
    const dir = dirs.make();
    const j = EventJournal.open("undo", { sddDir: dir });
    const start = j.mark();
    j.recordMany([{ event: "a", payload: {} }, { event: "b", payload: { x: 1 } }]);
    expect(statSync(j.path).size).toBeGreaterThan(0);
    j.rollback(start);
    expect(existsSync(j.path)).toBe(false);
    expect(existsSync(join(j.runDirPath, "metadata.json"))).toBe(false);
    // and the writer goes on from genesis
    j.record("again");
    j.close();
    expect(await verifyJournal(j.path)).toMatchObject({ ok: true, count: 1 });
  });

  test("an event whose row would pass the row limit (here 16 MiB) is refused before anything is written (row_too_large)", () => {
    const dir = dirs.make();
    const j = EventJournal.open("big", { sddDir: dir, maxRowBytes: 16 * 1024 * 1024 });
    j.record("ok");
    const before = readFileSync(j.path);
    // 5.6 M one-byte elements: an 11 MB value, a 16.8 MB row ("1, " each)
    const data = new Array(5_600_000).fill(1);
    expect(() => j.record("big", { data })).toThrow(expect.objectContaining({ code: "row_too_large", exitCode: 3 }));
    expect(() => j.recordMany([{ event: "big", payload: { data }, line: 7 }])).toThrow(
      expect.objectContaining({ code: "row_too_large", facts: expect.objectContaining({ line: 7, index: 1 }) }),
    );
    j.close();
    expect(readFileSync(j.path).equals(before)).toBe(true);
  });
});

describe("a long event's row written in pieces (issue 30)", () => {
  test("recordMany's streamed row, recordLong's and record()'s tree row are the same bytes, and verify", async () => {
    const { steppingClock } = await import("../../bench/journal-gen.ts");
    const { eventOfLine } = await import("../../src/journal/record-lines.ts");
    const el = '{"b": [1.5, 1E5, -0, "\\u00e9\\n"], "a": "R\\u00e9sum\\u00e9 \\ud83d\\ude80", "a": null}';
    const lines = [
      '{"event": "big", "data": [' + Array.from({ length: 3000 }, (_, i) => (i % 2 ? el : String(i))).join(",") + '], "k": 1}',
      '{"ts": 5, "event": "over", "rows": [' + Array.from({ length: 10000 }, (_, i) => '"s' + i + '"').join(", ") + "]}",
      '{"event":"obj","o":{' + Array.from({ length: 9000 }, (_, i) => `"k${i % 7000}":${i}`).join(",") + "}}",
    ];
    const bytesOf = (t: string) => new TextEncoder().encode(t);
    const written: Buffer[] = [];
    for (const mode of ["many", "long", "tree"] as const) {
      const dir = dirs.make();
      const j = EventJournal.open("r", { sddDir: dir, clock: steppingClock(7) });
      for (const [n, text] of lines.entries()) {
        const b = bytesOf(text);
        expect(b.length).toBeGreaterThan(1 << 16);
        if (mode === "many") j.recordMany([{ raw: b, parse: () => eventOfLine(b, n + 1), line: n + 1 }]);
        else if (mode === "long") await j.recordLong(eventOfLine(b, n + 1));
        else {
          const v = parse(text) as PyObject;
          const event = v.get("event") as string;
          v.delete("event");
          j.record(event, v);
        }
      }
      j.close();
      written.push(readFileSync(j.path));
      expect(await verifyJournal(j.path)).toMatchObject({ ok: true, count: lines.length });
    }
    expect(written[0]!.equals(written[2]!)).toBe(true);
    expect(written[1]!.equals(written[2]!)).toBe(true);
  });
});
