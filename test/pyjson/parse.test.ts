/**
 * The parser accepts exactly what Python's `json.loads` accepts, with the
 * same values (checked through the canonical form) and, for rejected
 * input, the same JSONDecodeError message (strict readers embed it).
 * One batched python process per group.
 */
import { describe, expect, test } from "bun:test";
import { canonical, parse, PyNum } from "../../src/pyjson/index.ts";
import { runPython } from "../helpers/python.ts";
import { Gen } from "./gen.ts";

const PY_VERDICTS = `
import json, sys
out = []
for t in json.load(sys.stdin):
    try:
        v = json.loads(t)
        out.append(["ok", json.dumps(v, sort_keys=True, separators=(",", ":"))])
    except RecursionError:
        out.append(["err", "RecursionError"])
    except ValueError as e:
        out.append(["err", str(e)])
print(json.dumps(out))
`;

function ourVerdict(t: string): [string, string] {
  try {
    return ["ok", canonical(parse(t))];
  } catch (err) {
    return ["err", (err as Error).message];
  }
}

const CURATED = [
  // accepted
  "0", "-0", "1.5", "1e5", "1E+5", "1e-5", "NaN", "-Infinity", "Infinity", " \t\n\r1\r\n", '""', "[]", "{}",
  '{"a":1,"a":2}', '"\\ud800"', '"\\udc00\\ud800"', '"\\u00e9"', '"\\u00E9"', '"\\/"', "[1,[2,[3]]]",
  // rejected
  "", " ", "[1,]", '{"a":1,}', "[,1]", "{'a':1}", "'x'", "01", "-01", "00", "1.", ".5", "-", "+1", "1e", "1e+",
  "0x10", "nan", "inf", "-NaN", "+Infinity", "Infinity1", "tru", "nul", "True", "None", '"\\x41"', '"\\u12"',
  '"\\u12g4"', '"\\a"', '"a\nb"', '"tab\there"', '"\u0000"', '"\u001f"', '"unterminated', '{"a" 1}', '{"a":1 "b":2}',
  "[1 2]", '{1:2}', '{"a":}', "[1]]", "{}{}", "1 2", "\ufeff{}", "[", "{", '{"a"', '{"a":', "\u00a01", "1\u00a0",
  "\u20281", "[\u0085]", "//c\n1", "/*c*/1", "1.0e", "1.e5", "-.5", "1_000", "[1,2,,3]", '"\\', '"\\u',
  "1" + "0".repeat(4300), "1" + "0".repeat(4299), "-" + "1".repeat(4300), "1" + "0".repeat(5000) + ".0",
];

describe("parser accepts and rejects like json.loads", () => {
  test("curated edge cases: same verdict, value and error message", () => {
    const py = runPython(PY_VERDICTS, CURATED) as [string, string][];
    const bad = CURATED.map((t, i) => ({ t, py: py[i], ours: ourVerdict(t) })).filter(
      (x) => JSON.stringify(x.py) !== JSON.stringify(x.ours),
    );
    expect(bad).toEqual([]);
  });

  test("4000 random single-character mutations of valid documents: same accept/reject and value", () => {
    const g = new Gen(31337);
    const texts: string[] = [];
    const noise = [",", "]", "}", "[", "{", ":", '"', "\\", "0", "1", "-", "+", ".", "e", "E", " ", "\n", "\u0001", "N", "I", "t", "'"];
    for (let i = 0; i < 4000; i++) {
      let t = g.valueText(1);
      const at = g.int(t.length + 1);
      const op = g.int(3);
      if (op === 0) t = t.slice(0, at) + g.pick(noise) + t.slice(at);
      else if (op === 1) t = t.slice(0, at) + t.slice(at + 1);
      else t = t.slice(0, at) + g.pick(noise) + t.slice(at + 1);
      texts.push(t);
    }
    const py = runPython(PY_VERDICTS, texts) as [string, string][];
    const bad = texts
      .map((t, i) => ({ t, py: py[i]!, ours: ourVerdict(t) }))
      .filter((x) => x.py[0] !== x.ours[0] || (x.py[0] === "ok" && x.py[1] !== x.ours[1]));
    expect(bad.slice(0, 5)).toEqual([]);
    // Both outcomes must actually occur, or the comparison proves little.
    expect(py.filter((v) => v[0] === "ok").length).toBeGreaterThan(500);
    expect(py.filter((v) => v[0] === "err").length).toBeGreaterThan(500);
  });
});

describe("parsed values keep what JSON.parse loses", () => {
  test("number lexemes, int/float kind, big ints, -0.0", () => {
    const v = parse('[1, 1.0, 12345678901234567890123, -0.0, -0, 1E-5, NaN]') as PyNum[];
    expect(v.map((n) => [n.raw, n.isFloat])).toEqual([
      ["1", false], ["1.0", true], ["12345678901234567890123", false], ["-0.0", true], ["-0", false], ["1E-5", true], ["NaN", true],
    ]);
    expect(canonical(v)).toBe("[1,1.0,12345678901234567890123,-0.0,0,1e-05,NaN]");
  });

  test("duplicate keys: first position, last value (a Python dict)", () => {
    const m = parse('{"b": 1, "a": 2, "b": 3}') as Map<string, PyNum>;
    expect([...m.keys()]).toEqual(["b", "a"]);
    expect(m.get("b")!.raw).toBe("3");
  });

  test("escaped lone surrogates survive a round trip", () => {
    expect(canonical(parse('"\\udcff\\ud800x"'))).toBe('"\\udcff\\ud800x"');
  });

  test("nesting deeper than the limit is a parse error, not a crash", () => {
    expect(() => parse("[".repeat(5000) + "]".repeat(5000))).toThrow(/Nesting too deep/);
    expect(() => parse("[".repeat(100) + "]".repeat(100))).not.toThrow();
  });
});
