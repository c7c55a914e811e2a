/**
 * The tree-free byte path (src/pyjson/bytes.ts, encode-bytes.ts, row.ts)
 * against the tree parser and encoder, and against Python's json module
 * (one batched python3 process per group): every encoding a huge row is
 * hashed or printed in, the same verdicts and the same error messages.
 */
import { describe, expect, test } from "bun:test";
import { canonical, dumps, parse, type DumpsOptions, type PyValue } from "../../src/pyjson/index.ts";
import { loadsLine, parseRowBytes, setBytePathMin } from "../../src/pyjson/row.ts";
import { canonicalParts, sha256Parts } from "../../src/pyjson/encode.ts";
import { PyRaw } from "../../src/pyjson/types.ts";
import { widestObject } from "../../src/pyjson/bytes.ts";
import { runPython } from "../helpers/python.ts";
import { Gen } from "./gen.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

const FORMS: [string, DumpsOptions][] = [
  ["canonical", { sortKeys: true, separators: [",", ":"] }],
  ["default", {}],
  ["indent2", { indent: 2 }],
  ["display", { indent: 2, ensureAscii: false, rawNumbers: true, separators: [",", ": "] }],
  ["sorted-raw", { sortKeys: true, ensureAscii: false }],
  ["compact-display", { indent: null, ensureAscii: false, rawNumbers: true }],
];

/** All forms of `text` through one path; "ERR: <message>" when it is refused. */
function forms(text: string, viaBytes: boolean): string[] {
  let v: PyValue;
  try {
    v = viaBytes ? parseRowBytes(enc.encode(text), 0) : parse(text);
  } catch (err) {
    return [`ERR: ${(err as Error).message}`];
  }
  return FORMS.map(([, o]) => dumps(v, o));
}

/** Valid documents, top-level objects most of the time (rows), with hostile spellings. */
function documents(seed: number, n: number): string[] {
  const g = new Gen(seed);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const body = i % 4 === 3 ? g.valueText(0) : g.objectText(0, 1);
    // text that survives UTF-8 (a raw lone surrogate would not)
    out.push(dec.decode(enc.encode(g.ws() + body + g.ws())));
  }
  return out;
}

/** Byte-level mutations of valid documents: truncations, insertions, flips (mostly invalid). */
function mutants(seed: number, n: number): string[] {
  const g = new Gen(seed);
  const docs = documents(seed + 1, n);
  const junk = ['"', "\\", "{", "}", "[", "]", ",", ":", "\u0001", "\\u12", "\\x", "NaN", "-", "1e", "0.", "\ufeff", " ", "\n"];
  return docs.map((d) => dec.decode(enc.encode(mutate(d))));
  function mutate(d: string): string {
    const cut = g.int(d.length + 1);
    switch (g.int(4)) {
      case 0:
        return d.slice(0, cut);
      case 1:
        return d.slice(0, cut) + g.pick(junk) + d.slice(cut);
      case 2:
        return d.slice(0, cut) + d.slice(cut + 1 + g.int(3));
      default:
        return g.pick(junk) + d;
    }
  }
}

const ADVERSARIAL = [
  '{"b": 1, "a": 2, "b": 3}',
  '{"a": 1, "\\u0061": 2}',
  '{"\\ud83d\\ude80": 1, "\\uffff": 2, "\\ud800": 3, "\u{1F680}": 4, "\uffff": 5}',
  '{"k": [1.5, 1.50, 1E5, 1e16, 1e-05, 0.0001, 0.00001, -0, -0.0, 0e0, 1E400, -1e400, NaN, Infinity, -Infinity]}',
  '{"k": [123456789012345678901234567890, -0, 0, 9007199254740993, 0.1, 0.30000000000000004, 100000000000000000000.0]}',
  '{"k": [1234567890.12345, 123456789012345.6, 1234567890123456.7, 0.000123456789012345, 5e-324, 1.7976931348623157e308]}',
  '{"s": "\\u0000\\u001f\\u007f\\u0080\\b\\f\\n\\r\\t\\"\\\\\\/ \u00e9\u0101\u4e2d\u{1F680}\u007f"}',
  '{"deep": ' + "[".repeat(900) + "]".repeat(900) + "}",
  '{"deep": ' + '{"a":'.repeat(500) + "1" + "}".repeat(500) + "}",
  "{" + Array.from({ length: 300 }, (_, i) => `"k${(i * 7919) % 300}": ${i}`).join(", ") + "}",
  '{"e": {}, "f": [], "g": [{}, [], {"": ""}], "": null}',
  ' \t{"a" : [ 1 , 2 ] , "b" :{ "c" :true,"d":false } }\r\n ',
  '{"a": "x"}  x',
  '{"a": 01}',
  '{"a": 1.}',
  '{"a": .5}',
  '{"a": "\\u12"}',
  '{"a": "\\u12g4"}',
  // a string cut off at the end of the input: json.loads' message depends on where
  '{"a": "\\u1234',
  '"\\u1234',
  '["\\u12345',
  '"ab\\',
  '"a\\u12',
  '["x\\u00e9\\',
  '"abc',
  '"\\q"',
  '{"a": "tab\there"}',
  '{"a" 1}',
  '{"a": 1,}',
  '{"a": [1,]}',
  "{'a': 1}",
  '\ufeff{"a": 1}',
  '{"a": ' + "9".repeat(4301) + "}",
  '{"a": ' + "9".repeat(4300) + "}",
  '{"a": -' + "9".repeat(4301) + "}",
  '{"deep": ' + "[".repeat(1000) + "]".repeat(1000) + "}",
  "[" .repeat(1001) + "]".repeat(1001),
  '{"é": "\u00e9", "é2": [1, "\u00e9"]} garbage \u00e9',
  "",
  "   ",
  "[1, 2",
  '"just a string"',
  "12",
];

describe("byte path vs tree path", () => {
  test("valid documents: every dumps form is identical", () => {
    const bad: unknown[] = [];
    for (const t of [...documents(16001, 3000), ...ADVERSARIAL]) {
      const a = forms(t, true);
      const b = forms(t, false);
      if (JSON.stringify(a) !== JSON.stringify(b) && bad.length < 5) bad.push({ t, bytes: a, tree: b });
    }
    expect(bad).toEqual([]);
  }, 60_000);

  test("mutated documents: same acceptance and the same json.loads error message", () => {
    const bad: unknown[] = [];
    let refused = 0;
    for (const t of mutants(16002, 4000)) {
      const a = forms(t, true);
      const b = forms(t, false);
      if (a[0]!.startsWith("ERR")) refused++;
      if (JSON.stringify(a) !== JSON.stringify(b) && bad.length < 5) bad.push({ t, bytes: a, tree: b });
    }
    expect(bad.map((x) => JSON.stringify(x).slice(0, 600))).toEqual([]);
    // the mutator must produce a real mix, or the test compares little
    expect(refused).toBeGreaterThan(1000);
    expect(refused).toBeLessThan(3900);
  }, 60_000);

  test("large members stay bytes (PyRaw) and still encode and hash like the tree", () => {
    const g = new Gen(16003);
    for (let i = 0; i < 200; i++) {
      const text = g.objectText(0, 3);
      const v = parseRowBytes(enc.encode(text), 0);
      const t = parse(text);
      expect(canonical(v)).toBe(canonical(t));
      expect(sha256Parts(canonicalParts(v))).toBe(Bun.SHA256.hash(canonical(t), "hex") as string);
    }
    const big = parseRowBytes(enc.encode(`{"event": "x", "data": [${Array(2000).fill("1.50").join(",")}]}`)) as Map<string, PyValue>;
    expect(big.get("data")).toBeInstanceOf(PyRaw);
    expect(big.get("event")).toBe("x");
  }, 60_000);

  test("loadsLine: the byte path classifies every line like the tree path (blank, undecodable, error text, value)", () => {
    const lines: Uint8Array[] = [
      ...mutants(16004, 1500).map((t) => enc.encode(t)),
      ...ADVERSARIAL.map((t) => enc.encode(t)),
      new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]), // invalid UTF-8
      new Uint8Array([0xed, 0xa0, 0x80]), // an encoded surrogate
      enc.encode("\u2028\u00a0 \x1c{\"a\": 1}\u3000\x85"), // Python whitespace around a row
      enc.encode("\ufeff"),
      enc.encode("\u200b{}"),
    ];
    const show = (v: ReturnType<typeof loadsLine>): string =>
      v.kind === "value" ? "value " + dumps(v.value, { sortKeys: true }) : v.kind === "error" ? "error " + v.message : v.kind;
    const prev = setBytePathMin(0);
    let viaBytes: string[];
    try {
      viaBytes = lines.map((l) => show(loadsLine(l)));
    } finally {
      setBytePathMin(Infinity);
    }
    let viaTree: string[];
    try {
      viaTree = lines.map((l) => show(loadsLine(l)));
    } finally {
      setBytePathMin(prev);
    }
    const bad = lines.map((l, i) => ({ line: dec.decode(l), bytes: viaBytes[i], tree: viaTree[i] })).filter((x) => x.bytes !== x.tree);
    expect(bad.slice(0, 5)).toEqual([]);
  }, 60_000);
});

// Refusals are compared by message: str(JSONDecodeError) is the text parse() reproduces.
const PY_ORACLE = `
import json, sys
res = []
for t in json.load(sys.stdin):
    try:
        v = json.loads(t)
        res.append(["OK", json.dumps(v, sort_keys=True, separators=(",", ":")), json.dumps(v), json.dumps(v, indent=2)])
    except ValueError as e:
        res.append(["ERR", str(e)])
print(json.dumps(res))
`;

describe("byte path vs Python's json", () => {
  test("random, mutated and adversarial documents: canonical, default and indent=2 bytes, and the refusal messages", () => {
    const texts = [...documents(16005, 2000), ...mutants(16006, 1000), ...ADVERSARIAL.filter((t) => !t.includes("[".repeat(1000)))];
    const py = runPython(PY_ORACLE, texts) as string[][];
    expect(py.length).toBe(texts.length);
    const bad: unknown[] = [];
    let accepted = 0;
    texts.forEach((t, i) => {
      let got: string[];
      try {
        const v = parseRowBytes(enc.encode(t), 0);
        got = ["OK", canonical(v), dumps(v), dumps(v, { indent: 2 })];
        accepted++;
      } catch (err) {
        got = ["ERR", (err as Error).message];
      }
      if (JSON.stringify(got) !== JSON.stringify(py[i]) && bad.length < 5) bad.push({ t, ours: got, python: py[i] });
    });
    expect(bad).toEqual([]);
    expect(accepted).toBeGreaterThan(2000);
  }, 60_000);
});

describe("a huge row on the replay display", () => {
  test("its table cells are the tree's for small fields, and a bounded preview for a large one", async () => {
    const { displayRow } = await import("../../src/replay/display.ts");
    const { previewJson } = await import("../../src/pyjson/encode.ts");
    const { rawItems } = await import("../../src/pyjson/row.ts");
    const ids = JSON.stringify(Array.from({ length: 500 }, (_, i) => `T-${i}`));
    const text = `{"ts": 5.5, "event": "task_claimed", "agent_id": "A-1", "task_ids": ${ids}, "model": {"name": "m", "pad": "${"x".repeat(5000)}"}, "failed_signals": [1, 2, 3, 4], "cost_usd": 0.25}`;
    const viaBytes = parseRowBytes(enc.encode(text), 256) as Map<string, PyValue>;
    const viaTree = parse(text) as Map<string, PyValue>;
    expect(viaBytes.get("task_ids")).toBeInstanceOf(PyRaw);
    expect(viaBytes.get("model")).toBeInstanceOf(PyRaw);
    const a = displayRow(viaBytes, 1);
    const b = displayRow(viaTree, 1);
    expect({ ...a, detail: "" }).toEqual({ ...b, detail: "" });
    expect(a.task).toBe("T-0, T-1");
    expect(a.detail.startsWith('{"name": "m", "pad": "xxx')).toBe(true);
    expect(a.detail).toContain("\u2026");
    expect(a.detail.length).toBeLessThan(300);
    expect(b.detail.endsWith(a.detail.slice(a.detail.indexOf("\u2026") + 1))).toBe(true);
    expect(rawItems(viaBytes.get("task_ids") as PyRaw, 3)).toEqual(["T-0", "T-1", "T-2"]);
    const raw = parseRowBytes(enc.encode(`[1.50, "\u00e9", {"b": 1, "a": 2}]`), 0);
    expect(previewJson(raw as PyRaw)).toBe('[1.50, "\u00e9", {"b": 1, "a": 2}]');
  });
});

describe("a huge step row read from its bytes", () => {
  test("its receipt form (blob_refs list, tool_call name) equals the tree's", async () => {
    const { dictForm, rowLine } = await import("../../src/receipts/rows.ts");
    const { rawGet } = await import("../../src/pyjson/row.ts");
    const refs = JSON.stringify(Array.from({ length: 6 }, (_, i) => String(i).repeat(64)));
    const text = `{"blob_refs": ${refs}, "input_hash": "", "model": null, "prev_hash": "${"0".repeat(64)}", "prompt": "p", "seq": 0, "step_hash": "x", "tool_call": {"name": "write", "args": {"content": "${"y".repeat(3000)}"}}, "tool_result": [${Array(500).fill("1.5").join(",")}], "ts": 1.0}`;
    const viaBytes = parseRowBytes(enc.encode(text), 256) as Map<string, PyValue>;
    expect(viaBytes.get("blob_refs")).toBeInstanceOf(PyRaw);
    expect(rowLine(dictForm(viaBytes))).toBe(rowLine(dictForm(parse(text) as Map<string, PyValue>)));
    expect(rawGet(viaBytes.get("tool_call") as PyRaw, "name")).toBe("write");
    expect(rawGet(viaBytes.get("tool_call") as PyRaw, "nope")).toBeUndefined();
  });
});

describe("widestObject (how much key sorting a line holds, before journal record decides where to encode it)", () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  test("the widest object's commas at any depth; arrays and strings do not count", () => {
    expect(widestObject(enc('{"a": 1, "b": [1, 2, 3, 4, 5], "c": {"x": 1, "y": 2, "z": 3, "w": 4}, "d": "p,q\\",r"}'), 100)).toBe(3);
    expect(widestObject(enc("[1,2,3]"), 100)).toBe(0);
    expect(widestObject(enc('{"event": "x", "data": {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}}'), 100)).toBe(4);
    expect(widestObject(enc("{}"), 100)).toBe(0);
  });
  test("stops at enough; unterminated input is bounded", () => {
    expect(widestObject(enc("{" + '"k": 1, '.repeat(1000) + '"z": 1}'), 10)).toBe(10);
    expect(widestObject(enc('{"a": 1, "b'), 100)).toBe(1);
  });
});
