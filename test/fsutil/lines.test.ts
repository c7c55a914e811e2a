import { describe, expect, test } from "bun:test";
import { lineFeedsIn, LineSplitter, type LineDialect } from "../../src/fsutil/lines.ts";
import { pyStrip } from "../../src/pyjson/python.ts";
import { runPython } from "../helpers/python.ts";

function split(text: string, dialect: LineDialect, chunk: number, max = 1 << 20): (string | null)[] {
  const out: (string | null)[] = [];
  const s = new LineSplitter(dialect, (l) => out.push(l === null ? null : new TextDecoder().decode(l)), max);
  const bytes = new TextEncoder().encode(text);
  for (let i = 0; i < bytes.length; i += chunk) s.push(bytes.subarray(i, i + chunk));
  s.end();
  return out;
}

/** Python's universal newlines on a str: \\n, \\r\\n and a lone \\r end a line. */
const PY_UNIVERSAL = `
def universal(t):
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
    return raw
`;

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
${PY_UNIVERSAL}
out=[]
for t in json.load(sys.stdin):
    out.append({"splitlines": t.splitlines(), "universal": universal(t)})
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

  test("a blank line is handed out with its number and offsets, and with no view made of it (one shared empty line)", () => {
    for (const dialect of ["lf", "universal", "splitlines"] as LineDialect[]) {
      const seen: { line: Uint8Array; n: number; next: number }[] = [];
      const s: LineSplitter = new LineSplitter(dialect, (l, n) => seen.push({ line: l!, n, next: s.nextLineStart }));
      s.push(new TextEncoder().encode("a\n\nb\n\n\n"));
      s.end();
      expect(seen.map((x) => [x.line.length, x.n, x.next])).toEqual([[1, 1, 2], [0, 2, 3], [1, 3, 5], [0, 4, 6], [0, 5, 7]]);
      const blanks = seen.filter((x) => x.line.length === 0).map((x) => x.line);
      expect(blanks.every((b) => b === blanks[0])).toBe(true);
    }
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

describe("LineSplitter: the cap and offsets, every dialect", () => {
  /** Python's split of `bytes` (latin-1: one char per byte), a line over `cap` bytes as null, and each line's end offset. */
  const pySplit = (cases: string[], cap: number) =>
    runPython(
      `import json,sys
${PY_UNIVERSAL}
cap=${cap}
out=[]
for h in json.load(sys.stdin):
    t=bytes.fromhex(h).decode("latin-1")
    res={}
    # splitlines on the UTF-8 text: break chars map back to their UTF-8 bytes
    u=bytes.fromhex(h).decode("utf-8","surrogateescape")
    sl=[l.encode("utf-8","surrogateescape") for l in u.splitlines()]
    res["splitlines"]=[None if len(l)>cap else l.hex() for l in sl]
    res["universal"]=[None if len(l)>cap else l.encode("latin-1").hex() for l in universal(t)]
    lf=t.split("\\n")
    if lf and lf[-1]=="": lf.pop()
    res["lf"]=[None if len(l)>cap else l.encode("latin-1").hex() for l in lf]
    out.append(res)
print(json.dumps(out))`,
      cases,
    ) as Record<LineDialect, (string | null)[]>[];

  test("random bytes x chunk sizes: Python's lines, a line over the cap as null (also when a CR or U+2028 split it from its neighbours)", () => {
    const alphabet = [0x0a, 0x0d, 0x0b, 0x1c, 0x61, 0x62, 0xc2, 0x85, 0xe2, 0x80, 0xa8, 0xa9];
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
    const cases: Uint8Array[] = [];
    for (let k = 0; k < 200; k++) {
      const b = new Uint8Array(rnd(60));
      // Long runs of one letter make lines that pass the cap of 6.
      for (let i = 0; i < b.length; i++) b[i] = rnd(3) === 0 ? alphabet[rnd(alphabet.length)]! : 0x61;
      cases.push(b);
    }
    const cap = 6;
    const py = pySplit(cases.map((c) => Buffer.from(c).toString("hex")), cap);
    cases.forEach((bytes, i) => {
      for (const dialect of ["lf", "universal", "splitlines"] as LineDialect[]) {
        for (const chunk of [1, 2, 3, 7, 1000]) {
          const out: (string | null)[] = [];
          const s = new LineSplitter(dialect, (l) => out.push(l === null ? null : Buffer.from(l).toString("hex")), cap);
          for (let p = 0; p < bytes.length; p += chunk) s.push(bytes.subarray(p, p + chunk));
          s.end();
          expect({ i, dialect, chunk, out }).toEqual({ i, dialect, chunk, out: py[i]![dialect] });
        }
      }
    });
  });

  test("CR-only lines are split however long the file: a 40-byte run of 4-byte lines under a cap of 6", () => {
    const text = "abcd\r".repeat(8);
    for (const chunk of [1, 3, 40]) {
      const out: (string | null)[] = [];
      const s = new LineSplitter("universal", (l) => out.push(l === null ? null : new TextDecoder().decode(l)), 6);
      const bytes = new TextEncoder().encode(text);
      for (let p = 0; p < bytes.length; p += chunk) s.push(bytes.subarray(p, p + chunk));
      s.end();
      expect(out).toEqual(Array(8).fill("abcd"));
    }
  });

  test("offsets start at the given offset; a line held over a chunk is detached on request", () => {
    const ends: number[] = [];
    const kept: Uint8Array[] = [];
    let s: LineSplitter;
    s = new LineSplitter("lf", (l) => (ends.push(s.nextLineStart), kept.push(s.detach(l!))), 100, null, null, 1000);
    s.push(new TextEncoder().encode("ab\ncd"));
    s.push(new TextEncoder().encode("ef\ng\r\n"));
    s.end();
    expect(ends).toEqual([1003, 1008, 1011]);
    expect(kept.map((k) => new TextDecoder().decode(k))).toEqual(["ab", "cdef", "g\r"]);
  });
});

test("lineFeedsIn counts the line feeds before n only (a reused buffer's stale bytes after it are not read)", () => {
  const b = new TextEncoder().encode("a\nb\r\n\n\rc\n|\n\n");
  const bar = b.indexOf(0x7c);
  expect([lineFeedsIn(b, 0), lineFeedsIn(b, 2), lineFeedsIn(b, bar), lineFeedsIn(b, b.length)]).toEqual([0, 1, 4, 6]);
  expect(lineFeedsIn(new Uint8Array(0), 0)).toBe(0);
});
