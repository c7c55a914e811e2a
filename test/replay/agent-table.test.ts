import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AGENT_COLUMNS, agentTableBytes, exactAgentCells, narrowAgentTable, type AgentCells, type AgentLayout } from "../../src/replay/agent-table.ts";
import { readEntries } from "../../src/steps/reader.ts";
import { IndexedEntries } from "../../src/steps/indexed.ts";
import { HOSTILE_STEP_LINES as HOSTILE, journalBytes } from "../helpers/step-journals.ts";

/**
 * The agent view's prose cells (`replay <AGENT_ID>`): read from the codec's
 * index where the row allows it, else from the exact parse. Held to the
 * exact path alone (the tolerant reader's entries, each row's cells from
 * its parsed value) on generated journals and on lines made to take every
 * branch: escaped and non-ASCII keys and cells, repeated keys, cells of
 * other types, rows that are not entries, and lines that are not rows.
 */

const tmp = mkdtempSync(join(tmpdir(), "agent-table-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const line = (cells: string[]) => cells.map((c, i) => c.padEnd(AGENT_COLUMNS[i]!)).join(" ").trimEnd();

/** The table's text as the byte writer makes it (a copy of each batch: its buffer is reused): the fixed layout, or the narrow one at `width`. */
async function viaBytes(path: string, limit: number | null, width?: number): Promise<string> {
  const narrow = width === undefined ? null : narrowAgentTable(width);
  const layout: AgentLayout = narrow ? { table: narrow } : { fixed: AGENT_COLUMNS };
  const format = narrow ? (cells: string[]) => narrow.format(cells).join("\n") : line;
  const parts: Buffer[] = [];
  for await (const b of agentTableBytes(path, limit, layout, format)) parts.push(Buffer.from(b));
  return Buffer.concat(parts).toString("utf8");
}

/** The table's text from the exact path's cells alone. */
function expected(cells: AgentCells[], width?: number): string {
  if (width === undefined) return cells.map((c) => line(c) + "\n").join("");
  const t = narrowAgentTable(width);
  return cells.map((c) => t.format(c).map((l) => l + "\n").join("")).join("");
}

/** Narrow terminals: model, then tool, folded below each row; cells cut to their columns. */
const NARROW = [83, 70, 60, 45, 30, 20];

async function exact(path: string, limit: number | null): Promise<AgentCells[]> {
  const out: AgentCells[] = [];
  for await (const row of readEntries(path, limit)) out.push(exactAgentCells(row));
  return out;
}

function file(name: string, text: string): string {
  const p = join(tmp, name);
  writeFileSync(p, text);
  return p;
}


describe("agent prose table: the index's reading is the exact path's, in the fixed layout and folded on narrow terminals", () => {
  test("hostile lines, each line ending (LF, CRLF, CR)", async () => {
    for (const [name, eol] of [["lf", "\n"], ["crlf", "\r\n"], ["cr", "\r"]] as const) {
      const p = file(`hostile-${name}.jsonl`, HOSTILE.join(eol) + eol);
      const want = await exact(p, null);
      expect(want.length).toBeGreaterThan(10);
      for (const width of [undefined, ...NARROW]) expect({ name, width, text: await viaBytes(p, null, width) }).toEqual({ name, width, text: expected(want, width) });
    }
  });

  test("generated journals (plain, mixed spellings, a huge row), with and without a limit", async () => {
    const journals = {
      plain: journalBytes({ rows: 3000, seed: 71, plain: true }),
      mixed: journalBytes({ rows: 3000, seed: 72 }),
      hostileTs: journalBytes({ rows: 500, seed: 73, hostileTs: true }),
      huge: journalBytes({ rows: 200, seed: 74, hugeAt: 100 }),
      nan: journalBytes({ rows: 100, seed: 75, nanAt: 50 }),
      // Python's text mode on Windows ends lines in CR LF
      plainCrlf: journalBytes({ rows: 3000, seed: 71, plain: true }).replaceAll("\n", "\r\n"),
      mixedCrlf: journalBytes({ rows: 3000, seed: 72 }).replaceAll("\n", "\r\n"),
    };
    for (const [name, text] of Object.entries(journals)) {
      const p = file(`${name}.jsonl`, text);
      for (const limit of [null, 0, 1, 37]) {
        const want = await exact(p, limit);
        for (const width of limit === null ? [undefined, ...NARROW] : [undefined, 60]) {
          expect({ name, limit, width, text: await viaBytes(p, limit, width) }).toEqual({ name, limit, width, text: expected(want, width) });
        }
      }
    }
  });

  test("CR LF line ends: the rows are read from the index, not handed to the exact path (the test is not vacuous)", async () => {
    const p = file("probed-crlf.jsonl", journalBytes({ rows: 3000, seed: 71, plain: true }).replaceAll("\n", "\r\n"));
    const probe = IndexedEntries.prototype.probe;
    let probed = 0;
    IndexedEntries.prototype.probe = function <T>(this: IndexedEntries<T>, take: (v: T) => void) {
      const inner = probe.call(this, take);
      return (buf: Uint8Array, start: number, end: number) => {
        const took = inner(buf, start, end);
        if (took) probed++;
        return took;
      };
    };
    try {
      await viaBytes(p, null);
    } finally {
      IndexedEntries.prototype.probe = probe;
    }
    expect(probed).toBeGreaterThan(2900);
  });

  test("a missing file has no rows", async () => {
    expect(await viaBytes(join(tmp, "missing.jsonl"), null)).toBe("");
    expect(await viaBytes(join(tmp, "missing.jsonl"), null, 40)).toBe("");
  });
});
