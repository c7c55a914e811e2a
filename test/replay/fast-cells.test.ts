/**
 * numberAt (src/replay/fast-cells.ts): the value of a number lexeme
 * without making its text, held to `Number(text)` bit for bit, on the
 * lexemes it takes without a string (at most 15 digits; a whole part that
 * dominates, as in a timestamp's 17 digits) and on those it hands to
 * Number().
 */
import { expect, test } from "bun:test";
import { numberAt } from "../../src/replay/fast-cells.ts";
import { mulberry32 } from "../../tools/fuzz/rng.ts";

const enc = new TextEncoder();

function same(text: string): boolean {
  const b = enc.encode(`[${text}]`);
  return Object.is(numberAt(b, 1, b.length - 1), Number(text));
}

test("numberAt is Number() on random decimals of 1 to 32 digits, timestamps and ties among them", () => {
  const rand = mulberry32(11);
  const digits = (n: number) => Array.from({ length: n }, () => Math.floor(rand() * 10)).join("");
  const wrong: string[] = [];
  for (let i = 0; i < 300_000; i++) {
    let whole = digits(1 + Math.floor(rand() * 16)).replace(/^0+(?=\d)/, "");
    if (rand() < 0.3) whole = `17${digits(8)}`;
    const fracDigits = 1 + Math.floor(rand() * 16);
    // a trailing 5 makes exact ties (and near-ties) common
    const frac = rand() < 0.2 ? `${digits(fracDigits - 1)}5` : digits(fracDigits);
    const text = `${rand() < 0.2 ? "-" : ""}${whole}.${frac}`;
    if (!same(text) && wrong.length < 10) wrong.push(text);
  }
  expect(wrong).toEqual([]);
});

test("numberAt on the edges: powers of two, 2^53, ties to even, integers, exponents", () => {
  const cases = [
    "4503599627370495.5",
    "4503599627370496.5",
    "9007199254740991.5",
    "9007199254740992.5",
    "9007199254740993.0",
    "1.5",
    "2.5",
    "1727000000.1737573",
    "1727000000.9999999999",
    "4294967295.99999999",
    "4294967296.00000001",
    "1073741823.9999999995",
    "0.30000000000000004",
    "123456789012345678",
    "1e5",
    "1.7270000001737573e9",
    "-0.0",
  ];
  for (const c of cases) expect({ c, same: same(c) }).toEqual({ c, same: true });
});
