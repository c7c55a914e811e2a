/**
 * The WebAssembly verify kernel (kernel.wat) takes rows only when they are
 * in Python's spelling and link and hash right; everything else it leaves
 * to the exact path. Its safety property: a
 * range verified with the kernel gives the same result as without it and
 * as the exact verifier, on rows spelled every way (canonical and not) and
 * on tampered copies. And it must actually run: rows counted as its own.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateJournal } from "../../../bench/journal-gen.ts";
import { RangeVerifier, type RangeResult, type RowTextSink } from "../../../src/journal/fast/range.ts";
import { canonical } from "../../../src/pyjson/encode.ts";
import { stitch } from "../../../src/journal/fast/stitch.ts";
import { eventHash, payloadHash } from "../../../src/journal/hash.ts";
import { classifyLine } from "../../../src/journal/reader.ts";
import { verifyJournalSync } from "../../../src/journal/verify.ts";
import { pyStr } from "../../../src/pyjson/python.ts";
import { MAX_DEPTH } from "../../../src/codec/bytes.ts";
import type { VerifyKernel } from "../../../src/journal/fast/kernel.ts";
import { FieldTable, valueAt } from "../../../src/replay/fast-row.ts";
import { holdsObject, LocatedFields } from "../../../src/replay/kernel-row.ts";
import { dumps } from "../../../src/pyjson/encode.ts";
import { tempDirs } from "../tmp.ts";
import { prng, stringToken, valueToken, type Rand } from "./rows.ts";

const dirs = tempDirs("kernel");
afterAll(() => dirs.cleanup());

const PH = "P".repeat(64);
const EH = "E".repeat(64);
const KEYS = ["agent_id", "model", "cost_usd", "tokens", "files", "a", "Z", "_", "a b", "zz", "10", "9", "event", "ts"];

/**
 * A journal whose envelope is spelled as Python spells it and whose payload
 * values are spelled every way (rows.ts), each row hashed as the exact path
 * hashes what it parses, so every row that parses is intact.
 */
function spelledJournal(path: string, r: Rand, rows: number): void {
  const spelled: { type: string; members: string[] }[] = [];
  for (let i = 0; i < rows; i++) {
    const type = r() < 0.9 ? stringToken(r, ["task_claimed", "tool_call", "é/x", 'a"b', "agent_spawned"][i % 5]) : '"t"';
    const members: string[] = [];
    const n = Math.floor(r() * 6);
    for (let k = 0; k < n; k++) {
      const key = KEYS[Math.floor(r() * (r() < 0.05 ? KEYS.length : KEYS.length - 2))]!;
      members.push(`"${key}": ${valueToken(r, 0)}`);
    }
    spelled.push({ type, members });
  }
  chainedJournal(path, spelled);
}

/** Rows of the given event types (tokens) and payload members (text), chained: each hashed as the exact path hashes what it parses. */
function chainedJournal(path: string, rows: { type: string; members: string[] }[]): void {
  const lines: string[] = [];
  let prev = "";
  let index = 0;
  for (const [i, { type, members }] of rows.entries()) {
    const head = `{"ts": 1727000000.${1000 + i}, "elapsed_s": ${i}.5, "index": ${i}, "event": ${type}, "prev_hash": "${prev}", "payload_hash": "${PH}", "event_hash": "${EH}"`;
    let line = head + members.map((m) => ", " + m).join("") + "}";
    const v = classifyLine(Buffer.from(line, "latin1"));
    if (v.kind === "row") {
      const eventType = pyStr(v.row.get("event"), "");
      const ph = payloadHash(eventType, v.row);
      const eh = eventHash(prev, eventType, ph, index++);
      line = line.replace(PH, ph).replace(EH, eh);
      prev = eh;
    }
    lines.push(line);
  }
  writeFileSync(path, lines.join("\n") + "\n", "latin1");
}

function runRange(path: string, useKernel: boolean, chunkSize?: number): RangeResult {
  const v = new RangeVerifier(1 << 18, useKernel ? "always" : "never");
  return v.run({ path, start: 0, end: statSync(path).size, isLast: true, baseIndex: 0, linksOnly: false, chunkSize });
}

/** The range result minus the diagnostics of which path took which row. */
/** A verified row's text as the Text mode hands it: its members but ts and elapsed_s, canonical. */
function rowText(line: Uint8Array): string {
  const v = classifyLine(line);
  if (v.kind !== "row") throw new Error("an exact row that is not a row");
  const row = new Map(v.row);
  row.delete("ts");
  row.delete("elapsed_s");
  return canonical(row);
}

function verdict(path: string, r: RangeResult) {
  return stitch({ path, exists: true, results: [r] });
}

function expectKernelSafe(path: string): RangeResult {
  const exact = verifyJournalSync(path);
  const withKernel = runRange(path, true);
  const without = runRange(path, false);
  expect({ path, v: verdict(path, withKernel) }).toEqual({ path, v: exact });
  expect({ path, v: verdict(path, without) }).toEqual({ path, v: exact });
  // Two tiers: every row checked is checked once, by the kernel or exactly; without it, all exactly.
  expect({ path, kernel: without.kernelRows }).toEqual({ path, kernel: 0 });
  expect({ path, checked: withKernel.kernelRows + withKernel.exactRows }).toEqual({ path, checked: without.exactRows });
  const chunked = runRange(path, true, 997);
  expect({ path, v: verdict(path, chunked) }).toEqual({ path, v: exact });
  return withKernel;
}

describe("the WebAssembly verify kernel", () => {
  test("takes every row of a journal written by our writer but the genesis row (its prev_hash is empty)", () => {
    const dir = dirs.make();
    const gen = generateJournal(join(dir, "sdd"), "gen", 200_000, 11);
    const r = expectKernelSafe(gen.path);
    const rows = readFileSync(gen.path, "utf8").split("\n").filter(Boolean).length;
    expect(r.rows).toBe(rows);
    expect(r.kernelRows).toBe(rows - 1);
    expect(r.exactRows).toBe(1);
    expect(runRange(gen.path, false).kernelRows).toBe(0);
  });

  test("by default only ranges of 32 KiB and more use it (setting it up costs more than it saves below)", () => {
    const dir = dirs.make();
    const large = generateJournal(join(dir, "sdd"), "gen", 400_000, 14).path;
    const smallEnd = readFileSync(large, "latin1").indexOf("\n", 20_000) + 1;
    const v = new RangeVerifier();
    const run = (end: number) => v.run({ path: large, start: 0, end, isLast: true, baseIndex: 0, linksOnly: false });
    expect(run(smallEnd).kernelRows).toBe(0);
    expect(run(statSync(large).size).kernelRows).toBeGreaterThan(0);
    // the same verifier switches back and forth, each scanner keeping its state apart
    expect(run(smallEnd).kernelRows).toBe(0);
    const exact = verifyJournalSync(large);
    expect(verdict(large, run(statSync(large).size))).toEqual(exact);
  });

  test("row positions past 2^32 and across a power of ten (the index digits it keeps and increments)", () => {
    const dir = dirs.make();
    for (const base of [999_999_990, 2 ** 32 + 7, 99_999_999_999_995]) {
      const lines: string[] = [];
      let prev = "ab".repeat(32);
      for (let i = 0; i < 40; i++) {
        const line = `{"ts": 1.5, "elapsed_s": 0.5, "index": ${base + i}, "event": "tick", "prev_hash": "${prev}", "payload_hash": "${PH}", "event_hash": "${EH}", "n": ${i}}`;
        const v = classifyLine(Buffer.from(line));
        if (v.kind !== "row") throw new Error("not a row");
        const ph = payloadHash("tick", v.row);
        const eh = eventHash(prev, "tick", ph, base + i);
        lines.push(line.replace(PH, ph).replace(EH, eh));
        prev = eh;
      }
      const path = join(dir, `base-${base}.jsonl`);
      writeFileSync(path, lines.join("\n") + "\n");
      const task = { path, start: 0, end: statSync(path).size, isLast: true, baseIndex: base, linksOnly: false };
      const withKernel = new RangeVerifier(1 << 18, "always").run(task);
      expect({ base, failure: withKernel.failure, rows: withKernel.rows, kernelRows: withKernel.kernelRows }).toEqual({
        base,
        failure: null,
        rows: 40,
        kernelRows: 40,
      });
      expect(new RangeVerifier(1 << 18, "never").run(task).failure).toBeNull();
      // one position off: every row fails, the kernel takes none
      const off = new RangeVerifier(1 << 18, "always").run({ ...task, baseIndex: base + 1 });
      expect([off.failure?.local, off.kernelRows]).toEqual([0, 0]);
    }
  });

  test("rows spelled every way: same verdict as without it and as the exact verifier", () => {
    const dir = dirs.make();
    let kernelRows = 0;
    let fastRows = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const path = join(dir, `spelled-${seed}.jsonl`);
      spelledJournal(path, prng(seed), 60);
      const r = expectKernelSafe(path);
      kernelRows += r.kernelRows;
      fastRows += r.fastRows;
    }
    // The kernel ran on a good share of the rows (the rest are not in fast form).
    expect(kernelRows).toBeGreaterThan(500);
    expect(fastRows).toBeGreaterThanOrEqual(kernelRows);
  }, 30_000);

  test("Text mode: the same verdicts, and each verified row handed on in order, a kernel row as its text (its members but ts and elapsed_s, canonical)", () => {
    const dir = dirs.make();
    let kernelTexts = 0;
    for (let seed = 41; seed <= 70; seed++) {
      const path = join(dir, `text-${seed}.jsonl`);
      spelledJournal(path, prng(seed), 60);
      // the reference: every row's canonical text without ts and elapsed_s, up to the first that fails to verify
      const exact = verifyJournalSync(path);
      const verified = exact.divergent_index ?? exact.count;
      const want: string[] = [];
      for (const line of readFileSync(path, "latin1").split("\n")) {
        if (classifyLine(Buffer.from(line, "latin1")).kind !== "row" || want.length >= verified) continue;
        want.push(rowText(Buffer.from(line, "latin1")));
      }
      for (const chunkSize of [undefined, 997]) {
        const got: string[] = [];
        const sink: RowTextSink = {
          kernelText(u8, s, e, rows) {
            const texts = new TextDecoder().decode(u8.subarray(s, e)).split("\n");
            expect(texts.length).toBe(rows + 1);
            got.push(...texts.slice(0, rows));
            kernelTexts += rows;
          },
          exactRow(line) {
            got.push(rowText(line));
          },
        };
        const verifier = new RangeVerifier(1 << 18, "always");
        verifier.rowText = sink;
        const r = verifier.run({ path, start: 0, end: statSync(path).size, isLast: true, baseIndex: 0, linksOnly: false, chunkSize });
        expect({ path, v: verdict(path, r) }).toEqual({ path, v: exact });
        // the row that fails, and those past it (counted), are never handed on
        expect({ path, texts: got }).toEqual({ path, texts: want });
      }
    }
    expect(kernelTexts).toBeGreaterThan(500);
  }, 30_000);

  test("Text mode with a reader of each row (kernelRow): the same verdicts and texts; each kernel row handed as it is taken, its line and its fields located", () => {
    const dir = dirs.make();
    const table = new FieldTable(["event", "agent_id", "model", "cost_usd", "tokens", "files", "a b", "10", "index", "event_hash", "prev_hash", "ts", "elapsed_s"]);
    const located = new LocatedFields(table);
    let alone = 0;
    let checked = 0;
    for (let seed = 71; seed <= 100; seed++) {
      const path = join(dir, `alone-${seed}.jsonl`);
      spelledJournal(path, prng(seed), 60);
      const exact = verifyJournalSync(path);
      const verified = exact.divergent_index ?? exact.count;
      // the reference: each verified row's line, in order, and the texts the bulk Text mode hands
      const lines = readFileSync(path, "latin1").split("\n").filter((l) => classifyLine(Buffer.from(l, "latin1")).kind === "row").slice(0, verified);
      const texts = (useRow: boolean, chunkSize: number | undefined) => {
        const handed: string[] = [];
        const got: string[] = [];
        let rowsAlone = 0;
        const sink: RowTextSink = {
          kernelText(u8, s, e, rows) {
            const t = new TextDecoder().decode(u8.subarray(s, e)).split("\n");
            expect(t.length).toBe(rows + 1);
            got.push(...t.slice(0, rows));
          },
          exactRow(line) {
            got.push(rowText(line));
            handed.push(Buffer.from(line).toString("latin1"));
          },
          ...(useRow
            ? {
                kernelRow(k: VerifyKernel, s: number, e: number) {
                  const line = Buffer.from(k.lines.subarray(s, e)).toString("latin1").replace(/\r?\n$|\r$/, "");
                  handed.push(line);
                  rowsAlone++;
                  // its fields, from the kernel's tables: each the parsed row's (a nested object is the kernel's sorted text: not compared)
                  const v = classifyLine(Buffer.from(line, "latin1"));
                  if (v.kind !== "row") throw new Error("a kernel row that is not a row");
                  located.locate(k.u8, k.i32, k.membersAt, k.info);
                  for (const [slot, name] of table.names.entries()) {
                    const fs = located.fieldS[slot]!;
                    expect({ line, name, has: fs >= 0 }).toEqual({ line, name, has: v.row.has(name) });
                    if (fs < 0 || holdsObject(located.mem, fs, located.fieldE[slot]!)) continue;
                    expect({ line, name, value: dumps(valueAt(located.mem, fs, located.fieldE[slot]!)) }).toEqual({ line, name, value: dumps(v.row.get(name)!) });
                    checked++;
                  }
                },
              }
            : {}),
        };
        const verifier = new RangeVerifier(1 << 18, "always");
        verifier.rowText = sink;
        const r = verifier.run({ path, start: 0, end: statSync(path).size, isLast: true, baseIndex: 0, linksOnly: false, chunkSize });
        expect({ path, v: verdict(path, r) }).toEqual({ path, v: exact });
        alone += rowsAlone;
        return { got, handed, kernelRows: r.kernelRows, rowsAlone };
      };
      for (const chunkSize of [undefined, 997]) {
        const bulk = texts(false, chunkSize);
        const one = texts(true, chunkSize);
        expect({ path, texts: one.got }).toEqual({ path, texts: bulk.got });
        // every verified row handed once, in file order: the kernel's as they are taken, the others from the exact path
        expect({ path, lines: one.handed }).toEqual({ path, lines });
        expect(one.rowsAlone).toBe(one.kernelRows);
      }
    }
    expect(alone).toBeGreaterThan(500);
    expect(checked).toBeGreaterThan(5000);
  }, 60_000);

  test("nesting at the codec's bound: rows to MAX_DEPTH taken, deeper ones exact, the same verdicts", () => {
    const dir = dirs.make();
    // the row's object is depth 1, a payload value 2: n containers nested in it make the row n + 1 deep
    const deep = (n: number, i: number): string[] => [
      `"d": ${"[".repeat(n)}${i}${"]".repeat(n)}`,
      `"o": ${'{"z": 1, "a": '.repeat(n)}"caf\\u00e9 ${i}"${"}".repeat(n)}`,
      `"m": ${"[".repeat(n - 2)}{"b": [1.5, "x"], "a": 0.1}${"]".repeat(n - 2)}`,
    ];
    const depths = [MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 40];
    const rows = [{ type: '"run_started"', members: ['"run_id": "r"'] }];
    for (let i = 0; i < 24; i++) rows.push({ type: '"tool_call"', members: [`"agent_id": "a-${i}"`, deep(depths[i % 4]!, i)[i % 3]!] });
    const path = join(dir, "deep.jsonl");
    chainedJournal(path, rows);
    const r = expectKernelSafe(path);
    expect(r.failure).toBeNull();
    // none nested past the bound (MAX_DEPTH containers and more: half of them); every one within it but those of
    // objects a thousand deep (two members open at each level fill the kernel's member table: the exact path's)
    const arrays = rows.filter((_, i) => i > 0 && (i - 1) % 4 < 2 && (i - 1) % 3 !== 1).length;
    expect(arrays).toBe(8);
    expect(r.kernelRows).toBeGreaterThanOrEqual(arrays);
    expect(r.kernelRows).toBeLessThanOrEqual(12);
    // a deep value edited in three of the taken rows, one variant each (lines 1, 6, 10): the same failure both ways
    const text = readFileSync(path, "latin1").split("\n");
    for (const at of [1, 6, 10]) {
      const edited = [...text];
      edited[at] = edited[at]!.replace(/(\d)(\]+,? ?)/, (_, d: string, tail: string) => String((Number(d) + 1) % 10) + tail).replace("caf\\u00e9", "caf\\u00e8").replace("0.1}", "0.2}");
      const tampered = join(dir, `deep-${at}.jsonl`);
      writeFileSync(tampered, edited.join("\n"), "latin1");
      expect(expectKernelSafe(tampered).failure).not.toBeNull();
    }
  });

  test("tampered copies: single byte edits anywhere in a row, and junk numbers in the envelope", () => {
    const dir = dirs.make();
    const gen = generateJournal(join(dir, "sdd"), "gen", 40_000, 12);
    const text = readFileSync(gen.path, "latin1");
    const r = prng(77);
    const edits = ["0", "9", "a", "f", " ", '"', "\\", ",", "}", "{", "[", "]", ":", "e", "E", ".", "-", "+", "x", "\t", "\u00e9", "\x7f", "\x01"];
    for (let t = 0; t < 40; t++) {
      const bytes = Buffer.from(text, "latin1");
      // past the first line, so the kernel is the one that meets the edit
      const first = text.indexOf("\n") + 1;
      const at = first + Math.floor(r() * (bytes.length - first - 1));
      bytes[at] = edits[Math.floor(r() * edits.length)]!.charCodeAt(0);
      const path = join(dir, `edit-${t}.jsonl`);
      writeFileSync(path, bytes);
      expectKernelSafe(path);
    }
    const lines = text.split("\n").filter(Boolean);
    const junk = ["1.2.3", "01", "-", "1e", "NaN", "1E5", "--1", "1.", "0x10", "1e+"];
    junk.forEach((j, t) => {
      const copy = [...lines];
      const i = 3 + t;
      const field = ["ts", "elapsed_s", "index"][t % 3]!;
      copy[i] = copy[i]!.replace(new RegExp(`"${field}": [^,]+`), `"${field}": ${j}`);
      const path = join(dir, `junk-${t}.jsonl`);
      writeFileSync(path, copy.join("\n") + "\n");
      expectKernelSafe(path);
    });
  }, 30_000);
});
