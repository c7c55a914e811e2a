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

describe("LineSplitter with a bulk probe", () => {
  /**
   * A probe taking every run of lines that start with "k" and hold no other
   * break (as the verify kernel takes canonical rows): the lines it takes
   * plus the ones sunk must be the lines of a plain split, numbered alike,
   * and nextLineStart must follow.
   */
  class KProbe {
    taken = 0;
    readonly lines: [string, number][] = [];
    constructor(private readonly splitter: () => LineSplitter) {}
    take(buf: Uint8Array, start: number, end: number, maxLineBytes: number): number {
      this.taken = 0;
      let p = start;
      for (;;) {
        const nl = buf.indexOf(0x0a, p);
        if (nl < 0 || nl >= end || buf[p] !== 0x6b || nl - p > maxLineBytes) break;
        const line = buf.subarray(p, nl);
        if (line.some((b) => b === 0x0d || b === 0x0b || b === 0x0c || (b >= 0x1c && b <= 0x1e) || b >= 0x80)) break;
        this.lines.push([new TextDecoder().decode(line), this.splitter().lines + this.taken + 1]);
        this.taken++;
        p = nl + 1;
      }
      return p;
    }
  }

  test("lines taken in bulk are numbered as if split, at every chunk size", () => {
    const text = "k1\nk2\nx\n\nk3\r\nk4\nk5\vk6\nk7\u2028\nk8\nkkkkkkkkkkkkkkkkkkkk\nk9\nlast";
    for (const dialect of ["splitlines", "universal"] as LineDialect[]) {
      for (const chunk of [1, 2, 3, 5, 8, 13, 100]) {
        const plain: [string | null, number][] = [];
        const mixed: [string | null, number][] = [];
        const ends: number[] = [];
        const plainEnds: number[] = [];
        const p = new LineSplitter(dialect, (l, n) => (plain.push([l && new TextDecoder().decode(l), n]), plainEnds.push(p.nextLineStart)), 16);
        let s: LineSplitter;
        const probe = new KProbe(() => s);
        s = new LineSplitter(dialect, (l, n) => (mixed.push([l && new TextDecoder().decode(l), n]), ends.push(s.nextLineStart)), 16, null, probe);
        const bytes = new TextEncoder().encode(text);
        for (let i = 0; i < bytes.length; i += chunk) {
          p.push(bytes.subarray(i, i + chunk));
          s.push(bytes.subarray(i, i + chunk));
        }
        p.end();
        s.end();
        const all = [...mixed, ...probe.lines].sort((a, b) => a[1] - b[1]);
        expect(all).toEqual(plain);
        expect(s.lines).toBe(p.lines);
        // Lines sunk after bulk-taken ones still know where the next line starts.
        expect(ends).toEqual(plainEnds.filter((_, i) => mixed.some(([, n]) => n === plain[i]![1])));
        if (chunk === 100) expect(probe.lines.length).toBeGreaterThan(4);
      }
    }
  });
});
