import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FAST_LINE_MAX, readFastLines } from "../../src/replay/fast-lines.ts";

const dir = mkdtempSync(join(tmpdir(), "fast-lines-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const dec = new TextDecoder();

describe("readFastLines: a line the fast handler declines is offered whole, re-spaced, before the exact reader", () => {
  test("the long handler gets the re-spaced text with the line's offset and length in the file; what it declines goes on to exact as written", () => {
    const long = "y".repeat(FAST_LINE_MAX);
    const lines = [
      '{"ts": 1.5, "event": "writer"}',
      '{"ts":2.5,"event":"compact","n":[1,2]}',
      ' {"ts" : 3.5 ,\t"event" : "spaced"} ',
      '{"ts":4.5,"event":"declined"}',
      '{"a": 1 2}',
      `{"ts":5.5,"event":"long","blob":"${long}"}`,
      "",
      '{"ts": 6.5, "event": "writer again"}',
    ];
    const path = join(dir, "spacings.jsonl");
    writeFileSync(path, lines.join("\n") + "\n");
    const offsets: number[] = [];
    lines.reduce((at, l) => (offsets.push(at), at + Buffer.byteLength(l) + 1), 0);
    const fast: string[] = [];
    const whole: [string, number, number, number][] = [];
    const exact: [string, number, number][] = [];
    for (const _ of readFastLines(path, {
      // the fast handler takes the writer's spelling only (as the kernels do)
      fast: (b, s, e) => {
        const text = dec.decode(b.subarray(s, e));
        if (!text.startsWith('{"ts": ')) return false;
        fast.push(text);
        return true;
      },
      long: (bytes, lineNo, offset, length) => {
        const text = dec.decode(bytes);
        whole.push([text.length > 100 ? `${text.slice(0, 40)}…` : text, lineNo, offset, length]);
        return !text.includes("declined");
      },
      exact: (v, bytes, lineNo, offset) => {
        exact.push([`${v.kind}: ${dec.decode(bytes)}`, lineNo, offset]);
      },
      done: () => false,
    })) {
      /* one chunk */
    }
    expect(fast).toEqual([lines[0], lines[7]]);
    expect(whole).toEqual([
      ['{"ts": 2.5, "event": "compact", "n": [1, 2]}', 2, offsets[1]!, lines[1]!.length],
      ['{"ts": 3.5, "event": "spaced"}', 3, offsets[2]!, lines[2]!.length],
      ['{"ts": 4.5, "event": "declined"}', 4, offsets[3]!, lines[3]!.length],
      // a long line is offered as it is first (this handler takes it so)
      [`${lines[5]!.slice(0, 40)}…`, 6, offsets[5]!, lines[5]!.length],
    ]);
    // re-spacing `1 2` would join two tokens: not offered; a declined line reaches exact as written
    expect(exact).toEqual([
      [`row: ${lines[3]}`, 4, offsets[3]!],
      [`discarded: ${lines[4]}`, 5, offsets[4]!],
    ]);
  });
});
