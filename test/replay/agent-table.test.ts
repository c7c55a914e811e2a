import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentTableCells, exactAgentCells, type AgentCells } from "../../src/replay/agent-table.ts";
import { readEntries } from "../../src/steps/reader.ts";
import { journalBytes } from "../helpers/step-journals.ts";

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

const H = "0123456789abcdef".repeat(4);
const HOSTILE = [
  `{"seq": 0, "step_hash": "${H}", "prev_hash": "${H}", "model": "m", "tool_call": {"name": "edit", "args": {}}}`,
  // escaped and non-ASCII cells
  `{"seq": 1, "step_hash": "\\u0041${H}", "prev_hash": "${H}", "model": "m\\u00e9", "tool_call": {"name": "ed\\"it"}}`,
  `{"seq": 2, "step_hash": "${H}", "prev_hash": "${H}", "model": "mé", "tool_call": {"name": "édit"}}`,
  // a key spelled with an escape is the same key
  `{"seq": 3, "step\\u005fhash": "${H}", "prev_hash": "x", "model": "m", "tool_call": null}`,
  `{"seq": 4, "st\\u0065p_hash": "A", "step_hash": "B", "model": "m", "tool_call": {"n\\u0061me": "x", "name": "y"}}`,
  // repeated keys: json.loads keeps the last
  `{"seq": 5, "step_hash": "first", "step_hash": "second", "model": "a", "model": null, "tool_call": {"name": "a", "name": "b"}}`,
  // cells of other types
  `{"seq": 6.0, "step_hash": null, "prev_hash": 7, "model": true, "tool_call": "edit"}`,
  `{"seq": "7", "step_hash": ["x"], "model": {"a": 1}, "tool_call": [1, 2]}`,
  `{"seq": -0, "step_hash": "${H}", "tool_call": {"name": null}}`,
  `{"seq": 123456789012345678901234567890, "step_hash": "${H}", "tool_call": {"name": 5}}`,
  `{"seq": NaN, "step_hash": "${H}", "model": Infinity, "tool_call": {}}`,
  `{"step_hash": "${H}"}`,
  `{"seq": 1e3, "step_hash": "short", "prev_hash": "", "model": "", "tool_call": {"name": ""}}`,
  // a DEL and a needless escape in a cell
  `{"seq": 12, "step_hash": "a\x7fb", "model": "\\u0061", "tool_call": {"name": "\\/"}}`,
  // not entries
  `{"seq": 13, "prev_hash": "${H}"}`,
  `[1, 2]`,
  `"step_hash"`,
  `{"seq": 14, "step_hash": "${H}",}`,
  `{"seq": 15, "step_hash": "\xff"}`,
  `   `,
  ``,
  `{"seq": 16, "step_hash": "${H}"} trailing`,
  // whitespace around and inside
  ` \t{"seq":17,"step_hash":"${H}","model":"m","tool_call":{"name":"t"}}\t `,
  `{ "seq" : 18 , "step_hash" : "${H}" }`,
];

describe("agent prose cells: the index's reading is the exact path's", () => {
  test("hostile lines, each line ending (LF, CRLF, CR)", async () => {
    for (const [name, eol] of [["lf", "\n"], ["crlf", "\r\n"], ["cr", "\r"]] as const) {
      const p = file(`hostile-${name}.jsonl`, HOSTILE.join(eol) + eol);
      const want = await exact(p, null);
      expect(want.length).toBeGreaterThan(10);
      expect({ name, cells: await viaTable(p, null) }).toEqual({ name, cells: want });
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
        expect({ name, limit, cells: await viaTable(p, limit) }).toEqual({ name, limit, cells: await exact(p, limit) });
      }
    }
  });

  test("a missing file has no cells", async () => {
    expect(await viaTable(join(tmp, "missing.jsonl"), null)).toEqual([]);
  });
});
