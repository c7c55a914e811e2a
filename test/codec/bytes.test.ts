/** The codec's byte copies (src/codec/bytes.ts): every length either side of the loop's limit, at any offsets, into another array or apart within one. */
import { expect, test } from "bun:test";
import { copyTo } from "../../src/codec/bytes.ts";
import { Gen } from "../pyjson/gen.ts";

test("copyTo copies b[s, e) to o and returns the end, by its loop and by the native copy alike", () => {
  const g = new Gen(4242);
  const src = new Uint8Array(4096);
  for (let i = 0; i < src.length; i++) src[i] = g.int(256);
  for (let k = 0; k < 2000; k++) {
    const n = k < 200 ? k % 100 : g.int(3000);
    const s = g.int(src.length - n + 1);
    const same = g.chance(0.3);
    const to = same ? src.slice() : new Uint8Array(4096).fill(7);
    // within one array: the target span lies apart from the source (after it, or before it)
    const o = !same ? g.int(to.length - n + 1) : s + 2 * n <= to.length ? s + n : s - n;
    if (o < 0) continue;
    const before = to.slice();
    expect(copyTo(src, s, s + n, to, o)).toBe(o + n);
    const want = before.slice();
    want.set(src.subarray(s, s + n), o);
    expect(to).toEqual(want);
  }
});
