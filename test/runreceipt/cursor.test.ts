/**
 * The run receipt's byte cursor (src/runreceipt/cursor.ts) cuts values with
 * the codec's string reader, reading on from where it stopped when a string
 * runs past the window. Held here against the value texts it was given, on
 * an input that returns a few bytes per read (so every string, escape and
 * UTF-8 sequence is cut by the window somewhere) and on a whole-file one;
 * and what it refuses is refused the same whatever the window.
 */
import { describe, expect, test } from "bun:test";
import type { OpenInput } from "../../src/fsutil/input.ts";
import { ByteCursor, ScanTrouble, ValueTooLarge } from "../../src/runreceipt/cursor.ts";
import { Gen, prng } from "../pyjson/gen.ts";

const enc = new TextEncoder();

/** An in-memory input whose reads return 1..most bytes (seeded), or all that is asked for. */
function input(bytes: Uint8Array, most: number | null, seed = 1): OpenInput {
  const rand = prng(seed);
  return {
    path: "<test>",
    fd: -1,
    stream: false,
    size: bytes.length,
    bytesRead: 0,
    read(buf, off, len, pos) {
      const cap = most === null ? len : Math.min(len, 1 + Math.floor(rand() * most));
      const n = Math.max(0, Math.min(cap, bytes.length - pos));
      buf.set(bytes.subarray(pos, pos + n), off);
      this.bytesRead += n;
      return n;
    },
    close() {},
  };
}

/** The values of a JSON array, each cut by the cursor, as bytes. */
function cutAll(doc: Uint8Array, most: number | null, seed = 1): Uint8Array[] {
  const cur = new ByteCursor(input(doc, most, seed));
  cur.skipWs();
  cur.expect(0x5b);
  const out: Uint8Array[] = [];
  for (;;) {
    cur.skipWs();
    out.push(cur.cutValue().bytes.slice());
    cur.skipWs();
    if (cur.peek() === 0x5d) return out;
    cur.expect(0x2c);
  }
}

/** What cutting the array's values throws (ScanTrouble's message), or "ok". */
function refusal(doc: Uint8Array, most: number | null): string {
  try {
    cutAll(doc, most);
    return "ok";
  } catch (err) {
    if (!(err instanceof ScanTrouble)) throw err;
    return err.message;
  }
}

const concat = (...parts: (string | Uint8Array)[]): Uint8Array => Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : p)));

describe("the byte cursor cuts values with the codec's string reader", () => {
  const g = new Gen(47001);
  const values: string[] = [];
  for (let i = 0; i < 400; i++) values.push(i % 3 === 0 ? g.stringText(40) : g.valueText(0));
  // escapes and four-byte characters at every offset of a long string, and one past the first window
  values.push(JSON.stringify("\u{1F680}\\\"\n\u00e9\u4e2d/".repeat(300)));
  values.push(JSON.stringify("a\u0001\u2028".repeat(100_000)));
  values.push(`{"k": [${JSON.stringify("\\".repeat(5_000))}, "\\u00e9\\ud83d\\ude80", {"": "}]"}]}`);
  const doc = enc.encode(`[${values.join(", ")}]`);

  test("every value's bytes, on reads of a few bytes and on whole reads", () => {
    const want = values.map((v) => enc.encode(v));
    for (const [most, seed] of [[null, 1], [13, 2], [3, 3]] as const) {
      const got = cutAll(doc, most, seed);
      expect(got.length).toBe(want.length);
      got.forEach((b, i) => expect(Buffer.from(b).equals(Buffer.from(want[i]!))).toBe(true));
    }
  });

  test("a string json.loads refuses is refused whatever the window; one cut off by the end is unterminated", () => {
    const cases: [Uint8Array, string][] = [
      [concat('["ok", "a\\q", 1]'), "invalid JSON value"],
      [concat('["a\\u12g4", 1]'), "invalid JSON value"],
      [concat('["a\u0001b"]'), "invalid JSON value"],
      [concat('["a', new Uint8Array([0xff]), '"]'), "invalid UTF-8"],
      [concat('["a', new Uint8Array([0xed, 0xa0, 0x80]), '"]'), "invalid UTF-8"],
      [concat('[{"k": ["a\\x"]}]'), "invalid JSON value"],
      [concat('["abc'), "unterminated string"],
      [concat('["ab\\"'), "unterminated string"],
      [concat('["a\\u12'), "invalid JSON value"],
      [concat('["a', new Uint8Array([0xe4, 0xb8])), "invalid UTF-8"],
      [concat('[{"k": "v"'), "unterminated container"],
      [concat('["', "x".repeat(70_000), '\\q"]'), "invalid JSON value"],
      [concat('["', "x".repeat(70_000)), "unterminated string"],
    ];
    for (const [doc, want] of cases) {
      for (const most of [null, 1, 5]) expect(`${most}: ${refusal(doc, most)}`).toBe(`${most}: ${want}`);
    }
  });
});

describe("the longest value", () => {
  test("a value past the cursor's limit is refused, not buffered; a caller may raise the limit for one value", () => {
    const doc = enc.encode(`["${"x".repeat(300_000)}", 1]`);
    const cur = new ByteCursor(input(doc, null), 0, 100_000);
    cur.expect(0x5b);
    expect(() => cur.cutValue()).toThrow(ValueTooLarge);
    const raised = new ByteCursor(input(doc, null), 0, 100_000);
    raised.expect(0x5b);
    raised.limit = 1 << 20;
    expect(raised.cutValue().bytes.length).toBe(300_002);
  });
});
