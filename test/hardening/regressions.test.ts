/**
 * Bugs the fuzzers found, pinned one by one (each against python3 where
 * Python is the reference), so a fix can never silently regress.
 */
import { describe, expect, test } from "bun:test";
import { parse } from "../../src/pyjson/parse.ts";
import { runPython } from "../helpers/python.ts";

function ourError(text: string): string {
  try {
    parse(text);
  } catch (err) {
    return (err as Error).message;
  }
  return "OK";
}

const PY_ERRORS = `
import json, sys
out = []
for t in json.load(sys.stdin):
    try:
        json.loads(t); out.append("OK")
    except ValueError as e:
        out.append(str(e))
print(json.dumps(out))
`;

describe("parser error messages (fuzz: parser)", () => {
  // Found by the parser fuzzer: positions counted UTF-16 units where Python
  // counts code points (any astral character before the error), and an
  // escape whose 4 hex digits end the text was "Unterminated string"
  // instead of Python's "Invalid \\uXXXX escape".
  const texts = [
    '["🚀" 1]',
    '\n\n["é🚀",\n "x" 1]',
    '{"k": "🚀🚀🚀", "v": tru}',
    '"\\ud83d\\ude80" x',
    '"abc\\u306e',
    '"abc\\u30',
    '"\\ud83d\\u',
    '"\\ud83d\\ude8',
    '"\\ud83d\\ude80',
    '"\\ud83d\\uZZZZ"',
    "[1,\n🚀]",
    '"🚀\n"',
  ];
  test("match json.loads exactly", () => {
    const py = runPython(PY_ERRORS, texts) as string[];
    expect(texts.map(ourError)).toEqual(py);
  });
});
