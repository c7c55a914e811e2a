import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentTableBytes, agentTableCells, exactAgentCells, type AgentCells } from "../../src/replay/agent-table.ts";
import { readEntries } from "../../src/steps/reader.ts";
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

async function viaTable(path: string, limit: number | null): Promise<AgentCells[]> {
  const out: AgentCells[] = [];
  for await (const batch of agentTableCells(path, limit)) out.push(...batch);
  return out;
}

const WIDTHS = [6, 19, 19, 24, 0];
const line = (cells: string[]) => cells.map((c, i) => c.padEnd(WIDTHS[i]!)).join(" ").trimEnd();

/** The fixed layout's text as the byte writer makes it (a copy of each batch: its buffer is reused). */
async function viaBytes(path: string, limit: number | null): Promise<string> {
  const parts: Buffer[] = [];
  for await (const b of agentTableBytes(path, limit, WIDTHS, line)) parts.push(Buffer.from(b));
  return Buffer.concat(parts).toString("utf8");
}

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


describe("agent prose cells: the index's reading is the exact path's", () => {
  test("hostile lines, each line ending (LF, CRLF, CR)", async () => {
    for (const [name, eol] of [["lf", "\n"], ["crlf", "\r\n"], ["cr", "\r"]] as const) {
      const p = file(`hostile-${name}.jsonl`, HOSTILE.join(eol) + eol);
      const want = await exact(p, null);
      expect(want.length).toBeGreaterThan(10);
      expect({ name, cells: await viaTable(p, null) }).toEqual({ name, cells: want });
      expect({ name, text: await viaBytes(p, null) }).toEqual({ name, text: want.map((c) => line(c) + "\n").join("") });
    }
  });

  test("generated journals (plain, mixed spellings, a huge row), with and without a limit", async () => {
    const journals = {
      plain: journalBytes({ rows: 3000, seed: 71, plain: true }),
      mixed: journalBytes({ rows: 3000, seed: 72 }),
      hostileTs: journalBytes({ rows: 500, seed: 73, hostileTs: true }),
      huge: journalBytes({ rows: 200, seed: 74, hugeAt: 100 }),
      nan: journalBytes({ rows: 100, seed: 75, nanAt: 50 }),
    };
    for (const [name, text] of Object.entries(journals)) {
      const p = file(`${name}.jsonl`, text);
      for (const limit of [null, 0, 1, 37]) {
        const want = await exact(p, limit);
        expect({ name, limit, cells: await viaTable(p, limit) }).toEqual({ name, limit, cells: want });
        expect({ name, limit, text: await viaBytes(p, limit) }).toEqual({ name, limit, text: want.map((c) => line(c) + "\n").join("") });
      }
    }
  });

  test("a missing file has no cells", async () => {
    expect(await viaTable(join(tmp, "missing.jsonl"), null)).toEqual([]);
  });
});
