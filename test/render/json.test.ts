import { describe, expect, test } from "bun:test";
import { parse } from "../../src/pyjson/parse.ts";
import { parseRowBytes } from "../../src/pyjson/row.ts";
import { PyRaw, type PyObject } from "../../src/pyjson/types.ts";
import { renderDocJson, renderJson, renderValueInline } from "../../src/render/json.ts";

/** A row of every kind of member, as the tree parser reads it and as a huge row is read (every list, object and string kept as bytes). */
const TEXT = `{"event": "tool_result", "n": 1.50, "big": 12345678901234567890, "s": "r\\u00e9sum\\u00e9 \\"q\\" \\ud83d\\ude00 \\u2028", "list": [1, {"k": "\\u00e9", "z": [null, true]}, "x"], "empty": {}, "obj": {"b": 2, "a": [1.0e5]}}`;
const tree = () => parse(TEXT) as PyObject;
const asBytes = () => parseRowBytes(new TextEncoder().encode(TEXT), 0, 0) as PyObject;

function pieces(render: (write: (text: string) => void) => void): string {
  let out = "";
  render((t) => (out += t));
  return out;
}

describe("render/json: a huge row's values written in pieces are renderJson's", () => {
  test("the row really holds bytes (the test is not vacuous)", () => {
    const row = asBytes();
    expect(["s", "list", "empty", "obj"].map((k) => row.get(k) instanceof PyRaw)).toEqual([true, true, true, true]);
  });

  test("renderDocJson of a document holding two such rows", () => {
    const doc = (row: () => PyObject) => ({ ok: false, index: 2, a_event: row(), b_event: row(), fields: ["s"], none: null });
    expect(pieces((w) => renderDocJson(doc(asBytes), w))).toBe(renderJson(doc(tree)));
    expect(pieces((w) => renderDocJson(doc(tree), w))).toBe(renderJson(doc(tree)));
  });

  test("renderValueInline of each member", () => {
    const row = asBytes();
    for (const [k, v] of tree()) expect({ k, text: pieces((w) => renderValueInline(row.get(k), w)) }).toEqual({ k, text: renderJson(v, null) });
  });
});
