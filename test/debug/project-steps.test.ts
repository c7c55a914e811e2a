import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { projectSteps } from "../../src/debug/debug.ts";
import { walkStepJournal } from "../../src/steps/verify.ts";
import { pyStr } from "../../src/pyjson/python.ts";
import { materialize } from "../../src/pyjson/parse.ts";
import { PyRaw, type PyValue } from "../../src/pyjson/types.ts";
import { sourceEntries } from "../../src/receipts/source.ts";
import { GENESIS_HASH } from "../../src/steps/hash.ts";
import { HOSTILE_STEP_LINES, journalBytes } from "../helpers/step-journals.ts";

/**
 * `replay debug <RUN>`'s passes against the exact path alone (every entry
 * parsed): the projected steps (the first pass, which stops after them),
 * and the verifying pass's entry count and last entry's step_hash (the
 * head the chain is checked against).
 */

const tmp = mkdtempSync(join(tmpdir(), "project-steps-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function exact(path: string, cap: number) {
  const projection: Map<string, PyValue>[] = [];
  let last = GENESIS_HASH;
  let count = 0;
  for await (const row of sourceEntries({ kind: "file", path })) {
    if (count < cap) {
      // the tree a large tool call of a huge row is (the library keeps it as bytes)
      const raw = row.get("tool_call");
      const tc = raw instanceof PyRaw ? materialize(raw) : raw;
      projection.push(new Map<string, PyValue>([["seq", row.get("seq") ?? null], ["step_hash", row.get("step_hash") ?? null], ["prev_hash", row.get("prev_hash") ?? null], ["model", row.get("model") ?? null], ["tool_call", tc instanceof Map ? (tc.get("name") ?? null) : ""]]));
    }
    last = pyStr(row.get("step_hash"), "");
    count++;
  }
  return { projection, last, count };
}

describe("debug's passes: the projection and the verifying pass's count and head are the exact path's", () => {
  const journals: Record<string, string> = {
    hostile: HOSTILE_STEP_LINES.join("\n") + "\n",
    "hostile-crlf": HOSTILE_STEP_LINES.join("\r\n"),
    // the last entry's hash escaped, then one that is not an entry
    "escaped-last": journalBytes({ rows: 50, seed: 81, plain: true }) + `{"seq": 50, "step_hash": "\\u0041b"}\n{"seq": 51}\n`,
    plain: journalBytes({ rows: 2000, seed: 82, plain: true }),
    mixed: journalBytes({ rows: 2000, seed: 83 }),
    huge: journalBytes({ rows: 100, seed: 84, hugeAt: 99 }),
    "huge tool call": journalBytes({ rows: 20, seed: 89, plain: true, hugeToolCallAt: 10 }),
    empty: "",
    // a broken chain (a row deleted: every row after it an error), and objects without a step_hash between entries
    "row deleted": journalBytes({ rows: 2000, seed: 87, plain: true }).split("\n").filter((l, i) => i !== 700).join("\n"),
    "non-entries between": journalBytes({ rows: 300, seed: 88 }).split("\n").flatMap((l, i) => (i % 50 === 7 ? [l, `{"seq": ${i}}`, "[1]", "junk"] : [l])).join("\r\n"),
  };
  for (const [name, text] of Object.entries(journals)) {
    test(name, async () => {
      const p = join(tmp, `${name}.jsonl`);
      writeFileSync(p, text);
      for (const cap of [0, 1, 5, 200, Number.POSITIVE_INFINITY]) {
        const want = await exact(p, cap);
        if (name === "huge tool call" && cap > 10) expect(want.projection[10]!.get("tool_call")).toBe("edit");
        expect({ name, cap, got: await projectSteps(p, cap) }).toEqual({ name, cap, got: want.projection });
        const { entries, lastHash } = await walkStepJournal(p);
        expect({ name, count: entries, last: lastHash ?? GENESIS_HASH }).toEqual({ name, count: want.count, last: want.last });
      }
    });
  }
});

describe("debug's first mismatch from the verifying walk's marks is the full scan's", () => {
  const rows = journalBytes({ rows: 300, seed: 85, plain: true }).split("\n").filter((l) => l !== "");
  const mixed = journalBytes({ rows: 300, seed: 86 }).split("\n").filter((l) => l !== "");
  const edit = (l: string) => l.replace('"model":"', '"model":"X').replace('"model": "', '"model": "X');
  // the row linked to `prev` instead; or its own link spelled with an escape (the same string)
  const relink = (l: string, prev: string) => l.replace(/("prev_hash": ?")[0-9a-f]*"/, `$1${prev}"`);
  const escapedLink = (l: string) => l.replace(/("prev_hash": ?")([0-9a-f])/, (_, head: string, c: string) => `${head}\\u00${c.charCodeAt(0).toString(16)}`);
  const damaged = (base: string[]): Record<string, string[]> => ({
    whole: base,
    torn: [...base, base[7]!.slice(0, 50)],
    "garbage inside": [...base.slice(0, 150), "garbage", ...base.slice(150)],
    "row deleted": [...base.slice(0, 150), ...base.slice(151)],
    "row edited": [...base.slice(0, 150), edit(base[150]!), ...base.slice(151)],
    "seq edited": [...base.slice(0, 150), base[150]!.replace(/"seq": ?(\d+)/, '"seq": 9$1'), ...base.slice(151)],
    "no step_hash": [...base.slice(0, 150), base[150]!.replace('"step_hash"', '"step_hsh"'), ...base.slice(151)],
    "non-entry object, then an edit": [...base.slice(0, 100), '{"seq": 1, "note": "no hash"}', ...base.slice(100, 200), edit(base[200]!), ...base.slice(201)],
    "non-entry object alone": [...base.slice(0, 100), '{"seq": 1}', ...base.slice(100)],
    "non-entry objects first and last": ['{"note": "head"}', ...base, '{"note": "tail"}'],
    "an edit, then a non-entry object": [...base.slice(0, 60), edit(base[60]!), ...base.slice(61, 100), '{"seq": 1}', ...base.slice(100)],
    "non-entry objects, then a row deleted": [...base.slice(0, 50), "{}", ...base.slice(50, 90), '{"step_hsh": "x"}', ...base.slice(90, 250), ...base.slice(251)],
    "non-entry object, garbage and an array, then a swap": [...base.slice(0, 30), '{"n": 1}', "[1, 2]", "garbage", ...base.slice(30, 200), base[201]!, base[200]!, ...base.slice(202)],
    "blank lines, then an edit": [...base.slice(0, 100), "", "   ", ...base.slice(100, 120), edit(base[120]!), ...base.slice(121)],
    "first row edited": [edit(base[0]!), ...base.slice(1)],
    // the entry right after rows without a step_hash: the reader links it to the last entry, the walk to ""
    "non-entry object, then the next entry edited": [...base.slice(0, 100), '{"seq": 1}', edit(base[100]!), ...base.slice(101)],
    "non-entry object, then the next entry deleted": [...base.slice(0, 100), '{"n": 1}', ...base.slice(101)],
    "two non-entry objects, then an entry linked to them": [...base.slice(0, 100), '{"a": 1}', '{"b": 2}', relink(base[100]!, ""), ...base.slice(101)],
    "non-entry object, then an entry with an escaped link": [...base.slice(0, 100), '{"a": 1}', escapedLink(base[100]!), ...base.slice(101, 200), edit(base[200]!), ...base.slice(201)],
    "non-entry object first, then the first entry edited": ['{"x": 1}', edit(base[0]!), ...base.slice(1)],
    "non-entry object first, then the whole chain": ['{"x": 1}', ...base],
    "swapped": [base[0]!, base[2]!, base[1]!, ...base.slice(3)],
    hostile: HOSTILE_STEP_LINES,
  });
  test("every damage, on plain and mixed rows, every line ending", async () => {
    const { firstMismatch } = await import("../../src/debug/debug.ts");
    let found = 0;
    let cases = 0;
    for (const [kind, base] of Object.entries({ plain: rows, mixed })) {
      for (const [name, lines] of Object.entries(damaged(base))) {
        for (const nl of ["\n", "\r\n"]) {
          const p = join(tmp, `mismatch-${cases++}.jsonl`);
          writeFileSync(p, lines.join(nl) + nl);
          const { marks } = await walkStepJournal(p);
          const want = await firstMismatch(p);
          expect({ kind, name, got: await firstMismatch(p, marks) }).toEqual({ kind, name, got: want });
          if (want.seq !== null) found++;
        }
      }
    }
    // not vacuous: most of the damages are found, at the row the full scan finds
    expect(found).toBeGreaterThanOrEqual(2 * 2 * 7);
  });
});
