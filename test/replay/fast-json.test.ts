/**
 * RowTranscoder (src/replay/fast-json.ts) against the exact renderer: a
 * row it takes comes out as `renderJson(row, 2)` (`row`) or
 * `renderJson(row, null)` (`rowInline`, the timeline page's payload text)
 * of the parsed row, byte for byte; one it declines leaves no output.
 */
import { describe, expect, test } from "bun:test";
import { classifyLine } from "../../src/journal/reader.ts";
import { renderJson } from "../../src/render/json.ts";
import { RowTranscoder } from "../../src/replay/fast-json.ts";
import { TOP_LEVEL_FROM } from "../../src/codec/row-index.ts";
import { HOSTILE_LINES, RAW_LINES, writerRows } from "./hostile-rows.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
const LINES = [...writerRows(120), ...HOSTILE_LINES, '{"a": {}, "b": [], "c": [{}, []], "d": "x"}', '{"k":[1,2,{"a":"b"}],"e":"compact"}'];

describe("RowTranscoder = renderJson of the parsed row", () => {
  for (const [name, inline] of [
    ["rowInline: renderJson(row, null)", true],
    ["row: renderJson(row, 2)", false],
  ] as const) {
    test(name, () => {
      const tc = new RowTranscoder();
      let taken = 0;
      for (const line of LINES) {
        const b = enc.encode(line.trim());
        tc.reset();
        tc.append(enc.encode("prefix"));
        const ok = inline ? tc.rowInline(b, 0, b.length) : tc.row(b, 0, b.length, 0);
        const out = dec.decode(tc.buf.subarray(6, tc.len));
        if (!ok) {
          expect(tc.len).toBe(6);
          continue;
        }
        taken++;
        const v = classifyLine(b);
        expect(v.kind).toBe("row");
        if (v.kind === "row") expect(out).toBe(renderJson(v.row, inline ? null : 2));
      }
      expect(taken).toBeGreaterThan(120);
    });
  }

  test("huge rows, key order, and bytes no reader takes: rendered exactly or declined, never in between", () => {
    const unit = "\\u00e9 \\ud83d\\ude00 \\ud800 lone \\n\\t\\\"q\\\" \\/ \\u001b[0m plain text ";
    const esc = unit.repeat(30_000);
    const long = `{"event": "long", "out": "${esc}", "nested": {"z": [1, 2.5, "${unit.repeat(100)}"], "a": null}}`;
    const dense = `{"event": "dense", "n": [${Array.from({ length: 600_000 }, (_, i) => i % 10).join(",")}]}`;
    const sortedMany = "{" + Array.from({ length: 90 }, (_, i) => `"k${String(i).padStart(3, "0")}": ${i}`).join(", ") + "}";
    const unsortedMany = "{" + Array.from({ length: 90 }, (_, i) => `"k${String(89 - i).padStart(3, "0")}": ${i}`).join(", ") + "}";
    const unsortedDup = "{" + Array.from({ length: 10 }, (_, i) => `"k${9 - i}": ${i}`).join(", ") + ', "k3": 0}';
    // a map keyed by path in the order it was filled: keys sharing their head and tail, up to the repeat check's 1024
    const paths = (n: number) => Array.from({ length: n }, (_, i) => `"src/module_${String((i * 7919) % n).padStart(4, "0")}.py": ${i}`);
    const unsortedPaths = "{" + paths(1024).join(", ") + "}";
    const unsortedPathsDup = "{" + paths(1000).join(", ") + ', "src/module_0500.py": 0}';
    const unsortedTooMany = "{" + paths(1025).join(", ") + "}";
    expect(long.length).toBeGreaterThan(TOP_LEVEL_FROM);
    expect(dense.length).toBeGreaterThan(TOP_LEVEL_FROM);
    const tc = new RowTranscoder();
    const cases: [Uint8Array, boolean][] = [
      [enc.encode(long), true],
      [enc.encode('{"event": "after a long one", "s": "\\u00e9"}'), true],
      [enc.encode(dense), false], // past the module's tape budget for a huge row: the exact path's
      [enc.encode(sortedMany), true],
      [enc.encode(unsortedMany), true], // keys out of order, more than the pairwise check takes
      [enc.encode(unsortedDup), false],
      [enc.encode(unsortedPaths), true],
      [enc.encode(`{"event": "coverage", "by_file": ${unsortedPaths}}`), true],
      [enc.encode(unsortedPathsDup), false],
      [enc.encode(unsortedTooMany), false], // more than the repeat check's table holds
      [enc.encode('{"b": 1, "\\u00e9": 2, "a": 3, "\\n": 4}'), true], // escaped keys out of order, in Python's spelling
      [enc.encode('{"b": 1, "\\u00e9": 2, "a": 3, "éx": 4}'), false], // beside raw UTF-8: two spellings could be one key
      [enc.encode('{"b": 1, "\\u00e9": 2, "\\u00E9": 3}'), false], // the same key twice, spelled two ways
      ...RAW_LINES.map((b): [Uint8Array, boolean] => [b, false]),
    ];
    for (const [b, takes] of cases) {
      for (const inline of [false, true]) {
        tc.reset();
        const ok = inline ? tc.rowInline(b, 0, b.length) : tc.row(b, 0, b.length, 4);
        expect(ok).toBe(takes);
        if (!ok) {
          expect(tc.len).toBe(0);
          continue;
        }
        const v = classifyLine(b);
        if (v.kind !== "row") throw new Error("not a row");
        const want = inline ? renderJson(v.row, null) : renderJson(v.row, 2).replace(/^/gm, "    ");
        expect(dec.decode(tc.buf.subarray(0, tc.len)) === want).toBe(true);
      }
    }
  });

  test("an object's keys out of order: declined exactly when one repeats (any length, shared heads and tails, nested)", () => {
    // keys that share their first and last four bytes, keys under four bytes, the empty key: equal keys must be
    // found whatever the table does with them, and keys that only look alike must not be taken for equal
    const names = ["", "a", "b", "ab", "ba", "abc", "abcd", "abce", "abcdX_abcd", "abcdY_abcd", "abcdXY_abcd", "prev_hash", "event_hash", "payload_hash", "k".repeat(40), "k".repeat(41)];
    let seed = 7;
    const rand = (n: number): number => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);
    const tc = new RowTranscoder();
    let declined = 0;
    let taken = 0;
    for (let round = 0; round < 600; round++) {
      const keys: string[] = [];
      const count = 2 + rand(names.length - 1);
      const pool = [...names];
      while (keys.length < count) keys.push(pool.splice(rand(pool.length), 1)[0]!);
      const repeats = round % 3 === 0;
      if (repeats) keys.splice(rand(keys.length + 1), 0, keys[rand(keys.length)]!);
      const inner = `{${keys.map((k, i) => `"${k}": ${i}`).join(", ")}}`;
      const nested = round % 2 === 0;
      const line = nested ? `{"event": "x", "v": ${inner}}` : inner;
      const b = enc.encode(line);
      const v = classifyLine(b);
      if (v.kind !== "row") throw new Error("not a row");
      const sorted = keys.every((k, i) => i === 0 || keys[i - 1]! < k);
      tc.reset();
      const ok = tc.rowInline(b, 0, b.length);
      // a repeated key declines (even in order: a key equal to the one before is not after it)
      expect(ok).toBe(!repeats);
      if (ok) {
        taken++;
        expect(dec.decode(tc.buf.subarray(0, tc.len))).toBe(renderJson(v.row, null));
      } else declined++;
      if (!sorted) expect(keys.length).toBeGreaterThan(1);
    }
    expect(taken).toBeGreaterThan(300);
    expect(declined).toBeGreaterThan(150);
  });
});
