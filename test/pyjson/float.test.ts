import { expect, test } from "bun:test";
import { floatRepr, isFloatRepr } from "../../src/pyjson/float.ts";
import { mulberry32 } from "../../tools/fuzz/rng.ts";

/**
 * isFloatRepr is floatRepr(Number(text)) === text with fewer strings made:
 * the two must agree on every lexeme, the reprs themselves and near misses
 * (other layouts, extra or missing zeros, a digit off), across magnitudes,
 * and at the edges of repr's and ECMAScript's fixed ranges.
 */
function variants(t: string): string[] {
  const out = [t, t + "0", t.replace(".0", ""), t.replace("e+", "e"), t.replace("e-0", "e-"), t.toUpperCase(), "-" + t, t.replace(/^-/, "")];
  const i = t.search(/\d(?=\D*$)/);
  if (i >= 0) out.push(t.slice(0, i) + String((Number(t[i]) + 1) % 10) + t.slice(i + 1));
  const n = Number(t);
  out.push(String(n), n.toExponential(), n.toFixed(3), n.toPrecision(17), n.toPrecision(16));
  return out;
}

test("isFloatRepr agrees with floatRepr on reprs and near misses, at every magnitude", () => {
  const rand = mulberry32(7);
  const lexemes: string[] = [];
  for (let i = 0; i < 40_000; i++) {
    const e = Math.floor(rand() * 60) - 30;
    const n = (rand() - 0.5) * 10 ** e;
    lexemes.push(...variants(floatRepr(n)));
    // integral values, and timestamps of 16-17 significant digits
    lexemes.push(...variants(floatRepr(Math.round(n))));
    lexemes.push(...variants(floatRepr(1727000000 + rand() * 1e6)));
  }
  const edges = ["1e16", "1e+16", "1e15", "1000000000000000.0", "9999999999999998.0", "10000000000000000.0", "0.0001", "1e-04", "1e-05", "0.00001",
    "0.00009999999999999999", "1e21", "1e+21", "100000000000000000000.0", "1e-7", "0.0", "-0.0", "1.0", "100.0", "5", "5.", ".5", "0.1", "0.10",
    "0.30000000000000004", "0.3000000000000000", "1.7976931348623157e+308", "5e-324", "2.2250738585072014e-308", "123456789012345680.0", "1.2345678901234568e+17"];
  lexemes.push(...edges.flatMap(variants));
  let reprs = 0;
  for (const t of lexemes) {
    if (!/^-?\d/.test(t)) continue;
    const want = floatRepr(Number(t)) === t;
    if (want) reprs++;
    if (isFloatRepr(t) !== want) expect({ t, isFloatRepr: isFloatRepr(t) }).toEqual({ t, isFloatRepr: want });
  }
  expect(reprs).toBeGreaterThan(100_000);
});
