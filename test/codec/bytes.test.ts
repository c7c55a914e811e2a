/** The codec's byte copies and kept spans (src/codec/bytes.ts): every length either side of the loop's limit, at any offsets, into another array or apart within one. */
import { expect, test } from "bun:test";
import { copyTo, KeptSpan, spanIs } from "../../src/codec/bytes.ts";
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

test("KeptSpan: a kept span equals the same bytes anywhere and nothing else, grows for a longer one, reads back as its text", () => {
  const enc = new TextEncoder();
  const k = new KeptSpan();
  const row = enc.encode(`{"prev_hash":"${"ab".repeat(32)}","x":1}`);
  k.keep(row, 14, 78);
  expect(k.text()).toBe("ab".repeat(32));
  const other = enc.encode(`..${"ab".repeat(32)}..`);
  expect(k.equals(other, 2, 66)).toBe(true);
  expect(k.equals(other, 2, 65)).toBe(false);
  expect(k.equals(other, 1, 65)).toBe(false);
  const long = enc.encode("z".repeat(300));
  k.keep(long, 0, 300);
  expect([k.len, k.text(), k.equals(long, 0, 300), k.equals(row, 14, 78)]).toEqual([300, "z".repeat(300), true, false]);
  k.keep(row, 0, 0);
  expect([k.text(), k.equals(row, 5, 5)]).toEqual(["", true]);
});

test("spanIs: a span equals the bytes it holds, at any offset, and no span of another length", () => {
  const b = new TextEncoder().encode('x"event_hash"y');
  const name = new TextEncoder().encode("event_hash");
  expect([spanIs(b, 2, 12, name), spanIs(b, 1, 12, name), spanIs(b, 2, 11, name), spanIs(b, 3, 13, name)]).toEqual([true, false, false, false]);
  expect([spanIs(b, 2, 7, name, 5), spanIs(b, 0, 0, name, 0), spanIs(b, 0, 1, name, 0)]).toEqual([true, true, false]);
});
