/**
 * The codec's two row scanners against each other: the WebAssembly one
 * (src/codec/row-index.wat) must write the JavaScript one's tape word for
 * word, the same top-level members, key ids, slots and repeated-name flag,
 * and decline exactly the rows it declines, for every row: every fixture
 * row, rows of every bench journal shape, every one-byte mutation of seed
 * rows, nesting and integers at the limits, every escape form and every
 * kind of invalid UTF-8. Rows are also scanned where they sit inside a
 * larger buffer (spans are offsets into the caller's buffer).
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateJournal, isPythonShape, SHAPES } from "../../bench/journal-gen.ts";
import { indexObjectAt, indexObjectAtJs, indexObjectAtWasm, indexRow, KeyTable, RowIndex, Spell } from "../../src/codec/row-index.ts";
import { MAX_DEPTH } from "../../src/codec/bytes.ts";
import { DEFAULT_MAX_DEPTH } from "../../src/pyjson/parse.ts";
import { pythonAvailable } from "../../tools/fuzz/python.ts";
import { filesUnder, linesOf, mutationsOf } from "../helpers/row-bytes.ts";

const enc = new TextEncoder();
const js = new RowIndex();
const wasm = new RowIndex();
const ENVELOPE = new KeyTable(["timestamp", "event_type", "payload", "index", "prev_hash", "event_hash", "payload_hash", "ts", "event"]);
const NONE = new KeyTable([]);

/** What a scan left in an index, as one comparable value. */
function state(ix: RowIndex, end: number): unknown {
  if (end < 0) return end;
  return {
    end,
    rowEnd: ix.rowEnd,
    tape: Array.from(ix.tape.subarray(0, 4 * ix.count)),
    member: Array.from(ix.member.subarray(0, ix.members)),
    keyId: Array.from(ix.keyId.subarray(0, ix.members)),
    slot: Array.from(ix.slot),
    repeated: ix.repeatedName,
  };
}

/** The first row (of `rows`) on which the scanners differ, with both answers; null when none. */
function firstDifference(rows: Iterable<Uint8Array>, keys: KeyTable = ENVELOPE): unknown {
  for (const row of rows) {
    for (const [b, s, e] of placements(row)) {
      const a = indexObjectAtJs(b, s, e, js, keys);
      const w = indexObjectAtWasm(b, s, e, wasm, keys);
      if (a !== w || (a >= 0 && !sameScan(js, wasm))) {
        return { row: Buffer.from(row).toString("latin1").slice(0, 300), at: s, js: state(js, a), wasm: state(wasm, w) };
      }
    }
  }
  return null;
}

/** A row on its own, and inside a larger buffer (bytes before it, and after its bound). */
function placements(row: Uint8Array): [Uint8Array, number, number][] {
  const framed = new Uint8Array(row.length + 10);
  framed.fill(0x20, 0, 7);
  framed.set(row, 7);
  framed.set([0x7d, 0x0a, 0x22], row.length + 7); // bytes past the bound must not be read as the row's
  return [
    [row, 0, row.length],
    [framed, 7, 7 + row.length],
  ];
}

function sameScan(a: RowIndex, b: RowIndex): boolean {
  if (a.count !== b.count || a.members !== b.members || a.repeatedName !== b.repeatedName || a.rowEnd !== b.rowEnd) return false;
  for (let i = 0; i < 4 * a.count; i++) if (a.tape[i] !== b.tape[i]) return false;
  for (let m = 0; m < a.members; m++) if (a.member[m] !== b.member[m] || a.keyId[m] !== b.keyId[m]) return false;
  for (let i = 0; i < a.slot.length; i++) if (a.slot[i] !== b.slot[i]) return false;
  return true;
}

const FIXTURES = join(import.meta.dir, "..", "fixtures");

/** Seed rows for the mutations: every spelling the scanners tell apart. */
const SEEDS = [
  '{"event_type": "task_completed", "index": 3, "payload": {"a": [1, -0, 2.5, 1e5, 1.50, 0.00001, 123456789012345.6, true, false, null], "s": "x\\u00e9\\/\\n\\"y\\\\"}, "ts": 1727000000.1234567}',
  '{"a":{"b":[{"c":"\u00e9\u4e2d\ud83d\ude00"},[],{}]},"b":NaN,"c":-Infinity,"d":Infinity,"e":"\\uABCD\\u0008\\u001f\\u007f\\ud83d\\ude00","f":"\x7f"}',
  '{ "z" : 1 ,\t"y":\n2 , "event" : "a", "event": "b", "\\u0061": "c", "\u00e9": 0 }',
  '{"payload_hash":"' + "ab".repeat(32) + '","prev_hash":"' + "0".repeat(64) + '","index":12,"timestamp":"2026-01-01T00:00:00Z","event_type":"x","event_hash":"' + "f".repeat(64) + '"}',
].map((t) => enc.encode(t));

function rowOf(text: string): Uint8Array {
  return enc.encode(text);
}

function bytesRow(prefix: string, middle: number[], suffix: string): Uint8Array {
  return new Uint8Array([...enc.encode(prefix), ...middle, ...enc.encode(suffix)]);
}

describe("the WebAssembly row scanner writes the JavaScript scanner's index", () => {
  test("every row of every fixture file", () => {
    let rows = 0;
    const all: Uint8Array[] = [];
    for (const ext of [".jsonl", ".json"]) {
      for (const f of filesUnder(FIXTURES, ext)) {
        const lines = ext === ".json" ? [new Uint8Array(readFileSync(f))] : linesOf(new Uint8Array(readFileSync(f)));
        for (const l of lines) all.push(l);
      }
    }
    rows = all.length;
    expect(rows).toBeGreaterThan(1000);
    expect(firstDifference(all)).toBeNull();
    // and the fixtures' step-journal and envelope keys alike
    expect(firstDifference(all, NONE)).toBeNull();
  }, 60_000);

  const shapes = SHAPES.filter((s) => !isPythonShape(s) || pythonAvailable());
  test(`rows of every bench journal shape (${shapes.join(", ")})`, () => {
    const dir = mkdtempSync(join(tmpdir(), "row-index-wasm-"));
    try {
      for (const shape of shapes) {
        const { path, rows } = generateJournal(dir, `r-${shape}`, shape === "large-rows" ? 3e6 : 1.5e6, 8, shape);
        // a CR before the LF (the windows shape's CR LF) is part of the line's break, not of its row
        const lines = linesOf(new Uint8Array(readFileSync(path))).map((l) => (l[l.length - 1] === 0x0d ? l.subarray(0, l.length - 1) : l));
        expect(lines.length).toBe(rows);
        let taken = 0;
        for (const l of lines) if (indexObjectAtWasm(l, 0, l.length, wasm, ENVELOPE) === l.length) taken++;
        expect({ shape, taken }).toEqual({ shape, taken: rows });
        expect(firstDifference(lines)).toBeNull();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  test("every one-byte flip, deletion, insertion and truncation of the seed rows", () => {
    const rows = mutationsOf(SEEDS);
    expect(rows.length).toBeGreaterThan(20_000);
    expect(firstDifference(rows)).toBeNull();
  }, 60_000);

  test("nesting at the depth limit, either side of it", () => {
    const rows: Uint8Array[] = [];
    for (const depth of [62, 63, 64, 65, 66, 200, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 2, 400]) {
      // depth counts the row's own object as 1
      rows.push(rowOf('{"a":' + "[".repeat(depth - 1) + "]".repeat(depth - 1) + "}"));
      rows.push(rowOf("{" + '"a":{'.repeat(depth - 1) + "}".repeat(depth) ));
      rows.push(rowOf('{"a":' + '[{"b":'.repeat(Math.floor((depth - 1) / 2)) + "1" + "}]".repeat(Math.floor((depth - 1) / 2)) + "}"));
      rows.push(rowOf('{"a":' + "[".repeat(depth - 1) + "]".repeat(depth - 2) + "}")); // unclosed
    }
    expect(firstDifference(rows)).toBeNull();
    // the limit itself: MAX_DEPTH taken, one more declined, by both; it is the exact reader's own
    expect(MAX_DEPTH).toBe(DEFAULT_MAX_DEPTH);
    const at = rowOf('{"a":' + "[".repeat(MAX_DEPTH - 1) + "]".repeat(MAX_DEPTH - 1) + "}");
    const past = rowOf('{"a":' + "[".repeat(MAX_DEPTH) + "]".repeat(MAX_DEPTH) + "}");
    expect(indexObjectAtWasm(at, 0, at.length, wasm)).toBe(at.length);
    expect(indexObjectAtWasm(past, 0, past.length, wasm)).toBe(-1);
  });

  test("integers and floats at the digit limits", () => {
    const rows: Uint8Array[] = [];
    for (const n of [1, 15, 16, 17, 31, 32, 33, 4299, 4300, 4301, 5000]) {
      const digits = "9".repeat(n);
      for (const lexeme of [digits, "-" + digits, "1" + "0".repeat(n - 1), digits + ".5", "0." + digits, digits + ".0", digits + "e5", "-0." + "0".repeat(n) + "1"]) {
        rows.push(rowOf(`{"n":${lexeme}}`), rowOf(`{"n":[${lexeme},${lexeme}]}`));
      }
    }
    for (const lexeme of ["0", "-0", "-0.0", "0.0", "1.0", "1.5", "1.50", "0.0001", "0.00001", "1e16", "1E5", "1e+5", "1e-5", "1.5e300", "1e400", "01", "1.", ".5", "-", "1e", "1e+", "123456789012345.6", "1234567890123456.7", "10000000000000000.0", "1000000000000000.0"]) {
      rows.push(rowOf(`{"n":${lexeme}}`), rowOf(`{"n": ${lexeme} }`));
    }
    expect(firstDifference(rows)).toBeNull();
    const limit = rowOf(`{"n":-${"9".repeat(4300)}}`);
    const over = rowOf(`{"n":${"9".repeat(4301)}}`);
    expect(indexObjectAtWasm(limit, 0, limit.length, wasm)).toBe(limit.length);
    expect(indexObjectAtWasm(over, 0, over.length, wasm)).toBe(-1);
  });

  test("every escape form, valid and not, in keys and values", () => {
    const escapes: string[] = ['\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\x", "\\u", "\\u1", "\\u12", "\\u123", "\\u12g4", "\\U0041", "\\"];
    for (let v = 0; v < 0x80; v++) {
      const h = v.toString(16).padStart(4, "0");
      escapes.push(`\\u${h}`, `\\u${h.toUpperCase()}`);
    }
    for (const h of ["00e9", "00E9", "ffff", "FFFF", "d800", "dfff", "D83D\\uDE00", "d83d\\ude00", "abcd", "ABcd", "aBcD"]) escapes.push(`\\u${h}`);
    const rows: Uint8Array[] = [];
    for (const x of escapes) {
      rows.push(rowOf(`{"a":"${x}"}`), rowOf(`{"a${x}":1}`), rowOf(`{"a":"p${x}q","b":["${x}${x}"]}`), rowOf(`{"a":"${x}`));
    }
    expect(firstDifference(rows)).toBeNull();
    const upper = rowOf('{"a":"\\u00E9"}');
    indexObjectAtWasm(upper, 0, upper.length, wasm);
    expect(wasm.flags(2) & Spell.NotPython).toBe(Spell.NotPython);
  });

  test("raw bytes in strings: every control byte, DEL, and each kind of invalid UTF-8", () => {
    const seqs: number[][] = [];
    for (let c = 0; c < 0x20; c++) seqs.push([c]);
    seqs.push([0x7f]);
    for (let c = 0x80; c < 0x100; c++) seqs.push([c]); // every lone byte >= 0x80: continuation bytes, leads without their tail
    seqs.push(
      [0xc0, 0x80], [0xc1, 0xbf], [0xc2, 0x80], [0xdf, 0xbf], [0xc3, 0x28], // 2-byte: overlong, lowest, highest, bad tail
      [0xe0, 0x80, 0x80], [0xe0, 0x9f, 0xbf], [0xe0, 0xa0, 0x80], [0xed, 0x9f, 0xbf], [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf], [0xef, 0xbf, 0xbf], [0xe4, 0xb8], [0xe4, 0x28, 0xad],
      [0xf0, 0x80, 0x80, 0x80], [0xf0, 0x8f, 0xbf, 0xbf], [0xf0, 0x90, 0x80, 0x80], [0xf4, 0x8f, 0xbf, 0xbf], [0xf4, 0x90, 0x80, 0x80], [0xf5, 0x80, 0x80, 0x80], [0xff, 0xfe],
      [0xf0, 0x9f, 0x98], [0xf0, 0x9f], [0xf0],
    );
    const rows: Uint8Array[] = [];
    for (const seq of seqs) {
      rows.push(bytesRow('{"a":"', seq, '"}'), bytesRow('{"', seq, '":1}'), bytesRow('{"a":"x', seq, ""), bytesRow('{"a":"', seq, ""), bytesRow('{"a":', seq, "}"));
    }
    expect(firstDifference(rows)).toBeNull();
  });

  test("whitespace spellings, repeated and unsorted keys, literals and their truncations", () => {
    const texts = [
      '{"a":1,"b":2}', '{"a": 1, "b": 2}', '{"a" : 1}', '{ "a":1 }', '{"a":1 ,"b":2}', '{"a":1,  "b":2}', '{"a":\t1}', '{"a":1,\n"b":2}', '{"a":[1 ,2]}', '{"a":[ 1,2 ]}',
      '{"b":1,"a":2}', '{"a":1,"a":2}', '{"ab":1,"a":2}', '{"a":1,"ab":2}', '{"\u00e9":1,"z":2}', '{"event":1,"event":2,"index":3}',
      '{"a":true}', '{"a":tru}', '{"a":truex}', '{"a":false}', '{"a":fals}', '{"a":null}', '{"a":nul}', '{"a":NaN}', '{"a":NaNa}', '{"a":Na}', '{"a":Infinity}', '{"a":Infinit}', '{"a":-Infinity}', '{"a":-Inf}', '{"a":-I}',
      "{}", "{ }", "{", "}", "[]", '{"a"}', '{"a":}', '{"a":1,}', '{,"a":1}', '{"a":1}}', '{"a":1} ', ' {"a":1}', "",
    ];
    expect(firstDifference(texts.map(rowOf))).toBeNull();
  });

  test("rows of many tokens and megabyte rows (the module grows its memory), scanned repeatedly into one index", () => {
    const rows = [
      rowOf(`{"a":[${Array.from({ length: 300_000 }, (_, i) => i % 10).join(",")}]}`),
      rowOf(`{"a":"${"x".repeat(3_000_000)}","b":[${'{"c":1.5,"d":"\\u00e9"},'.repeat(40_000)}{}]}`),
      rowOf('{"small":1}'),
      // top-level members either side of what the module writes out (the rest are read off the tape)
      ...[4095, 4096, 4097, 5000].map((n) => rowOf(`{${Array.from({ length: n - 1 }, (_, i) => `"k${i}":[${i}]`).join(",")},"event":"x"}`)),
    ];
    expect(firstDifference(rows)).toBeNull();
    expect(firstDifference(rows.slice().reverse())).toBeNull();
    expect(firstDifference(rows, NONE)).toBeNull();
  }, 60_000);

  test("indexRow and indexObjectAt answer alike on both sides of the scanner switch, and the index stays usable", () => {
    const ix = new RowIndex();
    for (const pad of [0, 100, 200, 250, 260, 300, 1000]) {
      const text = ` {"event": "a", "x": "${"y".repeat(pad)}", "ts": 1.5, "event": "b"} `;
      const b = rowOf(text);
      expect(indexRow(b, 0, b.length, ix, ENVELOPE)).toBe(true);
      expect(ix.repeatedName).toBe(true);
      expect(ix.plainText(ix.valueOf(ENVELOPE.names.indexOf("event") + 1))).toBe("b");
      expect(ix.spelling(0) & Spell.FloatUndecided).toBe(0);
      const inner = b.indexOf(0x7b);
      expect(indexObjectAt(b, inner, b.length - 1, ix, ENVELOPE)).toBe(b.length - 1);
      expect(indexObjectAtJs(b, inner, b.length - 1, js, ENVELOPE)).toBe(b.length - 1);
      expect(sameScan(ix, js)).toBe(true);
    }
  });
});

describe("a released WebAssembly scanner", () => {
  test("serves the next index, which reads its rows as a fresh one does (a scanner with other keys loaded included)", () => {
    const row = enc.encode(JSON.stringify({ ts: 1.5, event: "tool_call", payload: { k: "v".repeat(300), n: [1, 2.5, null] }, index: 3 }));
    const first = new RowIndex();
    expect(indexObjectAtWasm(row, 0, row.length, first, ENVELOPE)).toBe(row.length);
    const scanner = first.wasm;
    expect(scanner).toBeDefined();
    first.release();
    expect(first.wasm).toBeUndefined();
    const next = new RowIndex();
    const fresh = new RowIndex();
    for (const keys of [NONE, ENVELOPE]) {
      const a = indexObjectAtWasm(row, 0, row.length, next, keys);
      const b = indexObjectAtJs(row, 0, row.length, fresh, keys);
      expect(state(next, a)).toEqual(state(fresh, b));
    }
    expect(next.wasm).toBe(scanner);
    // an index scans again after releasing (a new scanner, or the same one back)
    next.release();
    expect(indexObjectAtWasm(row, 0, row.length, first, ENVELOPE)).toBe(row.length);
  });
});
