/**
 * The canonical form of a row's members, written two ways from one index:
 * CanonicalWriter (src/codec/canonical.ts) over the JavaScript scanner's
 * tape, and the module's `canonical` (row-index.wat) over its own tape, for
 * a run receipt's embedded rows. They are held to each other on rows
 * spelled every way a writer might spell them, with any two top-level
 * members left out: the same bytes, the same rows declined.
 */
import { expect, test } from "bun:test";
import { CanonicalWriter } from "../../src/codec/canonical.ts";
import { canonicalJsonOf, indexObjectAtJs, indexObjectAtWasm, RowIndex, Spell, type ByteSpan } from "../../src/codec/row-index.ts";
import { prng, randomRowLine, withOddness } from "../journal/fast/rows.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** What CanonicalWriter writes of `row`'s members but `skip` (key token indices), or null when it declines. */
function byWriter(ix: RowIndex, mem: Uint8Array, n: number, skip: number[]): string | null {
  const cw = new CanonicalWriter(ix, mem, new DataView(mem.buffer));
  const order = cw.segment(0, ix.members);
  let m = 0;
  for (let k = 0; k < ix.members; k++) if (!skip.includes(ix.member[k]!)) order[m++] = ix.member[k]!;
  if (!cw.sortKeys(0, m)) return null;
  const end = cw.members(0, m, n);
  return end < 0 ? null : dec.decode(mem.subarray(n, end));
}

/** Whether the callers take the row: Python's spelling, and no float of what is written left undecided as not Python's. */
function taken(ix: RowIndex, skip: number[]): boolean {
  if ((ix.flags(0) & (Spell.Utf8 | Spell.NotPython)) !== 0) return false;
  for (let k = 0; k < ix.members; k++) {
    if (skip.includes(ix.member[k]!)) continue;
    const v = ix.member[k]! + 1;
    if ((ix.flags(v) & Spell.FloatUndecided) !== 0 && (ix.spelling(v) & Spell.NotPython) !== 0) return false;
  }
  return true;
}

/** Both writers on `line` with members `pick` chooses left out: [writer's text, module's text] (null: declined), or null when the callers would not take the row. */
function both(line: string, pick: (ix: RowIndex) => number[]): [string | null, string | null] | null {
  const row = enc.encode(line);
  const n = row.length;
  const mem = new Uint8Array(2 * n + 64);
  mem.set(row);
  const js = new RowIndex();
  const wasm = new RowIndex();
  const ej = indexObjectAtJs(mem, 0, n, js);
  const ew = indexObjectAtWasm(row, 0, n, wasm);
  expect([line, ew]).toEqual([line, ej]);
  if (ej !== n) return null;
  const skip = pick(js);
  if (!taken(js, skip)) return null;
  const span: ByteSpan = { buf: new Uint8Array(0), start: 0, end: 0 };
  const fromModule = canonicalJsonOf(wasm, skip[0] ?? -1, skip[1] ?? -1, span) ? dec.decode(span.buf.subarray(span.start, span.end)) : null;
  return [byWriter(js, mem, n, skip), fromModule];
}

/** The key tokens of the top-level members named `names` (their first occurrence). */
const named =
  (...names: string[]) =>
  (ix: RowIndex): number[] => {
    const out: number[] = [];
    for (const name of names) {
      for (let k = 0; k < ix.members; k++) {
        const t = ix.member[k]!;
        if (dec.decode(ix.buf.subarray(ix.start(t) + 1, ix.end(t) - 1)) === name) {
          out.push(t);
          break;
        }
      }
    }
    return out;
  };

test("the module writes what CanonicalWriter writes, ts and elapsed_s left out, on 20,000 rows of every spelling", () => {
  const r = prng(20261207);
  let written = 0;
  let declined = 0;
  for (let i = 0; i < 20_000; i++) {
    const line = randomRowLine(r);
    const got = both(line, named("ts", "elapsed_s"));
    if (got === null) continue;
    expect([line, got[1]]).toEqual([line, got[0]]);
    if (got[0] === null) declined++;
    else written++;
  }
  // the rows Python's writer spells are most; repeated keys are declined by both
  expect(written).toBeGreaterThan(8000);
  expect(declined).toBeGreaterThan(50);
});

test("any two members left out, none, or one; nested objects out of order; rows spelled as Python writes them", () => {
  const r = prng(7);
  let written = 0;
  for (let i = 0; i < 10_000; i++) {
    const line = withOddness(0, () => randomRowLine(r));
    const drop = Math.floor(r() * 3);
    const got = both(line, (ix) => {
      const ks = Array.from(ix.member.subarray(0, ix.members));
      const out: number[] = [];
      while (out.length < Math.min(drop, ks.length)) out.push(ks.splice(Math.floor(r() * ks.length), 1)[0]!);
      return out;
    });
    if (got === null) continue;
    expect([line, got[1]]).toEqual([line, got[0]]);
    if (got[0] !== null) written++;
  }
  expect(written).toBeGreaterThan(3000);
});

test("an object of more keys out of order than the module sorts is left to CanonicalWriter; at the bound the module writes it", () => {
  for (const n of [2, 127, 128, 129, 600]) {
    const keys = Array.from({ length: n }, (_, i) => `k${String((i * 7919) % 1000).padStart(4, "0")}_${i}`);
    const inner = "{" + keys.map((k, i) => `"${k}": ${i}`).join(", ") + "}";
    for (const line of [`{"event": "x", "files": ${inner}}`, `{${keys.map((k, i) => `"${k}": [${i}]`).join(", ")}}`]) {
      const got = both(line, () => [])!;
      expect(got[0]).not.toBeNull();
      expect([n, got[1]]).toEqual([n, n > 128 ? null : got[0]]);
    }
  }
});

test("a key repeated at any depth, in any spelling of it, is declined by both", () => {
  for (const line of [
    '{"a": 1, "b": 2, "a": 3}',
    '{"x": {"k": 1, "j": 2, "k": 3}}',
    '{"x": [{"\\u00e9": 1, "a": 2, "\\u00e9": 3}]}',
    '{"\\ud83d\\ude80": 1, "b": 2, "\\ud83d\\ude80": 3}',
  ]) {
    expect([line, both(line, () => [])]).toEqual([line, [null, null]]);
  }
});
