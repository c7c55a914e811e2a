/**
 * The codec's key order is Python's (`sorted` of str: code points), whatever
 * the spelling: escapes decoded, a surrogate pair one character past
 * U+FFFF. Both scanners' Unsorted flag (JavaScript `compareSpans`, the
 * module's `$cmp`) and the canonical writer's sort are held to it on keys
 * spelled as Python's writer spells them and every other way a key can be
 * spelled.
 */
import { describe, expect, test } from "bun:test";
import { CanonicalWriter } from "../../src/codec/canonical.ts";
import { compareSpans, indexObjectAtJs, indexObjectAtWasm, RowIndex, Spell } from "../../src/codec/row-index.ts";
import { prng } from "../journal/fast/rows.ts";

const enc = new TextEncoder();
/** Characters whose spellings and order tell the comparisons apart. */
const CHARS = ["a", "b", "z", "~", "\\", '"', "/", "\n", "\t", "\x01", "\x1f", "\x7f", "é", "ÿ", "Ā", "中", "\ud7ff", "\ue000", "\uffff", "🚀", "😀", "\u{10ffff}", "\udcff", "\ud800"];

/** Python's order of two strings: code points (a lone surrogate is one). */
function pythonOrder(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

const hex4 = (u: number, upper: boolean): string => "\\u" + (upper ? u.toString(16).toUpperCase() : u.toString(16)).padStart(4, "0");

/** `text` as a JSON string's body: as json.dumps spells it (`style` 0), with raw UTF-8 (1), or with needless and uppercase escapes (2). */
function spell(text: string, style: number, r: () => number): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const u = text.charCodeAt(i);
    const ch = text[i]!;
    const pair = u >= 0xd800 && u < 0xdc00 && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    if (ch === '"' || ch === "\\") out += "\\" + ch;
    else if (ch === "\n") out += style === 2 && r() < 0.5 ? hex4(u, false) : "\\n";
    else if (ch === "\t") out += "\\t";
    else if (u < 0x20 || u === 0x7f) out += hex4(u, style === 2 && r() < 0.5);
    else if (u < 0x7f) out += style === 2 && r() < 0.2 ? hex4(u, false) : ch;
    else if (style === 1 && (u & 0xf800) !== 0xd800) out += ch;
    else if (style === 1 && pair) {
      out += text.slice(i, i + 2);
      i++;
    } else {
      out += hex4(u, style === 2 && r() < 0.5);
      if (pair) out += hex4(text.charCodeAt(++i), false);
    }
  }
  return out;
}

function randomText(r: () => number): string {
  let t = "";
  const n = 1 + Math.floor(r() * 4);
  for (let i = 0; i < n; i++) t += CHARS[Math.floor(r() * CHARS.length)];
  // a lone surrogate only where JSON text can hold it (escaped): not joined to a neighbour by the encoding
  return t;
}

/** A head two keys share: up to 24 characters, mostly ASCII, now and then one of CHARS. */
function sharedHead(r: () => number): string {
  let t = "";
  const n = Math.floor(r() * 25);
  for (let i = 0; i < n; i++) t += r() < 0.9 ? "src/pkg_module0123456789"[Math.floor(r() * 24)] : CHARS[Math.floor(r() * CHARS.length)];
  return t;
}

describe("key order is Python's, by code points", () => {
  test("compareSpans, and both scanners' Unsorted flag, on 20,000 pairs of keys in every spelling", () => {
    const r = prng(20261207);
    const js = new RowIndex();
    const wasm = new RowIndex();
    let unsorted = 0;
    let escapedPairs = 0;
    for (let i = 0; i < 20_000; i++) {
      // half the pairs share a head (the module compares eight bytes at a time while they agree)
      const head = r() < 0.5 ? sharedHead(r) : "";
      const a = head + randomText(r);
      const b = r() < 0.1 ? a : head + randomText(r);
      const sa = spell(a, r() < 0.6 ? 0 : Math.floor(r() * 3), r);
      const sb = spell(b, r() < 0.6 ? 0 : Math.floor(r() * 3), r);
      // raw UTF-8 cannot hold a lone surrogate: such a spelling is not a key
      if (/[\ud800-\udfff]/u.test(sa) || /[\ud800-\udfff]/u.test(sb)) continue;
      const row = enc.encode(`{"${sa}":1,"${sb}":2}`);
      const ka = enc.encode(sa);
      const both = new Uint8Array([...ka, ...enc.encode(sb)]);
      const want = Math.sign(pythonOrder(a, b));
      expect([sa, sb, Math.sign(compareSpans(both, 0, ka.length, ka.length, both.length))]).toEqual([sa, sb, want]);
      const ej = indexObjectAtJs(row, 0, row.length, js);
      const ew = indexObjectAtWasm(row, 0, row.length, wasm);
      expect([sa, sb, ew]).toEqual([sa, sb, ej]);
      expect(ej).toBe(row.length);
      const flagged = (js.flags(0) & Spell.Unsorted) !== 0;
      expect([sa, sb, flagged]).toEqual([sa, sb, want >= 0]);
      expect([sa, sb, (wasm.flags(0) & Spell.Unsorted) !== 0]).toEqual([sa, sb, flagged]);
      if (flagged) unsorted++;
      if (sa.includes("\\") || sb.includes("\\")) escapedPairs++;
    }
    expect(unsorted).toBeGreaterThan(4000);
    expect(escapedPairs).toBeGreaterThan(8000);
  });

  test("the canonical writer sorts escaped keys as Python's json.dumps(sort_keys=True) does", () => {
    const r = prng(7);
    const ix = new RowIndex();
    for (let i = 0; i < 2000; i++) {
      const keys = new Set<string>();
      const n = 2 + Math.floor(r() * 6);
      while (keys.size < n) keys.add(randomText(r));
      const list = [...keys];
      const text = "{" + list.map((k, j) => `"${spell(k, 0, r)}":${j}`).join(",") + "}";
      const mem = new Uint8Array(2 * text.length + 64);
      const row = enc.encode(text);
      mem.set(row);
      expect(indexObjectAtJs(mem, 0, row.length, ix)).toBe(row.length);
      const cw = new CanonicalWriter(ix, mem, new DataView(mem.buffer));
      const end = cw.compact(0, 0, row.length);
      expect(end).toBeGreaterThan(0);
      const sorted = [...list].sort(pythonOrder);
      const want = "{" + sorted.map((k) => `"${spell(k, 0, r)}":${list.indexOf(k)}`).join(",") + "}";
      expect(new TextDecoder().decode(mem.subarray(row.length, end))).toBe(want);
    }
  });

  test("the canonical writer sorts maps of hundreds of keys (runs merged), and finds a repeat wherever it lies", () => {
    const r = prng(11);
    const ix = new RowIndex();
    let repeats = 0;
    for (let i = 0; i < 300; i++) {
      const keys = new Set<string>();
      const n = 17 + Math.floor(r() * 600);
      // paths sharing long heads (the sort skips the head all keys share), some with an escaped character, in half the maps among other keys
      const mixed = r() < 0.5;
      const head = ["src/pkg_", "src/pkg_0", "\\srv\\share\\", "docs/R\u00e9sum\u00e9/"][Math.floor(r() * 4)]!;
      while (keys.size < n) keys.add(mixed && r() < 0.1 ? randomText(r) : `${head}${Math.floor(r() * 9)}/module_${Math.floor(r() * 5000)}${r() < 0.1 ? "é" : ""}.py`);
      const list = [...keys];
      for (let j = list.length - 1; j > 0; j--) {
        const s = Math.floor(r() * (j + 1));
        [list[j], list[s]] = [list[s]!, list[j]!];
      }
      const repeat = r() < 0.25;
      if (repeat) {
        list.splice(Math.floor(r() * list.length), 0, list[Math.floor(r() * list.length)]!);
        repeats++;
      }
      const text = "{" + list.map((k, j) => `"${spell(k, 0, r)}":${j}`).join(",") + "}";
      const row = enc.encode(text);
      const mem = new Uint8Array(2 * row.length + 64);
      mem.set(row);
      expect(indexObjectAtJs(mem, 0, row.length, ix)).toBe(row.length);
      const end = new CanonicalWriter(ix, mem, new DataView(mem.buffer)).compact(0, 0, row.length);
      if (repeat) {
        expect(end).toBe(-1);
        continue;
      }
      const sorted = [...list].sort(pythonOrder);
      const want = "{" + sorted.map((k) => `"${spell(k, 0, r)}":${list.indexOf(k)}`).join(",") + "}";
      expect(new TextDecoder().decode(mem.subarray(row.length, end))).toBe(want);
    }
    expect(repeats).toBeGreaterThan(40);
  });

  test("an escape two keys spell alike is stepped over, but a high surrogate's, which may join the next escape", () => {
    // [x, y]: the two keys as spelled; each pair decides at or right after an escape both share
    const pairs = [
      ["\\ud83d\\ude80", "\\ud83d\\uffff"], // U+1F680 against a lone D83D and U+FFFF: the pair is the larger
      ["\\udbff\\udfff", "\\udbff\\ue000"], // U+10FFFF against a lone DBFF and U+E000
      ["\\uD83D\\uDE80", "\\uD83D\\uFFFF"], // the same, as a foreign writer spells it
      ["\\ud83d\\ude80x", "\\ud83d\\ude80y"],
      ["a\\u00e9b", "a\\u00e9c"],
      ["a\\u00e9", "a\\u00e9\\u00e9"],
      ["docs/R\\u00e9sum\\u00e9/module_1.py", "docs/R\\u00e9sum\\u00e9/module_0.py"],
      ["x\\n\\ty", "x\\n\\tz"],
      ["x\\\\u0041", "x\\\\u0042"], // an escaped backslash, then text that only looks like an escape
      ["\\u00e9\\u00e9\\u00e9~", "\\u00e9\\u00e9\\u00e9\\u007f"],
    ];
    const wasm = new RowIndex();
    for (const [x, y] of pairs) {
      for (const [sa, sb] of [[x!, y!], [y!, x!]]) {
        const want = Math.sign(pythonOrder(JSON.parse(`"${sa}"`), JSON.parse(`"${sb}"`)));
        expect(want).not.toBe(0);
        const ka = enc.encode(sa);
        const both = new Uint8Array([...ka, ...enc.encode(sb)]);
        expect([sa, sb, Math.sign(compareSpans(both, 0, ka.length, ka.length, both.length))]).toEqual([sa, sb, want]);
        const row = enc.encode(`{"${sa}":1,"${sb}":2}`);
        expect(indexObjectAtWasm(row, 0, row.length, wasm)).toBe(row.length);
        expect([sa, sb, (wasm.flags(0) & Spell.Unsorted) !== 0]).toEqual([sa, sb, want > 0]);
      }
    }
  });

  test("two spellings of one key are the same key: a duplicate, never ordered", () => {
    const pairs = [
      ["\\u00e9", "é"],
      ["\\ud83d\\ude80", "🚀"],
      ["\\u0041", "A"],
      ["\\u00E9", "\\u00e9"],
      ["\\/", "/"],
      ["\\u000a", "\\n"],
    ];
    for (const [x, y] of pairs) {
      const both = enc.encode(x! + y!);
      const nx = enc.encode(x!).length;
      expect([x, y, compareSpans(both, 0, nx, nx, both.length)]).toEqual([x, y, 0]);
    }
  });
});
