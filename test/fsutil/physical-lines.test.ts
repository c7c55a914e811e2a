/** Physical lines: universal newlines on bytes, across every chunk boundary, like Python's text mode. */
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { physicalLines } from "../../src/journal/index.ts";
import { claimedLines, contentEnd } from "../../src/fsutil/lines.ts";
import { runPython } from "../helpers/python.ts";
import { Gen } from "../pyjson/gen.ts";
import { tempDirs } from "../journal/tmp.ts";

const dirs = tempDirs("lines");
afterAll(() => dirs.cleanup());

function linesOf(path: string, chunkSize?: number, endOffset?: number) {
  const out: { index: number; start: number; end: number; hex: string }[] = [];
  // Bytes are only valid until the next line is requested: copy them now.
  for (const l of physicalLines(path, { chunkSize, endOffset })) {
    out.push({ index: l.index, start: l.start, end: l.end, hex: Buffer.from(l.bytes).toString("hex") });
  }
  return out;
}

describe("physicalLines", () => {
  test("\\n, \\r\\n and lone \\r each end a line; blank lines count; no phantom last line", () => {
    const dir = dirs.make();
    const p = join(dir, "j");
    writeFileSync(p, "a\nb\r\nc\rd\n\ne");
    expect(linesOf(p).map((l) => Buffer.from(l.hex, "hex").toString())).toEqual(["a", "b", "c", "d", "", "e"]);
    writeFileSync(p, "a\n");
    expect(linesOf(p).length).toBe(1);
    writeFileSync(p, "");
    expect(linesOf(p)).toEqual([]);
    expect(linesOf(join(dir, "missing"))).toEqual([]);
  });

  test("byte offsets point at line starts; endOffset reads a prefix snapshot", () => {
    const dir = dirs.make();
    const p = join(dir, "j");
    writeFileSync(p, "ab\r\ncd\ref\n");
    expect(linesOf(p).map((l) => [l.start, l.end])).toEqual([[0, 2], [4, 6], [7, 9]]);
    expect(linesOf(p, undefined, 5).map((l) => l.hex)).toEqual(["6162", "63"]);
  });

  test("300 random byte files x chunk sizes 1..7: identical to Python universal-newline splitting", () => {
    const dir = dirs.make();
    const g = new Gen(2718);
    const files: string[] = [];
    const contents: string[] = [];
    const alphabet = [0x0a, 0x0d, 0x0d, 0x0a, 0x41, 0x7b, 0xc3, 0xa9, 0xff, 0x20, 0x1c, 0x85];
    for (let i = 0; i < 300; i++) {
      const bytes = new Uint8Array(g.int(40));
      for (let k = 0; k < bytes.length; k++) bytes[k] = g.pick(alphabet);
      const p = join(dir, `f${i}`);
      writeFileSync(p, bytes);
      files.push(p);
      contents.push(Buffer.from(bytes).toString("hex"));
    }
    const py = runPython(
      `
import io, json, sys
out = []
for h in json.load(sys.stdin):
    # latin-1 maps bytes 1:1, so the split is exactly Python's universal newlines on bytes
    f = io.TextIOWrapper(io.BytesIO(bytes.fromhex(h)), encoding="latin-1", newline=None)
    out.append([l.rstrip("\\n").encode("latin-1").hex() for l in f])
print(json.dumps(out))
`,
      contents,
    ) as string[][];
    for (const chunk of [1, 2, 3, 5, 7, 1 << 20]) {
      const ours = files.map((f) => linesOf(f, chunk).map((l) => l.hex));
      expect(ours).toEqual(py);
    }
  });

  test("claimedLines: claimed and yielded lines together are physicalLines', in file order, with a null after every chunk", () => {
    const dir = dirs.make();
    const g = new Gen(31415);
    const alphabet = [0x0a, 0x0a, 0x0d, 0x41, 0x41, 0x42, 0x20];
    for (let i = 0; i < 200; i++) {
      const bytes = new Uint8Array(g.int(60));
      for (let k = 0; k < bytes.length; k++) bytes[k] = g.pick(alphabet);
      const p = join(dir, `c${i}`);
      writeFileSync(p, bytes);
      for (const chunk of [1, 3, 7, 1 << 20]) {
        const want = linesOf(p, chunk).map((l) => `${l.index}:${l.hex}`);
        const got: string[] = [];
        let nulls = 0;
        let lineNo = 0;
        const claim = (b: Uint8Array, s: number, e: number, n: number): boolean => {
          const ce = contentEnd(b, s, e);
          // lines starting with A and holding no other CR (a break of its own) are claimed
          if (b[s] !== 0x41 || b.subarray(s, ce).includes(0x0d)) return false;
          expect(n).toBe(lineNo + 1);
          got.push(`${n - 1}:${Buffer.from(b.subarray(s, ce)).toString("hex")}`);
          return true;
        };
        for (const l of claimedLines(p, { chunkSize: chunk }, (b, s, e, n) => {
          const taken = claim(b, s, e, n);
          if (taken) lineNo = n;
          return taken;
        })) {
          if (l === null) {
            nulls++;
            continue;
          }
          lineNo = l.index + 1;
          got.push(`${l.index}:${Buffer.from(l.bytes).toString("hex")}`);
        }
        expect(got).toEqual(want);
        expect(nulls).toBe(Math.ceil(bytes.length / chunk));
      }
    }
  });
});
