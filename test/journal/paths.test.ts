/** Run-id validation and containment under <sdd>/runs. */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { journalPath, runDir, validateRunId } from "../../src/journal/index.ts";
import { tempDirs } from "./tmp.ts";

const dirs = tempDirs("paths");
afterAll(() => dirs.cleanup());

describe("run ids", () => {
  test("traversal and unsafe ids are refused with invalid_run_id (exit 2)", () => {
    for (const bad of ["../../etc", "..", "a/../../b", "/abs/path", "", ".", "a\\b", "run1\n", "a b", "x".repeat(65), "é"]) {
      expect(() => validateRunId(bad)).toThrow(expect.objectContaining({ code: "invalid_run_id", exitCode: 2 }));
    }
  });

  test("ordinary ids are contained", () => {
    const sdd = dirs.make();
    for (const ok of ["run-1", "20261129-174200", "a.b_c-d", "...", "x".repeat(64)]) {
      expect(validateRunId(ok)).toBe(ok);
      expect(journalPath(sdd, ok)).toBe(join(sdd, "runs", ok, "journal.jsonl"));
    }
  });

  test("a run directory that is a symlink out of the runs root is refused", () => {
    const sdd = dirs.make();
    const outside = dirs.make();
    mkdirSync(join(sdd, "runs"), { recursive: true });
    symlinkSync(outside, join(sdd, "runs", "evil"));
    expect(() => runDir(sdd, "evil")).toThrow(expect.objectContaining({ code: "invalid_run_id" }));
    mkdirSync(join(sdd, "runs", "fine"));
    symlinkSync(join(outside, "j"), join(sdd, "runs", "fine", "journal.jsonl"));
    expect(() => journalPath(sdd, "fine")).toThrow(expect.objectContaining({ code: "invalid_run_id" }));
  });
});
