/** What an input holds (src/journal/content.ts): empty, foreign or a journal, and the refusals of the first two. */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BernsteinError } from "../../src/errors/index.ts";
import { isRunJournalRow, refuseContent, runJournalContent, verdictContent } from "../../src/journal/content.ts";
import { verifyJournal, verifyJournalExact } from "../../src/journal/verify.ts";
import { VECTORS } from "../helpers/cli.ts";
import { tempDirs } from "./tmp.ts";

const dirs = tempDirs("content");
afterAll(() => dirs.cleanup());
const HAZARDS = join(VECTORS, "run-journal", "hazards.jsonl");

function file(text: string): string {
  const p = join(dirs.make(), "j.jsonl");
  writeFileSync(p, text);
  return p;
}

function refusal(f: () => void): [string, number] | null {
  try {
    f();
    return null;
  } catch (err) {
    if (!(err instanceof BernsteinError)) throw err;
    return [err.code, err.exitCode];
  }
}

describe("isRunJournalRow", () => {
  test("an object naming its event and event_hash is a row, whatever their values; anything else is not", () => {
    expect(isRunJournalRow(new Map([["event", "x"], ["event_hash", "0"]]))).toBe(true);
    expect(isRunJournalRow(new Map([["event", null], ["event_hash", 1]]) as never)).toBe(true);
    expect(isRunJournalRow(new Map([["event", "x"]]))).toBe(false);
    expect(isRunJournalRow(new Map([["step_hash", "a"], ["prev_hash", "b"]]))).toBe(false);
  });
});

describe("runJournalContent", () => {
  test("empty: 0 bytes, blank and whitespace-only lines", () => {
    for (const text of ["", "\n", "\n  \n\r\n\t\n"]) expect(runJournalContent(file(text))).toBe("empty");
  });

  test("foreign: lines, none of them a run-journal row (text, JSON scalars, other objects)", () => {
    for (const text of ["name: x\n", "1\n[2]\n", '{"a": 1}\n{"step_hash": "x"}\n', "\u00ff\u00fe\n"]) expect(runJournalContent(file(text))).toBe("foreign");
  });

  test("a journal: a real one, one with junk before its first row, one whose only row is tampered", () => {
    expect(runJournalContent(HAZARDS)).toBe("journal");
    const first = readFileSync(HAZARDS, "utf8").split("\n")[0]!;
    expect(runJournalContent(file(`junk\n{"a": 1}\n${first}\n`))).toBe("journal");
    expect(runJournalContent(file(first.replace('"event_hash": "', '"event_hash": "f') + "\n"))).toBe("journal");
  });
});

describe("verdictContent", () => {
  test("agrees with runJournalContent, on the fast and the exact verdict alike", async () => {
    const texts = ["", "\n \n", "name: x\n", '{"a": 1}\n', '{"a": 1}\n{"b": 2}\n', readFileSync(HAZARDS, "utf8")];
    for (const text of texts) {
      const p = file(text);
      expect([text.slice(0, 20), verdictContent(await verifyJournal(p), p)]).toEqual([text.slice(0, 20), runJournalContent(p)]);
      expect(verdictContent(await verifyJournalExact(p), p)).toBe(runJournalContent(p));
    }
  });

  test("a missing file (a verdict against a seal) is not judged here", async () => {
    const p = join(dirs.make(), "missing.jsonl");
    expect(verdictContent(await verifyJournal(p), p)).toBe("journal");
  });
});

describe("refuseContent", () => {
  test("empty: input_empty (exit 3) unless allowed; foreign: not_a_journal (exit 3) even when empty ones are allowed", () => {
    expect(refusal(() => refuseContent("empty", "x"))).toEqual(["input_empty", 3]);
    expect(refusal(() => refuseContent("empty", "x", { allowEmpty: true }))).toBeNull();
    expect(refusal(() => refuseContent("foreign", "x", { allowEmpty: true }))).toEqual(["not_a_journal", 3]);
    expect(refusal(() => refuseContent("journal", "x"))).toBeNull();
  });

  test("the detail names the input, and offers --allow-empty only where a command has it", () => {
    const detail = (f: () => void): string => {
      try {
        f();
      } catch (err) {
        return (err as Error).message;
      }
      return "";
    };
    expect(detail(() => refuseContent("empty", "in.jsonl"))).toContain("in.jsonl is empty");
    expect(detail(() => refuseContent("empty", "in.jsonl"))).toContain("--allow-empty");
    expect(detail(() => refuseContent("empty", "in.jsonl", { noAllowEmpty: true }))).not.toContain("--allow-empty");
    expect(detail(() => refuseContent("foreign", "a.ts", { what: "an agent step journal", row: "step" }))).toBe("a.ts is not an agent step journal: none of its lines is a step");
  });
});
