import { describe, expect, test } from "bun:test";
import { LineSplitter, pyStrip, type LineDialect } from "../../src/steps/lines.ts";
import { runPython } from "../helpers/python.ts";

function split(text: string, dialect: LineDialect, chunk: number, max = 1 << 20): (string | null)[] {
  const out: (string | null)[] = [];
  const s = new LineSplitter(dialect, (l) => out.push(l === null ? null : new TextDecoder().decode(l)), max);
  const bytes = new TextEncoder().encode(text);
  for (let i = 0; i < bytes.length; i += chunk) s.push(bytes.subarray(i, i + chunk));
  s.end();
  return out;
}

const SAMPLES = [
  "a\nb\r\nc\rd",
  "x\u2028y\u2029z\u0085w\x0bv\x0cu\x1ct\x1ds\x1er\n",
  "\r\n\r\n\n",
  "é\u00e2\u20ac\u2028\r",
  "trailing\n\n",
  "\u2027\u202a\u00c2\u0084 not breaks",
  "",
];

describe("LineSplitter", () => {
  test("matches Python str.splitlines() and text-mode iteration at every chunk size", () => {
    const py = runPython(
      `import json,sys,io
out=[]
for t in json.load(sys.stdin):
    # universal newlines: \\n, \\r\\n and a lone \\r end a line
    raw=[]; cur=""; i=0
    while i < len(t):
        c=t[i]
        if c=="\\n": raw.append(cur); cur=""
        elif c=="\\r":
            raw.append(cur); cur=""
            if i+1<len(t) and t[i+1]=="\\n": i+=1
        else: cur+=c
        i+=1
    if cur: raw.append(cur)
    out.append({"splitlines": t.splitlines(), "universal": raw})
print(json.dumps(out))`,
      SAMPLES,
    ) as { splitlines: string[]; universal: string[] }[];
    SAMPLES.forEach((t, i) => {
      for (const chunk of [1, 2, 3, 5, 1000]) {
        expect(split(t, "splitlines", chunk)).toEqual(py[i]!.splitlines);
        expect(split(t, "universal", chunk)).toEqual(py[i]!.universal);
      }
    });
  });

  test("overlong lines are reported as null and the next line is intact", () => {
    expect(split("short\n" + "x".repeat(50) + "\nafter", "universal", 7, 20)).toEqual(["short", null, "after"]);
  });

  test("pyStrip removes Python whitespace only", () => {
    expect(pyStrip("\x1c\x1f \u00a0a b\u3000\u2028\x85")).toBe("a b");
    expect(pyStrip("\ufeffa")).toBe("\ufeffa");
  });
});
