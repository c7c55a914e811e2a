/**
 * py-json-v1 against Python's own json module, thousands of seeded cases in
 * ONE python process per test group: canonical bytes (the hash pre-image
 * form), Python's default `json.dumps` (the journal row form), `indent=2`
 * (metadata.json), float repr over random bit patterns, code-point key
 * order, and `str()` of parsed values (what the verifier hashes as the
 * event type).
 */
import { describe, expect, test } from "bun:test";
import { canonical, compareCodePoints, dumps, floatRepr, parse, pyStr, type PyValue } from "../../src/pyjson/index.ts";
import { parseRowBytes } from "../../src/pyjson/row.ts";
import { runPython } from "../helpers/python.ts";
import { Gen } from "./gen.ts";

const CASES = 3000;

function generateTexts(seed: number, n: number): string[] {
  const g = new Gen(seed);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    out.push(g.ws() + (i % 3 === 0 ? g.objectText(0, 1) : g.valueText(0)) + g.ws());
  }
  return out;
}

const PY_FORMS = `
import json, sys
def raw_utf8(s):
    # A lone surrogate cannot be written as UTF-8: Python raises, we escape it.
    try:
        return s.encode("utf-8").hex()
    except UnicodeEncodeError:
        return "LONE-SURROGATE"
texts = json.load(sys.stdin)
out = []
for t in texts:
    try:
        v = json.loads(t)
    except Exception as e:
        out.append(["ERR", type(e).__name__])
        continue
    out.append([
        json.dumps(v, sort_keys=True, separators=(",", ":")),
        json.dumps(v),
        json.dumps(v, indent=2),
        raw_utf8(json.dumps(v, sort_keys=True, ensure_ascii=False)),
    ])
print(json.dumps(out))
`;

function ours(text: string): string[] {
  let v;
  try {
    v = parse(text);
  } catch {
    return ["ERR", "parse"];
  }
  const raw = dumps(v, { sortKeys: true, ensureAscii: false });
  return [
    canonical(v),
    dumps(v),
    dumps(v, { indent: 2 }),
    hasLoneSurrogate(v) ? "LONE-SURROGATE" : Buffer.from(raw, "utf8").toString("hex"),
  ];
}

const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Does any string or key of a parsed value hold a lone surrogate? */
function hasLoneSurrogate(v: PyValue): boolean {
  if (typeof v === "string") return LONE.test(v);
  if (Array.isArray(v)) return v.some(hasLoneSurrogate);
  if (v instanceof Map) return [...v].some(([k, x]) => LONE.test(k) || hasLoneSurrogate(x));
  return false;
}

/** UTF-8 with lone surrogates encoded as 3-byte sequences (Python "surrogatepass"). */
function encodeSurrogatePass(s: string): Uint8Array {
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    let cp = s.charCodeAt(i);
    if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < s.length) {
      const lo = s.charCodeAt(i + 1);
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        i++;
      }
    }
    if (cp < 0x80) bytes.push(cp);
    else if (cp < 0x800) bytes.push(0xc0 | (cp >> 6), 0x80 | (cp & 63));
    else if (cp < 0x10000) bytes.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
    else bytes.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
  }
  return new Uint8Array(bytes);
}

function firstMismatches(texts: string[], expected: string[][], got: (t: string) => string[], max = 5): unknown[] {
  const bad: unknown[] = [];
  for (let i = 0; i < texts.length && bad.length < max; i++) {
    const g = got(texts[i]!);
    const e = expected[i]!;
    if (JSON.stringify(g) !== JSON.stringify(e)) bad.push({ text: texts[i], python: e, ours: g });
  }
  return bad;
}

describe("py-json-v1 encoder and parser agree with Python's json", () => {
  test(`${CASES} random hostile documents: canonical, default, indent=2 and raw forms are byte-identical`, () => {
    const texts = generateTexts(20261129, CASES);
    const expected = runPython(PY_FORMS, texts) as string[][];
    expect(expected.length).toBe(CASES);
    // The generator only writes valid JSON: Python must accept every case,
    // otherwise the test would silently compare fewer forms.
    expect(expected.filter((e) => e[0] === "ERR").length).toBe(0);
    expect(firstMismatches(texts, expected, ours)).toEqual([]);
  });

  test("raw spellings re-encode the way json.loads -> json.dumps re-spells them", () => {
    const texts = [
      "1E-5", "1.50", "-0", "-0.0", "1e16", "1E+16", "1e-05", "0.0001", "0.00001", "123456789.125",
      "1e400", "-1e400", "1e-400", "NaN", "Infinity", "-Infinity", "5e-324", "2.5e-324", "1.7976931348623157e308",
      "100000000000000000000000000000000000001", "-100000000000000000000000000000000000001", "1.0e0",
      '"\\/"', '"a\\/b"', '"\\u00E9"', '"\\u00e9"', '"é"', '"\\uD83D\\uDE80"', '"🚀"', '"\\ud800"', '"\\udfff"',
      '"\\ud800\\u0041"', '"\\udc00\\ud800"', '"\\u007f"', '"\\u2028\\u2029"', '"\\u0000\\u001f"', '"\\b\\f\\n\\r\\t"',
      '{"b": 1, "a": 2, "b": 3}', '{"\\uffff": 1, "\\ud83d\\ude80": 2, "\\ue000": 3}', '{"\\ud800": 1, "\\ud83d\\ude80": 2}',
      '{"\\udc00": 1, "\\ud83d\\ude80": 2, "\\ud83d": 3}', '[1.0, 1, true, 1.5e3, -0.0, 0]', '{"": {"": []}}',
    ];
    const expected = runPython(PY_FORMS, texts) as string[][];
    expect(firstMismatches(texts, expected, ours, 50)).toEqual([]);
  });

  test("float repr over 5000 random bit patterns (subnormals, extremes, -0.0) equals Python repr", () => {
    const g = new Gen(7);
    const doubles: number[] = [];
    for (let i = 0; i < 5000; i++) doubles.push(g.double());
    const dv = new DataView(new ArrayBuffer(8));
    const hexes = doubles.map((d) => {
      dv.setFloat64(0, d);
      return dv.getBigUint64(0).toString(16).padStart(16, "0");
    });
    const py = runPython(
      `
import json, struct, sys
out = []
for h in json.load(sys.stdin):
    out.append(json.dumps(struct.unpack(">d", bytes.fromhex(h))[0]))
print(json.dumps(out))
`,
      hexes,
    ) as string[];
    const bad = doubles.map((d, i) => [hexes[i], floatRepr(d), py[i]]).filter(([, a, b]) => a !== b);
    expect(bad.slice(0, 10)).toEqual([]);
  });

  test("keys sort by code point like Python sorted(), not by UTF-16 unit", () => {
    const g = new Gen(99);
    const keys: string[] = [];
    for (let i = 0; i < 400; i++) keys.push(parse(g.keyText()) as string);
    const units = keys.map((k) => Array.from({ length: k.length }, (_, i) => k.charCodeAt(i)));
    const py = runPython(
      `
import json, sys
keys = []
for units in json.load(sys.stdin):
    s = "".join(chr(u) for u in units).encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    keys.append(s)
order = sorted(range(len(keys)), key=lambda i: (keys[i], i))
print(json.dumps(order))
`,
      units,
    ) as number[];
    const ourOrder = keys.map((_, i) => i).sort((a, b) => compareCodePoints(keys[a]!, keys[b]!) || a - b);
    expect(ourOrder).toEqual(py);
  });

  test("str() of parsed values (the verifier's event-type coercion) equals Python str()", () => {
    const g = new Gen(4242, { stableUnicode: true });
    const texts: string[] = [
      "null", "true", "false", "1", "1.0", "-0.0", "1e16", "1e-05", "NaN", "Infinity", "-Infinity", '"x"',
      '{"a": [1, 2.5, null, true], "b": {"c": "d\'e"}}', '["it\'s", "say \\"hi\\"", "\\n\\t\\u0001\\u007f\\u0085"]',
      '{"k": "\\u00e9\\u4e2d\\ud83d\\ude80"}', '["\\u2028", "\\u00a0", "\\u200b", "\\ufeff"]',
    ];
    for (let i = 0; i < 500; i++) texts.push(g.valueText(1));
    const py = runPython(
      `
import json, sys
out = []
for t in json.load(sys.stdin):
    out.append(str(json.loads(t)).encode("utf-8", "surrogatepass").hex())
print(json.dumps(out))
`,
      texts,
    ) as string[];
    const bad = texts
      .map((t, i) => [t, Buffer.from(encodeSurrogatePass(pyStr(parse(t)))).toString("hex"), py[i]])
      .filter(([, a, b]) => a !== b);
    expect(bad.slice(0, 5)).toEqual([]);
    // each value as a huge row keeps it (its lists, objects and strings still bytes: src/pyjson/row.ts)
    const kept = (t: string) => (parseRowBytes(new TextEncoder().encode(`{"v": ${t}}`), 0, 0) as Map<string, PyValue>).get("v")!;
    const badKept = texts
      .map((t, i) => [t, Buffer.from(encodeSurrogatePass(pyStr(kept(t)))).toString("hex"), py[i]])
      .filter(([, a, b]) => a !== b);
    expect(badKept.slice(0, 5)).toEqual([]);
  });
});
