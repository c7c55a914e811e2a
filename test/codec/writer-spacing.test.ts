import { describe, expect, test } from "bun:test";
import { RESPACED_MAX, Respacer } from "../../src/codec/writer-spacing.ts";
import { runPython } from "../helpers/python.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

function respaced(text: string): string | null {
  const r = new Respacer();
  const b = enc.encode(text);
  return r.respace(b, 0, b.length) < 0 ? null : dec.decode(r.text());
}

describe("Respacer: a row in the writer's spacing, every other byte as it is", () => {
  test("rows Python spells with other separators, whitespace or raw UTF-8 come back as json.dumps' default spelling", () => {
    // Python writes each value in several spellings; the re-spaced text must be json.dumps(json.loads(text)),
    // or nothing where a raw DEL stands (Python escapes it; no fast path takes it raw)
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
        for ascii in (True, False):
            text = json.dumps(row, separators=seps, ensure_ascii=ascii)
            out.append([text, None if "\\x7f" in text else want])
    out.append(["  " + json.dumps(row, indent=1).replace("\\n", " ") + " \\t", want])
print(json.dumps(out))`;
    const cases = runPython(script, null) as [string, string | null][];
    let same = 0;
    let raw = 0;
    for (const [text, want] of cases) {
      const got = respaced(text);
      if (text === want) {
        same++;
        expect(got).toBeNull();
      } else expect({ text, got }).toEqual({ text, got: want });
      if (want === null) raw++;
    }
    // the writer's own spelling of each row, and many with a raw DEL
    expect(same).toBeGreaterThanOrEqual(400);
    expect(raw).toBeGreaterThan(50);
  });

  test("whitespace that would join two tokens, strings json.loads refuses or Python never writes: left as they are", () => {
    for (const text of [
      '{"a": [1 2]}',
      '{"a":tr ue}',
      '{"a":- 1}',
      '{"a":1.5 e3}',
      '{"a":"\x7f"}', // a raw DEL
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
    // raw UTF-8 as ensure_ascii escapes it: two, three and four bytes (a surrogate pair)
    expect(respaced('{"a":"\u00e9\u4e2d\u{1f600}x"}')).toBe('{"a": "\\u00e9\\u4e2d\\ud83d\\ude00x"}');
    // invalid UTF-8 (an encoded surrogate): json.loads refuses it, left as it is
    expect(new Respacer().respace(Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]), 0, 11)).toBe(-1);
    // a string's spaces, commas and colons are its own
    expect(respaced('{"a , b":"x : y","n":[ 1 ,2 ]}')).toBe('{"a , b": "x : y", "n": [1, 2]}');
    // whitespace beside a quote joins no tokens (the kernel reads what follows)
    expect(respaced('{"a" :"b" }')).toBe('{"a": "b"}');
  });

  test("the output fits RESPACED_MAX times the line: separators, and two- or four-byte UTF-8", () => {
    // rows (the index reads only rows): separators as dense as a row holds them, 2- and 4-byte UTF-8 (3x)
    for (const [text, n] of [['{"a":[' + "[],".repeat(999) + "[]]}", 7 + 4 * 999 + 2 + 2], ['{"a":"' + "\u00e9".repeat(500) + '"}', 7 + 6 * 500 + 2], ['{"a":"' + "\u{1f600}".repeat(250) + '"}', 7 + 12 * 250 + 2], ['{"a":[' + '"\u00e9",'.repeat(100) + '"x"]}', 7 + 100 * 10 + 5]] as const) {
      const b = enc.encode(text);
      expect(b.length * RESPACED_MAX).toBeGreaterThanOrEqual(n);
      expect({ text: text.slice(0, 12), n: new Respacer().respace(b, 0, b.length) }).toEqual({ text: text.slice(0, 12), n });
    }
  });
});
