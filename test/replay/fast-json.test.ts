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
import { HOSTILE_LINES, writerRows } from "./hostile-rows.ts";

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
});
