/**
 * EventList (src/replay/fast-project.ts): the `--from-step` event list kept
 * as one token per distinct type and an id per event. Its text is the
 * tokens joined by ", " whatever the piece boundaries; a new type beyond
 * the list's bound is refused (the projection then reads the journal again).
 */
import { expect, test } from "bun:test";
import { appendEventProse, EventList } from "../../src/replay/fast-project.ts";
import { ByteSink } from "../../src/pyjson/encode-bytes.ts";
import { sanitizeCell } from "../../src/render/table.ts";

const enc = new TextEncoder();

function textOf(list: EventList): string {
  const pieces = Array.from(list.texts(), (b) => Buffer.from(b));
  return Buffer.concat(pieces).toString("latin1");
}

function push(list: EventList, token: string): boolean {
  // the token in the middle of a larger buffer, as the walk hands it over
  const b = enc.encode(`xx${token}yy`);
  return list.push(b, 2, b.length - 2);
}

test("the text is every event's token, in order, joined by ', ', across pieces and for a token longer than a piece", () => {
  const list = new EventList();
  const tokens: string[] = [];
  const kinds = ['"task_claimed"', '"tick_start"', '"a\\u00e9"', '""', `"${"L".repeat(3 << 20)}"`, '"tool_call"'];
  for (let i = 0; i < 400_000; i++) {
    // the long token only a few times; the others in an irregular order
    const t = i % 100_000 === 7 ? kinds[4]! : kinds[(i * 7 + (i >> 3)) % 6 === 4 ? 5 : (i * 7 + (i >> 3)) % 6]!;
    tokens.push(t);
    expect(push(list, t)).toBe(true);
  }
  expect(list.length).toBe(tokens.length);
  expect(textOf(list)).toBe(tokens.join(", "));
  // two bytes an event, the long token held once
  expect(list.bytes).toBeLessThan(2 * tokens.length + (4 << 20) + (1 << 20));
});

test("an empty list has no text; a list of one event has no separator", () => {
  const empty = new EventList();
  expect(textOf(empty)).toBe("");
  const one = new EventList();
  push(one, '"run_started"');
  expect(textOf(one)).toBe('"run_started"');
});

test("tokens that share a hash slot or a length stay distinct; the 32,769th distinct type is refused, known ones still taken", () => {
  const list = new EventList();
  const tokens: string[] = [];
  for (let i = 0; i < 1 << 15; i++) {
    const t = `"t${i.toString(36)}"`;
    tokens.push(t);
    expect(push(list, t)).toBe(true);
  }
  expect(push(list, '"one more"')).toBe(false);
  expect(push(list, '"t0"')).toBe(true);
  tokens.push('"t0"');
  expect(textOf(list)).toBe(tokens.join(", "));
});

test("appendEventProse: the event types of a joined text or of a piece of one, decoded and sanitized, joined by \", \"", () => {
  const prose = (t: string, first = true): [string, number] => {
    const out = new ByteSink(4);
    const n = appendEventProse(Buffer.from(t, "utf8"), out, first);
    return [Buffer.from(out.view()).toString("utf8"), n];
  };
  expect(prose('"task_claimed", "a\\u00e9", "q\\"uote\\\\", ""')).toEqual(['task_claimed, a\u00e9, q"uote\\, ', 4]);
  expect(prose(', "tick", "\\ud83d\\ude80"')).toEqual(["tick, \u{1F680}", 2]);
  expect(prose("")).toEqual(["", 0]);
  // a later piece: a separator before its first name
  expect(prose('"b", "c"', false)).toEqual([", b, c", 2]);
  // what sanitizeCell makes visible: escaped controls, a raw DEL, bidi and line separators; raw UTF-8 as it is
  const odd = ["bell\u0007", "del\x7f", "rtl\u202e", "ls\u2028", "caf\u00e9", "lone\udc80"];
  const text = odd.map((n) => JSON.stringify(n).replace(/[\u007f]/g, "\x7f")).join(", ");
  expect(prose(text)).toEqual([odd.map((n) => sanitizeCell(n)).join(", "), odd.length]);
  expect(prose('"raw caf\u00e9", "raw del \x7f"')).toEqual(["raw caf\u00e9, raw del \\x7f", 2]);
});
