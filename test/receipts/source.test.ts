import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sourceEntries } from "../../src/receipts/source.ts";
import { DEFAULT_RECEIPT_LIMITS } from "../../src/receipts/verify.ts";
import { mulberry32 } from "../../tools/fuzz/rng.ts";

/**
 * sourceEntries' `skipLines` (replay debug resumes there): the lines it
 * passes over runs at a time must be the physical lines of the universal
 * dialect (LF, CR LF, a lone CR), counted as the line-by-line reader
 * counts them. The oracle is the same reader on the file cut after those
 * lines (split here by a regular expression, not by the code under test),
 * read from its start.
 */

const tmp = mkdtempSync(join(tmpdir(), "source-skip-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Lines of entries, other rows, garbage and blanks; `breaks` the line ends drawn from. */
function journal(seed: number, lines: number, breaks: readonly string[]): string {
  const r = mulberry32(seed);
  let out = "";
  for (let i = 0; i < lines; i++) {
    const pad = "x".repeat(Math.floor(r() * (r() < 0.05 ? 9000 : 300)));
    const k = r();
    const text = k < 0.8 ? JSON.stringify({ step_hash: `h${i}`, seq: i, pad }) : k < 0.88 ? JSON.stringify({ note: i }) : k < 0.94 ? `garbage ${i} ${pad}` : "";
    out += text + breaks[Math.floor(r() * breaks.length)]!;
  }
  return out;
}

async function entries(path: string, skip: number, maxLineBytes = DEFAULT_RECEIPT_LIMITS.maxLineBytes): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const row of sourceEntries({ kind: "file", path }, { ...DEFAULT_RECEIPT_LIMITS, maxLineBytes }, skip)) out.push(Object.fromEntries(row));
  return out;
}

/** The file's text after its first `skip` physical lines (universal newlines). */
function after(text: string, skip: number): string {
  const re = /\r\n|\r|\n/g;
  for (let n = 0; n < skip; n++) if (re.exec(text) === null) return "";
  return text.slice(re.lastIndex);
}

const SHAPES: [string, readonly string[]][] = [
  ["LF", ["\n"]],
  ["CR LF", ["\r\n"]],
  ["LF, CR LF and lone CRs", ["\n", "\n", "\r\n", "\r"]],
];

describe("sourceEntries from a line", () => {
  for (const [name, breaks] of SHAPES) {
    // over a megabyte: lines cross the reader's chunks, and some are long
    const text = journal(name.length, 4000, breaks);
    const path = join(tmp, `${name.replaceAll(/\W/g, "-")}.jsonl`);
    writeFileSync(path, text);
    test(`${name}: every skip gives the entries of the rest of the file`, async () => {
      const lines = text.split(/\r\n|\r|\n/).length - 1;
      for (const skip of [0, 1, 2, 17, 999, 1000, 2047, 3001, lines - 1, lines, lines + 5]) {
        const rest = join(tmp, "rest.jsonl");
        writeFileSync(rest, after(text, skip));
        expect({ skip, rows: await entries(path, skip) }).toEqual({ skip, rows: await entries(rest, 0) });
      }
    });
  }

  test("a line over the cap among those skipped is refused, as when it is read", async () => {
    const path = join(tmp, "overlong.jsonl");
    writeFileSync(path, `${JSON.stringify({ step_hash: "a" })}\n${"y".repeat(5000)}\n${JSON.stringify({ step_hash: "b" })}\n`);
    await expect(entries(path, 0, 4096)).rejects.toThrow();
    await expect(entries(path, 2, 4096)).rejects.toThrow();
    expect(await entries(path, 2)).toEqual([{ step_hash: "b" }]);
  });
});
