/**
 * The writer's batch paths (byte-level for raw json.dumps lines, string
 * level for parsed events) write exactly the bytes of the generic
 * `record()` path, for any payload spelling; their float/round shortcuts
 * equal the exact routines.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { steppingClock } from "../../../bench/journal-gen.ts";
import { fastFloatRepr, fastRound3, recordLine } from "../../../src/journal/fast/record-row.ts";
import { heapStats } from "bun:jsc";
import { EventJournal, validateRecordInput, type RawRecordItem, type RecordItem } from "../../../src/journal/writer.ts";
import { floatRepr } from "../../../src/pyjson/float.ts";
import { parse } from "../../../src/pyjson/parse.ts";
import { pyRound } from "../../../src/pyjson/python.ts";
import type { PyObject } from "../../../src/pyjson/types.ts";
import { referenceVerdicts, tempDirs } from "../tmp.ts";
import { prng, stringToken, valueToken, withOddness } from "./rows.ts";
import { RecordRowBuilder, writeFloatRepr } from "../../../src/journal/fast/record-bytes.ts";
import { writeDecimal } from "../../../src/journal/fast/record-hasher.ts";

const dirs = tempDirs("fast-record");
afterAll(() => dirs.cleanup());

/** What `journal record` makes of an input line (null: the line is refused). */
function itemOf(text: string): RecordItem | null {
  let v;
  try {
    v = parse(text);
  } catch {
    return null;
  }
  if (!(v instanceof Map)) return null;
  const event = v.get("event");
  if (typeof event !== "string" || event === "") return null;
  const payload = new Map(v) as PyObject;
  payload.delete("event");
  try {
    validateRecordInput(event, payload);
  } catch {
    return null;
  }
  return { event, payload };
}

function inputLines(seed: number, n: number): string[] {
  const r = prng(seed);
  const out: string[] = [];
  const keys = ["agent_id", "model", "cost_usd", "tokens", "a", "Z", "é", "ts", "index", "hash_profile", "prev_hash", "event"];
  while (out.length < n) {
    const members = [stringToken(r, "event") + ": " + stringToken(r, ["tool_call", "task_claimed", "é/x"][Math.floor(r() * 3)])];
    const m = Math.floor(r() * 6);
    for (let i = 0; i < m; i++) {
      const k = keys[Math.floor(r() * keys.length)]!;
      members.push(stringToken(r, k) + (r() < 0.5 ? ": " : ":") + valueToken(r, 0));
    }
    if (r() < 0.3) members.reverse();
    const line = "{" + members.join(r() < 0.5 ? ", " : ",") + "}";
    if (itemOf(line)) out.push(line);
  }
  return out;
}

function writeWith(sdd: string, write: (j: EventJournal) => void): string {
  const j = EventJournal.create("r", { sddDir: sdd, clock: steppingClock(3), env: {} });
  try {
    write(j);
  } finally {
    j.close();
  }
  return readFileSync(j.path, "latin1");
}

describe("recordMany fast paths", () => {
  test("raw lines, parsed items and record() write byte-identical journals (3,000 seeded events)", () => {
    const lines = inputLines(77, 3000);
    const enc = new TextEncoder();
    const raw: RawRecordItem[] = lines.map((l) => ({ raw: enc.encode(l), parse: () => itemOf(l)! }));
    const parsed: RecordItem[] = lines.map((l) => itemOf(l)!);
    const viaRaw = writeWith(dirs.make(), (j) => j.recordMany(raw));
    const viaItems = writeWith(dirs.make(), (j) => j.recordMany(parsed));
    const viaRecord = writeWith(dirs.make(), (j) => {
      for (const it of parsed) j.record(it.event, it.payload);
    });
    expect(viaItems).toBe(viaRecord);
    expect(viaRaw).toBe(viaRecord);
    // ...and Python agrees the result is one intact chain
    const sdd = dirs.make();
    writeWith(sdd, (j) => j.recordMany(raw));
    const [v] = referenceVerdicts([join(sdd, "runs", "r", "journal.jsonl")]);
    expect([v!.ok, v!.count]).toEqual([true, 3000]);
  });

  test("lines as a Python producer spells them take the byte path, in any key order and spacing, nested too; the bytes are record()'s", () => {
    // ASCII keys only (an escaped key is the exact path's), every token in Python's spelling
    const r = prng(91);
    const keys = ["agent_id", "model", "cost_usd", "tokens", "files", "a", "a b", "ab", "B", "_", "~", "Z"];
    const lines = withOddness(0, () => {
      const out: string[] = [];
      while (out.length < 3000) {
        const members = [`"event": "${["tool_call", "task_claimed", "a\\u00e9\\\\x"][out.length % 3]}"`];
        const m = Math.floor(r() * 7);
        for (let i = 0; i < m; i++) members.push(`"${keys[Math.floor(r() * keys.length)]}"${r() < 0.5 ? ": " : ":"}${valueToken(r, 0)}`);
        if (r() < 0.5) members.reverse();
        const line = "{" + members.join(r() < 0.5 ? ", " : r() < 0.5 ? "," : " ,\t") + "}";
        if (itemOf(line)) out.push(line);
      }
      return out;
    });
    let fast = 0;
    const build = RecordRowBuilder.prototype.build;
    RecordRowBuilder.prototype.build = function (...args) {
      const took = build.apply(this, args);
      if (took) fast++;
      return took;
    };
    const enc = new TextEncoder();
    let viaRaw: string;
    try {
      viaRaw = writeWith(dirs.make(), (j) => j.recordMany(lines.map((l) => ({ raw: enc.encode(l), parse: () => itemOf(l)! }))));
    } finally {
      RecordRowBuilder.prototype.build = build;
    }
    const viaRecord = writeWith(dirs.make(), (j) => {
      for (const l of lines) {
        const it = itemOf(l)!;
        j.record(it.event, it.payload);
      }
    });
    expect(viaRaw).toBe(viaRecord);
    // the rest: duplicate keys (the exact path keeps the last), envelope keys among the members
    expect(fast).toBeGreaterThan(lines.length * 0.6);
  });

  test("an invalid raw line throws from parse() with every earlier line recorded", () => {
    const sdd = dirs.make();
    const j = EventJournal.create("r", { sddDir: sdd, clock: steppingClock(3), env: {} });
    const enc = new TextEncoder();
    const good = '{"event": "a", "k": 1}';
    const items: RawRecordItem[] = [good, good, "{not json"].map((l) => ({
      raw: enc.encode(l),
      parse: () => {
        const it = itemOf(l);
        if (!it) throw new Error(`bad line: ${l}`);
        return it;
      },
    }));
    expect(() => j.recordMany(items)).toThrow("bad line");
    expect(j.count()).toBe(2);
    j.close();
    expect(readFileSync(j.path, "utf8").split("\n").filter(Boolean).length).toBe(2);
  });

  test("a row's text is not kept after recordLine returns (a huge list's pieces are not marked by every later collection)", () => {
    const live = (): number => {
      Bun.gc(true);
      return heapStats().objectTypeCounts.string ?? 0;
    };
    const before = live();
    (() => {
      const data = new Array(500_000).fill(1);
      const r = recordLine("big", [["data", data]], 1, "a".repeat(64), 1727000000.5, 0.25);
      expect(r?.eventHash).toHaveLength(64);
    })();
    // the list's canonical text was a rope of one piece per element
    expect(live() - before).toBeLessThan(50_000);
  });

  test("float repr and round(x, 3) shortcuts equal the exact routines", () => {
    const r = prng(5);
    for (let i = 0; i < 20000; i++) {
      const x = r() < 0.5 ? 1.7e9 + r() * 1e8 : (r() - 0.3) * 10 ** (Math.floor(r() * 40) - 20);
      expect([x, fastFloatRepr(x)]).toEqual([x, floatRepr(x)]);
      const e = r() * 10 ** Math.floor(r() * 7);
      expect([e, fastRound3(e, pyRound)]).toEqual([e, pyRound(e, 3)]);
    }
    for (const tie of [0.0005, 0.0015, 1.0005, 2.675, 1.2345, 0.1235, 1e-4, 0, 86399.9995]) {
      expect([tie, fastRound3(tie, pyRound)]).toEqual([tie, pyRound(tie, 3)]);
      expect([tie, fastFloatRepr(tie)]).toEqual([tie, floatRepr(tie)]);
    }
  });

  test("the row's floats and index written as digits equal repr and str (elapsed_s from its thousandths)", () => {
    const r = prng(7);
    const b = new Uint8Array(64);
    const text = (n: number) => new TextDecoder().decode(b.subarray(0, n));
    const values: number[] = [0, -0, 0.001, 0.01, 0.1, 0.5, 1, 9.999, 10, 99.9, 100.05, 999999999999.999, 1e12, 1e-4, 1e-5, 1e15, 1e16, 123456789012.345, -1.5, 1727000000.1234567, NaN, Infinity];
    for (let i = 0; i < 50000; i++) {
      // round(x, 3) of times up to years, as the writer makes elapsed_s, and any double
      values.push(pyRound(r() * 10 ** Math.floor(r() * 12), 3), Math.floor(r() * 1e15) / 1000, (r() - 0.5) * 10 ** (Math.floor(r() * 40) - 20));
    }
    for (const x of values) expect([x, text(writeFloatRepr(b, 0, x))]).toEqual([x, floatRepr(x)]);
    for (const n of [0, 1, 9, 10, 99, 100, 65535, 2 ** 31, 2 ** 53 - 1, ...Array.from({ length: 2000 }, () => Math.floor(r() * 10 ** Math.floor(r() * 16)))]) {
      expect(text(writeDecimal(b, 0, n))).toBe(String(n));
    }
  });
});
