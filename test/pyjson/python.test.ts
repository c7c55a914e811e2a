/** Python builtins the journal relies on: str.strip() whitespace, int(str), round(x, 3). */
import { describe, expect, test } from "bun:test";
import { floatRepr, isPyWhitespace, pyIntFromString, pyRound, pyStrip } from "../../src/pyjson/index.ts";
import { runPython } from "../helpers/python.ts";
import { Gen } from "./gen.ts";

describe("Python semantics", () => {
  test("str.isspace() set over every code point (incl. \\x1c-\\x1f, \\x85, U+2028; not U+FEFF)", () => {
    const py = runPython(
      `import json, sys
json.load(sys.stdin)
print(json.dumps([c for c in range(0x110000) if chr(c).isspace()]))`,
      null,
    ) as number[];
    const ours: number[] = [];
    for (let c = 0; c < 0x110000; c++) if (isPyWhitespace(c)) ours.push(c);
    expect(ours).toEqual(py);
    expect(pyStrip("\x1c\x85 a\u2028\ufeff\u2029")).toBe("a\u2028\ufeff");
  });

  test("int(text) like Python: whitespace, sign, underscores, Unicode digits, 4300-digit limit", () => {
    const cases = [
      "3", " 3 ", "+3", "-3", "3_0", "3__0", "_3", "3_", "0", "-0", "007", "٣", "١٢", "1٣", "３", "𝟑", "߃",
      "3x", "3.0", "1e3", "", " ", "+", "-", "+-3", "- 3", "\t\n3\x1c", "3\u2028", "\ufeff3", "0x10", "1 000",
      "9".repeat(4300), "9".repeat(4301), "99999999999999999999", "٣_٣", "\u00a03\u3000",
    ];
    const py = runPython(
      `import json, sys
out = []
for t in json.load(sys.stdin):
    try:
        out.append(str(int(t)))
    except ValueError:
        out.append(None)
print(json.dumps(out))`,
      cases,
    ) as (string | null)[];
    expect(cases.map((c) => pyIntFromString(c)?.toString() ?? null)).toEqual(py);
  });

  test("round(x, 3) ties to even on the exact binary value, 3000 values", () => {
    const g = new Gen(5);
    const xs: number[] = [0.0625, 0.1875, 1.0005, 2.675, 0.0005, 1e-4, 123.4565, -0.0625, -2.5e-4, 0, 1e300, 5e-324];
    for (let i = 0; i < 1000; i++) xs.push(g.int(1_000_000) / 16000); // many exact ties
    for (let i = 0; i < 1000; i++) xs.push(g.r() * 10 ** (g.int(12) - 4));
    for (let i = 0; i < 988; i++) xs.push(g.int(100000) / 2000);
    const py = runPython(
      `import json, sys
print(json.dumps([repr(round(float(x), 3)) for x in json.load(sys.stdin)]))`,
      xs,
    ) as string[];
    const ours = xs.map((x) => floatRepr(pyRound(x, 3)));
    const bad = xs.map((x, i) => [x, ours[i], py[i]]).filter(([, a, b]) => a !== b);
    expect(bad.slice(0, 10)).toEqual([]);
  });
});
