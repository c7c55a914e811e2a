/**
 * The codec's top-level index (indexRow's `topLevel`, what a consumer of a
 * row's members alone asks for): the JavaScript scanner records the root,
 * its keys and their values, nothing inside a container value. It must be
 * the full index with the inside left out, token for token (flags that
 * still cover the whole value, spans, members, key ids), accept and decline
 * the same rows, and decide a member value's float spelling (`spelling`)
 * as the full index does, although the floats are not on its tape.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { filesUnder, linesOf, mutationsOf } from "../helpers/row-bytes.ts";
import { indexObjectAtJs, indexRow, KeyTable, RowIndex, TOP_LEVEL_FROM } from "../../src/codec/row-index.ts";

const enc = new TextEncoder();
const full = new RowIndex();
const top = new RowIndex();
const STEP_KEYS = new KeyTable(["seq", "prev_hash", "step_hash", "input_hash", "model", "prompt", "tool_call", "tool_result", "ts"]);

/** The first difference between the full and the top-level index of b[s, e), or null. */
function difference(b: Uint8Array, s: number, e: number, keys: KeyTable): unknown {
  const a = indexObjectAtJs(b, s, e, full, keys, false);
  const t = indexObjectAtJs(b, s, e, top, keys, true);
  if (a !== t) return { accepted: [a, t] };
  if (a < 0) return null;
  if (!top.topLevel || full.topLevel) return "topLevel flag";
  if (top.members !== full.members || top.repeatedName !== full.repeatedName || top.count !== 1 + 2 * full.members) return { members: [full.members, top.members], count: top.count };
  for (let i = 0; i < top.slot.length; i++) if (top.slot[i] !== full.slot[i]) return { slot: i };
  // the root: its word and span as the full index has them, its next past the top tape
  if (top.tape[0] !== full.tape[0] || top.start(0) !== full.start(0) || top.end(0) !== full.end(0) || top.next(0) !== top.count) return { root: true };
  for (let m = 0; m < full.members; m++) {
    if (top.keyId[m] !== full.keyId[m] || top.member[m] !== 1 + 2 * m) return { member: m };
    const fk = full.member[m]!;
    for (const [ft, tt] of [
      [fk, 1 + 2 * m],
      [fk + 1, 2 + 2 * m],
    ] as const) {
      if (top.tape[4 * tt] !== full.tape[4 * ft] || top.start(tt) !== full.start(ft) || top.end(tt) !== full.end(ft) || top.next(tt) !== tt + 1) {
        return { token: tt, full: Array.from(full.tape.subarray(4 * ft, 4 * ft + 4)), top: Array.from(top.tape.subarray(4 * tt, 4 * tt + 4)) };
      }
    }
  }
  // every float decided: each member value's spelling, then the whole row's
  for (let m = 0; m < full.members; m++) {
    const fs = full.spelling(full.memberValue(m));
    const ts = top.spelling(top.memberValue(m));
    if (fs !== ts) return { spelling: m, full: fs, top: ts };
  }
  if (full.spelling(0) !== top.spelling(0)) return { rowSpelling: [full.spelling(0), top.spelling(0)] };
  return null;
}

function firstDifference(rows: Iterable<Uint8Array>, keys: KeyTable = STEP_KEYS): unknown {
  for (const row of rows) {
    const d = difference(row, 0, row.length, keys);
    if (d !== null) return { row: Buffer.from(row).toString("latin1").slice(0, 300), d };
  }
  return null;
}

/** Seeds: nested containers holding every float the scan leaves undecided, and spellings it flags. */
const SEEDS = [
  '{"tool_call":{"args":{"x":0.30000000000000004,"y":[1.7976931348623157e+308,1e-07]}},"seq":1,"tool_result":[[0.1],{"a":123456789012345.67}],"ts":1727000000.1234567}',
  '{"tool_call":{"args":{"x":0.30000000000000005,"y":[1e+16,1.0E5]}},"seq":2,"tool_result":[{"b":2,"a":1},[-0,1.50]],"model":null}',
  '{"a":{"b":[{"c":"\u00e9\u4e2d\ud83d\ude00"},[],{}]},"b":NaN,"c":-Infinity,"d":Infinity,"e":"\\uABCD\\u0008\\u001f\\u007f","f":"\x7f"}',
  '{ "z" : [1 ,\t2] ,"y":\n{"q" : 2} , "seq" : 1, "seq": 2, "\\u0061": {"x": [0.1, 5e-324]}, "\u00e9": [] }',
].map((t) => enc.encode(t));

describe("the codec's top-level index is the full index without the inside of its values", () => {
  test("every row of every fixture file, with the step and no key table", () => {
    const all: Uint8Array[] = [];
    for (const f of filesUnder(join(import.meta.dir, "..", "fixtures"), ".jsonl")) all.push(...linesOf(new Uint8Array(readFileSync(f))));
    expect(all.length).toBeGreaterThan(1000);
    expect(firstDifference(all)).toBeNull();
    expect(firstDifference(all, new KeyTable([]))).toBeNull();
  }, 60_000);

  test("every one-byte mutation of rows with nested undecided floats, foreign spellings and repeated keys", () => {
    const rows = mutationsOf(SEEDS);
    expect(rows.length).toBeGreaterThan(14_000);
    expect(firstDifference(rows)).toBeNull();
  }, 60_000);

  test("random nested floats: a value's spelling is decided as the full index decides it", () => {
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
    const rows: Uint8Array[] = [];
    for (let i = 0; i < 3000; i++) {
      const x = rnd() * 10 ** Math.floor(rnd() * 40 - 20);
      const lexeme = [String(x), x.toPrecision(17), x.toExponential(16), x.toPrecision(16)][i % 4]!;
      rows.push(enc.encode(`{"seq":${i},"tool_call":{"args":[{"v":${lexeme}}]},"tool_result":[${lexeme}],"ts":${lexeme}}`));
    }
    expect(firstDifference(rows)).toBeNull();
  });

  test("a row over TOP_LEVEL_FROM: indexRow records its top level only, and a shorter one in full", () => {
    const inner = Array.from({ length: 300_000 }, (_, i) => `${i}.5`).join(",");
    const big = enc.encode(`{"seq":1,"tool_result":[${inner},[0.30000000000000004]],"ts":1.5}`);
    expect(big.length).toBeGreaterThan(TOP_LEVEL_FROM);
    const ix = new RowIndex();
    expect(indexRow(big, 0, big.length, ix, STEP_KEYS, true)).toBe(true);
    expect({ topLevel: ix.topLevel, count: ix.count }).toEqual({ topLevel: true, count: 7 });
    expect(difference(big, 0, big.length, STEP_KEYS)).toBeNull();
    const small = enc.encode(`{"seq":1,"tool_result":[${Array.from({ length: 100 }, (_, i) => i).join(",")}]}`);
    expect(indexRow(small, 0, small.length, ix, STEP_KEYS, true)).toBe(true);
    expect({ topLevel: ix.topLevel, count: ix.count }).toEqual({ topLevel: false, count: 105 });
  });

  test("a row over TOP_LEVEL_FROM with few tokens gets the full tape (the module's, within its budget), the JavaScript scanner's word for word", () => {
    const text = "x\\u00e9 \\n ".repeat(90_000);
    const big = enc.encode(`{"seq":1,"tool_result":{"out":"${text}","lines":[1,2.5,"${text}"]},"ts":1.5}`);
    expect(big.length).toBeGreaterThan(TOP_LEVEL_FROM);
    const ix = new RowIndex();
    expect(indexRow(big, 0, big.length, ix, STEP_KEYS, true)).toBe(true);
    const js = new RowIndex();
    expect(indexObjectAtJs(big, 0, big.length, js, STEP_KEYS, false)).toBe(big.length);
    expect({ topLevel: ix.topLevel, count: ix.count }).toEqual({ topLevel: false, count: 14 });
    expect(Array.from(ix.tape.subarray(0, 4 * ix.count))).toEqual(Array.from(js.tape.subarray(0, 4 * js.count)));
    expect(Array.from(ix.member.subarray(0, ix.members))).toEqual(Array.from(js.member.subarray(0, js.members)));
    // then a dense one past the budget: the top-level tape again, from the same index
    const inner = Array.from({ length: 300_000 }, (_, i) => `${i}`).join(",");
    const dense = enc.encode(`{"seq":2,"tool_result":[${inner}]}`);
    expect(dense.length).toBeGreaterThan(TOP_LEVEL_FROM);
    expect(indexRow(dense, 0, dense.length, ix, STEP_KEYS, true)).toBe(true);
    expect({ topLevel: ix.topLevel, count: ix.count }).toEqual({ topLevel: true, count: 5 });
    expect(difference(dense, 0, dense.length, STEP_KEYS)).toBeNull();
  });
});
