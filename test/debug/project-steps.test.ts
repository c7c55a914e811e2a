import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { projectSteps } from "../../src/debug/debug.ts";
import { walkStepJournal } from "../../src/steps/verify.ts";
import { pyStr } from "../../src/pyjson/python.ts";
import type { PyValue } from "../../src/pyjson/types.ts";
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
      const tc = row.get("tool_call");
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
    empty: "",
  };
  for (const [name, text] of Object.entries(journals)) {
    test(name, async () => {
      const p = join(tmp, `${name}.jsonl`);
      writeFileSync(p, text);
      for (const cap of [0, 1, 5, 200, Number.POSITIVE_INFINITY]) {
        const want = await exact(p, cap);
        expect({ name, cap, got: await projectSteps(p, cap) }).toEqual({ name, cap, got: want.projection });
        const { entries, lastHash } = await walkStepJournal(p);
        expect({ name, count: entries, last: lastHash ?? GENESIS_HASH }).toEqual({ name, count: want.count, last: want.last });
      }
    });
  }
});
