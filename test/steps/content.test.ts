/** What a step journal file holds (src/steps/reader.ts stepJournalContent): its tolerant reader's entries decide. */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stepJournalContent } from "../../src/steps/reader.ts";
import { VECTORS } from "../helpers/cli.ts";
import { tempDirs } from "../journal/tmp.ts";

const dirs = tempDirs("step-content");
afterAll(() => dirs.cleanup());
const AGENT = join(VECTORS, "agent-journal", "sdd", "runtime", "journal", "agent-a", "000000.jsonl");

function file(text: string): string {
  const p = join(dirs.make(), "000000.jsonl");
  writeFileSync(p, text);
  return p;
}

describe("stepJournalContent", () => {
  test("empty: 0 bytes, blank lines, a missing file", () => {
    for (const text of ["", "\n\n", " \n\t\n"]) expect(stepJournalContent(file(text))).toBe("empty");
    expect(stepJournalContent(join(dirs.make(), "missing.jsonl"))).toBe("empty");
  });

  test("foreign: lines without a step (text, objects without step_hash, run-journal rows)", () => {
    const run = readFileSync(join(VECTORS, "run-journal", "chain-4.jsonl"), "utf8");
    for (const text of ["const a = 1;\n", '{"a": 1}\n', run]) expect(stepJournalContent(file(text))).toBe("foreign");
  });

  test("a journal: a real one, and one whose first step comes after junk", () => {
    expect(stepJournalContent(AGENT)).toBe("journal");
    expect(stepJournalContent(file(`junk\n${readFileSync(AGENT, "utf8")}`))).toBe("journal");
  });
});
