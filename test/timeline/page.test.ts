import { describe, expect, test } from "bun:test";
import { ByteSink } from "../../src/pyjson/encode-bytes.ts";
import { appendScriptString, appendText, dataBlock, eventsBlock, scriptJson, utf16Length } from "../../src/timeline/page.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The reference: the JSON string of `text.slice(0, max)` as scriptJson writes it, without its quotes. */
function reference(text: string, max?: number): string {
  return scriptJson(max === undefined ? text : text.slice(0, max)).slice(1, -1);
}

/** appendScriptString of text's UTF-8, decoded, and the UTF-16 length it reported. */
function bytePath(text: string, max?: number, initial = 16): { out: string; units: number } {
  const sink = new ByteSink(initial);
  sink.ascii("x");
  const b = encoder.encode(text);
  const units = appendScriptString(sink, b, 0, b.length, max);
  return { out: decoder.decode(sink.view()).slice(1), units };
}

const PIECES = ["a", "Z", " ", '"', "\\", "<", ">", "&", "'", "/", "\n", "\t", "\b", "\f", "\r", "\u0000", "\u001f", "\u007f", "\u0080", "\u009f",
  "é", "€", "\u2027", "\u2028", "\u2029", "\u202a", "\u2030", "😀", "𝄞", "\ufeff", "\uffff", "ü", "中", "…"];

/** A seeded string of `n` pieces. */
function randomText(seed: number, n: number): string {
  let x = seed >>> 0 || 1;
  let s = "";
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    s += PIECES[(x >>> 0) % PIECES.length];
  }
  return s;
}

describe("appendScriptString: scriptJson's bytes of a string, made from its UTF-8", () => {
  test("every piece alone, and every pair", () => {
    for (const a of PIECES) {
      for (const b of PIECES) {
        const text = a + b;
        const r = bytePath(text);
        expect(r.out).toBe(reference(text));
        expect(r.units).toBe(reference(text).length);
      }
    }
  });

  test("random texts, whole and cut at every length (a pair cut in half keeps its high surrogate, escaped)", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const text = randomText(seed, 40);
      for (let max = 0; max <= text.length + 1; max++) {
        const r = bytePath(text, max, 1);
        expect(r.out).toBe(reference(text, max));
        expect(r.units).toBe(reference(text, max).length);
      }
    }
  });

  test("a text that grows six times as it is escaped, from a small buffer", () => {
    const text = "<>&\u2028".repeat(5000) + "plain".repeat(100);
    const r = bytePath(text, undefined, 1);
    expect(r.out).toBe(reference(text));
  });

  test("utf16Length counts what a string's length counts", () => {
    for (let seed = 1; seed <= 50; seed++) {
      const text = randomText(seed, 100);
      const b = encoder.encode(text);
      expect(utf16Length(b, 0, b.length)).toBe(text.length);
    }
  });
});

describe("eventsBlock and appendText", () => {
  test("an events block of items joined by commas is dataBlock of the items", () => {
    const items = [[1, null, "tick_start", "", "", "", "{}"], [2, 5, "é<x>", "a\u2028", "t", "d", '{"k": "\\u00e9"}']];
    const sink = new ByteSink(4);
    let units = 0;
    items.forEach((item, i) => {
      if (i > 0) sink.byte(0x2c);
      units += appendText(sink, scriptJson(item));
    });
    expect(decoder.decode(eventsBlock(sink.view()))).toBe(dataBlock("events", items));
    expect(units).toBe(items.map((i) => scriptJson(i).length).reduce((a, b) => a + b));
  });
});
