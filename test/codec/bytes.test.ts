/** The codec's byte copies and kept spans (src/codec/bytes.ts): every length either side of the loop's limit, at any offsets, into another array or apart within one. */
import { expect, test } from "bun:test";
import { asciiText, copyTo, KeptSpan, spanIs } from "../../src/codec/bytes.ts";
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

test("asciiText: the span's text whichever array was read last, through views at an offset and a memory that grew", () => {
  const g = new Gen(4343);
  const latin1 = new TextDecoder("latin1");
  const whole = new Uint8Array(8192);
  for (let i = 0; i < whole.length; i++) whole[i] = 0x20 + g.int(0x5f);
  // views of one buffer at other offsets are other arrays: each read from its own start
  const arrays = [whole, whole.subarray(1), whole.subarray(777, 5000), new Uint8Array(whole.slice(3))];
  for (let k = 0; k < 3000; k++) {
    const a = arrays[g.int(arrays.length)]!;
    const s = g.int(a.length);
    const e = s + g.int(Math.min(80, a.length - s) + 1);
    expect(asciiText(a, s, e)).toBe(latin1.decode(a.subarray(s, e)));
  }
  // a WebAssembly memory's view is detached when it grows: the new view reads the new bytes
  const mem = new WebAssembly.Memory({ initial: 1 });
  const before = new Uint8Array(mem.buffer);
  before.set(new TextEncoder().encode("1.5e-07"), 100);
  expect(asciiText(before, 100, 107)).toBe("1.5e-07");
  mem.grow(1);
  const after = new Uint8Array(mem.buffer);
  after.set(new TextEncoder().encode("2.5"), 100);
  after.set(new TextEncoder().encode("9.75"), 70000);
  expect([asciiText(after, 100, 107), asciiText(after, 70000, 70004)]).toEqual(["2.5e-07", "9.75"]);
});
