/**
 * The codec's row index (src/codec/row-index.ts) against the exact
 * reference (pyjson, itself held to Python's json module): it takes every
 * object the reference parses (but nesting past its depth or an integer
 * Python will not convert), never one the reference refuses, its spans
 * hold the reference's values, and its spelling flags never claim a
 * spelling the bytes do not have.
 */
import { describe, expect, test } from "bun:test";
import { canonical, dumps, isPyObject, parse, type PyValue } from "../../src/pyjson/index.ts";
import { indexRow, isPythonFloat, KeyTable, NOT_COMPACT_CANONICAL, NOT_PYTHON_DEFAULT, RowIndex, Spell, stringCut, Tok } from "../../src/codec/row-index.ts";
import { floatRepr, isFloatRepr } from "../../src/pyjson/float.ts";
import { Gen } from "../pyjson/gen.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
const ix = new RowIndex();
const KEYS = new KeyTable(["event", "index", "ts"]);

function documents(seed: number, n: number): string[] {
  const g = new Gen(seed);
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(dec.decode(enc.encode(g.ws() + g.objectText(0, 1) + g.ws())));
  return out;
}

/** Python writes these three spellings; the flags must say which one a row is in. */
function writerSpellings(seed: number, n: number): { text: string; form: "default" | "canonical" | "raw" }[] {
  const out: { text: string; form: "default" | "canonical" | "raw" }[] = [];
  for (const t of documents(seed, n)) {
    let v: PyValue;
    try {
      v = parse(t);
    } catch {
      continue;
    }
    out.push({ text: dumps(v, {}), form: "default" });
    out.push({ text: canonical(v), form: "canonical" });
    out.push({ text: dumps(v, { ensureAscii: false }), form: "raw" });
  }
  return out;
}

function mutants(seed: number, n: number): string[] {
  const g = new Gen(seed);
  const junk = ['"', "\\", "{", "}", "[", "]", ",", ":", "\u0001", "\\u12", "\\x", "NaN", "-", "1e", "0.", "\ufeff", " ", "\n", "\u00e9", "\\/"];
  // through UTF-8 again: a cut may split a surrogate pair, and a row is bytes
  return documents(seed + 1, n).map((d) => dec.decode(enc.encode(mutate(d))));
  function mutate(d: string): string {
    const cut = g.int(d.length + 1);
    switch (g.int(4)) {
      case 0: return d.slice(0, cut);
      case 1: return d.slice(0, cut) + g.pick(junk) + d.slice(cut);
      case 2: return d.slice(0, cut) + d.slice(cut + 1 + g.int(3));
      default: return g.pick(junk) + d;
    }
  }
}

function reference(text: string): PyValue | Error {
  try {
    return parse(text);
  } catch (err) {
    return err as Error;
  }
}

/** Depth of nesting and the longest integer lexeme: the two things the codec declines although Python takes them. */
function beyondCodec(text: string): boolean {
  let depth = 0;
  let max = 0;
  let inStr = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inStr) {
      if (c === "\\") i++;
      else if (c === '"') inStr = false;
    } else if (c === '"') inStr = true;
    else if (c === "{" || c === "[") max = Math.max(max, ++depth);
    else if (c === "}" || c === "]") depth--;
  }
  return max > 64 || /\d{4301}/.test(text);
}

/** Keys in the whole tree, counting repeats (a repeated key makes the parsed tree smaller than the text). */
function keyTokens(): number {
  let n = 0;
  for (let t = 0; t < ix.count; t++) if (ix.kind(t) === Tok.Key) n++;
  return n;
}
function treeKeys(v: PyValue): number {
  if (isPyObject(v)) {
    let n = v.size;
    for (const x of v.values()) n += treeKeys(x);
    return n;
  }
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + treeKeys(x), 0);
  return 0;
}

describe("row index vs the exact reference", () => {
  test("takes exactly the objects the reference parses (depth and huge ints aside), and its spans hold the same values", () => {
    const bad: unknown[] = [];
    for (const text of [...documents(28001, 2500), ...mutants(28002, 2500)]) {
      const b = enc.encode(text);
      const took = indexRow(b, 0, b.length, ix, KEYS);
      const ref = reference(text);
      const refObject = !(ref instanceof Error) && isPyObject(ref);
      if (took && !refObject) bad.push({ text, why: "taken, reference refuses" });
      else if (!took && refObject && !beyondCodec(text)) bad.push({ text, why: "declined a row the reference parses" });
      if (!took || !refObject) continue;
      const row = ref as Map<string, PyValue>;
      // every member's key and value spans decode to the reference's
      const seen = new Map<string, string>();
      for (let m = 0; m < ix.members; m++) {
        const k = ix.member[m]!;
        const key = parse(dec.decode(b.subarray(ix.start(k), ix.end(k)))) as string;
        const v = k + 1;
        seen.set(key, canonical(parse(dec.decode(b.subarray(ix.start(v), ix.end(v))))));
        const id = ix.keyId[m]!;
        if ((id === 0) !== !KEYS.names.includes(key)) bad.push({ text, why: `key id of ${key}` });
      }
      for (const [key, value] of row) if (seen.get(key) !== canonical(value)) bad.push({ text, why: `member ${key}` });
      if (bad.length > 5) break;
    }
    expect(bad).toEqual([]);
  }, 60_000);

  test("the flags tell Python's three writer spellings apart and never claim a spelling the bytes lack", () => {
    const bad: unknown[] = [];
    for (const { text, form } of writerSpellings(28003, 1500)) {
      const b = enc.encode(text);
      if (!indexRow(b, 0, b.length, ix)) {
        if (!beyondCodec(text)) bad.push({ text, why: "declined" });
        continue;
      }
      const f = ix.spelling(0);
      const v = parse(text);
      const unique = keyTokens() === treeKeys(v);
      // a claim of the compact sorted spelling is always true
      if ((f & NOT_COMPACT_CANONICAL) === 0 && text !== canonical(v)) bad.push({ text, form, why: "false compact claim" });
      // a claim of the default spelling is true when no key repeats
      if ((f & NOT_PYTHON_DEFAULT) === 0 && unique && text !== dumps(v, {})) bad.push({ text, form, why: "false default claim" });
      // and each writer's own output is recognised as what it is
      if (form === "canonical" && (f & NOT_COMPACT_CANONICAL & ~Spell.KeyNotPlain) !== 0 && (f & Spell.KeyNotPlain) === 0) bad.push({ text, form, why: "canonical not recognised" });
      if (form === "default" && (f & NOT_PYTHON_DEFAULT) !== 0) bad.push({ text, form, why: "default not recognised" });
      if (form === "raw" && ((f & Spell.Utf8) !== 0) !== /[^\x00-\x7f]/.test(text)) bad.push({ text, form, why: "raw UTF-8 flag" });
      if (bad.length > 5) break;
    }
    expect(bad).toEqual([]);
  }, 60_000);

  test("a repeated named key keeps the last, as json.loads does, and is reported", () => {
    const b = enc.encode('{"event": "a", "x": 1, "event": "b"}');
    expect(indexRow(b, 0, b.length, ix, KEYS)).toBe(true);
    expect(ix.repeatedName).toBe(true);
    expect(ix.plainText(ix.valueOf(1))).toBe("b");
  });

  test("rows with surrounding bytes: whitespace is taken, anything else is not", () => {
    for (const [text, ok] of [[' \t{"a": 1}\r\n', true], ['{"a": 1} x', false], ['\ufeff{"a": 1}', false], ["[1]", false], ["", false]] as const) {
      const b = enc.encode(text);
      expect(indexRow(b, 0, b.length, ix)).toBe(ok);
    }
  });
});

describe("isPythonFloat", () => {
  test("is the exact test on 16-17 digit lexemes, their near misses, exponents and ties (what the digits alone leave to the module)", () => {
    const enc = new TextEncoder();
    let seed = 0x9e3779b9;
    const rnd = (): number => {
      seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
      return seed / 4294967296;
    };
    const wrong: string[] = [];
    const check = (lexeme: string): void => {
      // in a row, with bytes on both sides
      const b = enc.encode(`[${lexeme}, 1]`);
      if (isPythonFloat(b, 1, 1 + lexeme.length) !== isFloatRepr(lexeme) && wrong.length < 10) wrong.push(lexeme);
    };
    for (let i = 0; i < 30_000; i++) {
      const v = rnd() < 0.5 ? 1.7e9 + rnd() * 1e8 : rnd() * 10 ** (Math.floor(rnd() * 40) - 20);
      const t = floatRepr(v);
      check(t);
      check(v.toPrecision(17));
      check(v.toPrecision(16));
      // a last digit off by one
      const last = t.charCodeAt(t.length - 1);
      if (last > 0x30 && last < 0x39) check(t.slice(0, -1) + String.fromCharCode(last + 1));
    }
    for (const l of ["9007199254740993.0", "0.30000000000000004", "1e-05", "1e+16", "5e-324", "1.7976931348623157e+308", "1E+16", "123456789012345678.5", "0.00010000000000000001"]) check(l);
    expect(wrong).toEqual([]);
  });
});

describe("stringCut", () => {
  test("cuts a string body only between whole escapes and whole UTF-8 sequences, at the first such place from the asked one", () => {
    const bodies = ['a\\u00e9b\\"c\\\\d', "é€😀x", 'x\\ud83d\\ude00é\\n', "plain"];
    for (const body of bodies) {
      const b = enc.encode(`"${body}"`);
      const end = b.length - 1;
      const escaped = body.includes("\\");
      // the whole places: the start, and after each escape or character
      const whole = new Set<number>([1]);
      for (let i = 1; i < end; ) {
        i += b[i] === 0x5c ? (b[i + 1] === 0x75 ? 6 : 2) : b[i]! < 0x80 ? 1 : b[i]! < 0xe0 ? 2 : b[i]! < 0xf0 ? 3 : 4;
        whole.add(i);
      }
      for (let at = 1; at <= end + 2; at++) {
        const want = Math.min(...[...whole].filter((w) => w >= Math.min(at, end)));
        expect({ body, at, cut: stringCut(b, 1, at, end, escaped) }).toEqual({ body, at, cut: want });
      }
    }
  });
});
