import { describe, expect, test } from "bun:test";
import { SHOWN_VALUE_CHARS, valueText } from "../../../../src/cli/commands/replay/diff.ts";
import { parse } from "../../../../src/pyjson/parse.ts";
import { parseRowBytes } from "../../../../src/pyjson/row.ts";
import { PyRaw, type PyObject } from "../../../../src/pyjson/types.ts";

/** `v` as the tree parser reads it, and as a huge row keeps it (bytes). */
function both(v: unknown): [unknown, unknown] {
  const text = JSON.stringify({ v });
  const raw = (parseRowBytes(new TextEncoder().encode(text), 0, 0) as PyObject).get("v");
  expect(raw instanceof PyRaw).toBe(true);
  return [(parse(text) as PyObject).get("v"), raw];
}

/** Long runs of x written as x*N, so a failure prints short. */
const short = (s: string) => s.replace(/x{100,}/g, (m) => `x*${m.length}`);

describe("replay diff's side-by-side value: cut after SHOWN_VALUE_CHARS, saying how long it is", () => {
  test("a value up to SHOWN_VALUE_CHARS is shown whole", () => {
    for (const v of ["x".repeat(SHOWN_VALUE_CHARS - 2), ["x".repeat(SHOWN_VALUE_CHARS - 4)]]) {
      for (const x of both(v)) expect(short(valueText(x))).toBe(short(JSON.stringify(v)));
    }
  });

  test("a longer one: its first SHOWN_VALUE_CHARS characters, then the note; a surrogate pair the cut falls in is not split", () => {
    for (const shift of [0, 1, 2]) {
      // the emoji's two code units at SHOWN_VALUE_CHARS - 2 + shift and the next, counting the opening quote
      const v = "x".repeat(SHOWN_VALUE_CHARS - 3 + shift) + "😀" + "x".repeat(1000);
      const json = JSON.stringify(v);
      const kept = (json.charCodeAt(SHOWN_VALUE_CHARS - 1) & 0xfc00) === 0xd800 ? SHOWN_VALUE_CHARS - 1 : SHOWN_VALUE_CHARS;
      const want = `${json.slice(0, kept)} … [cut: ${json.length} characters as recorded; --as-json prints it whole]`;
      for (const x of both(v)) {
        const got = valueText(x);
        expect({ shift, got: short(got) }).toEqual({ shift, got: short(want) });
        expect(/[\ud800-\udbff](?![\udc00-\udfff])/.test(got)).toBe(false);
      }
    }
  });
});
