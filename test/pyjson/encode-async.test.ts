/**
 * The event-loop-friendly encoders `journal record` writes a long row with
 * (src/pyjson/encode.ts encodeRawAsync, dumpsRowChunksAsync,
 * sha256PartsAsync) give exactly the bytes of the synchronous ones, for
 * hostile JSON text of every spelling and for arrays long enough to take
 * turns of the event loop.
 */
import { describe, expect, test } from "bun:test";
import { isUtf8 } from "node:buffer";
import { dumpsRowBytes, dumpsRowChunks, dumpsRowChunksAsync, sha256Parts, sha256PartsAsync } from "../../src/pyjson/encode.ts";
import { parseRowBytes } from "../../src/pyjson/row.ts";
import { PyRaw, type PyLike } from "../../src/pyjson/types.ts";
import { Gen } from "./gen.ts";

const enc = new TextEncoder();

/** A row whose members stay bytes (PyRaw; strings too with `strings`), as `journal record` parses a long line. */
function rowOf(text: string, strings = false): Map<string, PyLike> | null {
  const b = enc.encode(text);
  if (!isUtf8(b)) return null;
  let v;
  try {
    v = parseRowBytes(b, 0, strings ? 0 : Infinity);
  } catch {
    return null;
  }
  return v instanceof Map ? (v as Map<string, PyLike>) : null;
}

function concat(pieces: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(pieces.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of pieces) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

async function agree(row: Map<string, PyLike>, chunkBytes: number): Promise<void> {
  const whole = dumpsRowBytes(row, "\n");
  const sync: Uint8Array[] = [];
  dumpsRowChunks(row, "\n", (p) => sync.push(p.slice()), chunkBytes);
  const async: Uint8Array[] = [];
  await dumpsRowChunksAsync(row, "\n", (p) => async.push(p.slice()), chunkBytes);
  expect(Buffer.from(concat(sync)).equals(Buffer.from(whole))).toBe(true);
  expect(Buffer.from(concat(async)).equals(Buffer.from(whole))).toBe(true);
  const parts = [...row.values()].map((v) => (v instanceof PyRaw ? v : JSON.stringify(String(v))));
  expect(await sha256PartsAsync(parts)).toBe(sha256Parts(parts));
}

describe("async row encoders = sync ones", () => {
  test("hostile JSON text: rows of random members, every value kept as bytes", async () => {
    let checked = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const g = new Gen(seed);
      const members: string[] = [];
      const n = 1 + g.int(5);
      for (let i = 0; i < n; i++) members.push(`"k${i}"${g.ws()}:${g.ws()}${g.chance(0.6) ? "[" + Array.from({ length: g.int(6) }, () => g.valueText(3)).join("," + g.ws()) + "]" : g.valueText(3)}`);
      const row = rowOf("{" + members.join(", ") + "}", seed % 2 === 0);
      if (row === null) continue;
      await agree(row, 1 + g.int(64));
      checked++;
    }
    expect(checked).toBeGreaterThan(200);
  });

  test("strings kept as bytes: pieces of a ~12 MB string (escapes, surrogate pairs, raw UTF-8 at every piece boundary) and many short ones", async () => {
    const g = new Gen(99);
    const parts: string[] = [];
    let n = 0;
    while (n < 12 << 20) {
      const t = g.stringText(40).slice(1, -1);
      parts.push(t, "\\u00e9\\ud83d\\ude80\\n\\\\\\\"é🚀x");
      n += t.length + 24;
    }
    const big = '"' + parts.join("") + '"';
    const row = rowOf('{"event": "x", "out": ' + big + ', "small": "\\u0041b", "n": 1}', true);
    expect(row).not.toBeNull();
    expect((row!.get("out") as PyRaw).kind).toBe("string");
    await agree(row!, 1 << 20);
  });

  test("an array of ~15 MB (turns of the event loop inside it), small objects and strings with escapes", async () => {
    const el = '{"b": [1.5, 1E5, -0, "\\u00e9\\n"], "a": "R\\u00e9sum\\u00e9 \\ud83d\\ude80", "a": null}';
    const text = '{"event": "x", "big": [' + Array.from({ length: 400_000 }, (_, i) => (i % 3 === 0 ? el : i % 3 === 1 ? String(i) + ".50" : '"s' + i + '"')).join(",") + '], "empty": [], "tail": {"z": 1, "y": [ ]}}';
    expect(text.length).toBeGreaterThan(8 << 20);
    await agree(rowOf(text)!, 1 << 20);
  });
});
