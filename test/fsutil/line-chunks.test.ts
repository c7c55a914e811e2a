import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readLineChunks } from "../../src/fsutil/line-chunks.ts";
import { mulberry32 } from "../../tools/fuzz/rng.ts";

/**
 * readLineChunks: the file's bytes, in order, each chunk ending after a
 * line feed but the last and those of a line longer than the buffer.
 */
const tmp = mkdtempSync(join(tmpdir(), "line-chunks-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function chunksOf(bytes: Uint8Array, bufSize: number): Uint8Array[] {
  const path = join(tmp, "f");
  writeFileSync(path, bytes);
  const out: Uint8Array[] = [];
  // copied: a chunk is a view of the buffer, valid until the next
  for (const c of readLineChunks(path, { what: "journal" }, new Uint8Array(bufSize))) out.push(c.slice());
  return out;
}

describe("readLineChunks", () => {
  test("lines of every length, CR and CRLF breaks, with and without a final line feed", () => {
    const r = mulberry32(5);
    for (let trial = 0; trial < 200; trial++) {
      const bufSize = 16 + Math.floor(r() * 200);
      let text = "";
      for (let n = Math.floor(r() * 40); n > 0; n--) {
        text += "x".repeat(Math.floor(r() < 0.1 ? r() * 3 * bufSize : r() * bufSize * 0.8));
        text += ["\n", "\r\n", "\r", "\n\n"][Math.floor(r() * 4)];
      }
      if (r() < 0.5) text += "tail without a line feed";
      const bytes = new TextEncoder().encode(text);
      const chunks = chunksOf(bytes, bufSize);
      const joined = Buffer.concat(chunks);
      expect(joined.equals(Buffer.from(bytes))).toBe(true);
      chunks.forEach((c, i) => {
        expect(c.length).toBeGreaterThan(0);
        expect(c.length).toBeLessThanOrEqual(bufSize);
        // ends a line, or is the last, or holds no line feed at all (a line longer than the buffer)
        const whole = c[c.length - 1] === 0x0a || i === chunks.length - 1 || !c.includes(0x0a);
        expect({ trial, i, whole }).toEqual({ trial, i, whole: true });
      });
    }
  });

  test("an empty file, and a missing one (no chunks)", () => {
    expect(chunksOf(new Uint8Array(0), 64)).toEqual([]);
    expect([...readLineChunks(join(tmp, "nosuch"), {}, new Uint8Array(64))]).toEqual([]);
  });
});
