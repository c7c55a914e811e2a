import { describe, expect, test } from "bun:test";
import { Respacer, respaceLine } from "../../src/codec/writer-spacing.ts";
import { runPython } from "../helpers/python.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

function respaced(text: string): string | null {
  const r = new Respacer().respace(enc.encode(text), 0, enc.encode(text).length);
  return r === null ? null : dec.decode(r);
}

describe("respaceLine: a row in the writer's spacing, every other byte as it is", () => {
  test("rows Python spells with other separators and whitespace come back as json.dumps' default spelling", () => {
    // Python writes each value in several spacings; the re-spaced text must be json.dumps(json.loads(text))
    const script = `import json, random, sys
random.seed(11)
def value(d):
    r = random.random()
    if d > 3 or r < 0.35:
        return random.choice([0, -7, 12345678901234567890, 1.5, -0.0, 1e-7, 2.5e+300, True, False, None,
            "", "plain", "q\\"uote", "back\\\\slash", "tab\\tnl\\n", "\\u00e9\\u4e2d\\U0001f600", "\\u2028", "\\x7f", "a, b: c", " { [ ] } "])
    if r < 0.65:
        return [value(d + 1) for _ in range(random.randint(0, 4))]
    return {random.choice(["a", "b", "k, :", " s ", "\\u00e9", "z" * 3]) + str(i): value(d + 1) for i in range(random.randint(0, 4))}
out = []
for i in range(400):
    row = {"ts": 1.25, "event": "e", "v": value(0)}
    want = json.dumps(row)
    for seps in [(",", ":"), (" ,", " : "), (",  ", ":\\t"), (", ", ": ")]:
        text = json.dumps(row, separators=seps)
        out.append([text, want])
    out.append(["  " + json.dumps(row, indent=1).replace("\\n", " ") + " \\t", want])
print(json.dumps(out))`;
    const cases = runPython(script, null) as [string, string][];
    let same = 0;
    for (const [text, want] of cases) {
      const got = respaced(text);
      if (text === want) {
        same++;
        expect(got).toBeNull();
      } else expect({ text, got }).toEqual({ text, got: want });
    }
    expect(same).toBe(400);
  });

  test("whitespace that would join two tokens, strings json.loads refuses or Python never writes: left as they are", () => {
    for (const text of [
      '{"a": [1 2]}',
      '{"a":tr ue}',
      '{"a":- 1}',
      '{"a":1.5 e3}',
      '{"a":"\u00e9"}', // raw UTF-8
      '{"a":"\\u0041"}', // a printable character escaped
      '{"a":"\\/"}',
      '{"a":"\\x"}', // an escape json.loads refuses
      '{"a":"unterminated}',
      '{"a": "b", "c": 1}', // already the writer's
      "   ",
      "",
    ]) {
      expect({ text, got: respaced(text) }).toEqual({ text, got: null });
    }
    // a string's spaces, commas and colons are its own
    expect(respaced('{"a , b":"x : y","n":[ 1 ,2 ]}')).toBe('{"a , b": "x : y", "n": [1, 2]}');
    // whitespace beside a quote joins no tokens (the kernel reads what follows)
    expect(respaced('{"a" :"b" }')).toBe('{"a": "b"}');
  });

  test("the output fits twice the line, the longest a line of separators makes", () => {
    const text = "[" + ",".repeat(999) + "]";
    const b = enc.encode(text);
    const out = new Uint8Array(2 * b.length);
    expect(respaceLine(b, 0, b.length, out)).toBe(1 + 2 * 999 + 1);
  });
});
