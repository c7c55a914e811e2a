/** replay/chain.ts: following `resumed_from_run` back through the runs folder. */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EventJournal } from "../../src/journal/index.ts";
import { continuesRun, runChain } from "../../src/replay/chain.ts";
import { resolveRun } from "../../src/replay/discovery.ts";

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

function sdd(): string {
  const d = mkdtempSync(join(tmpdir(), "bern-chain-"));
  made.push(d);
  return d;
}

function run(dir: string, id: string, prev?: string | null): string {
  const j = EventJournal.create(id, { sddDir: dir });
  j.record("run_started", { run_id: id, ...(prev === undefined ? {} : { resumed_from_run: prev, resumed_from_session: "1700000000" }) });
  j.record("run_completed", { run_id: id });
  j.close();
  return j.path;
}

const ids = (dir: string, id: string) => runChain(dir, resolveRun(dir, id, { requireJournal: true })).runs.map((r) => r.runId);

describe("continuesRun", () => {
  test("reads resumed_from_run of a first run_started row only", () => {
    const dir = sdd();
    expect(continuesRun(run(dir, "20260101-000000"))).toBeNull();
    expect(continuesRun(run(dir, "20260101-000001", "20260101-000000"))).toBe("20260101-000000");
    expect(continuesRun(run(dir, "20260101-000002", null))).toBeNull();
    const other = EventJournal.create("20260101-000003", { sddDir: dir });
    other.record("task_claimed", { resumed_from_run: "20260101-000000" });
    other.close();
    expect(continuesRun(other.path)).toBeNull();
    const empty = join(dir, "empty.jsonl");
    writeFileSync(empty, "");
    expect(continuesRun(empty)).toBeNull();
  });
});

describe("runChain", () => {
  test("oldest first, ending with the run asked for", () => {
    const dir = sdd();
    run(dir, "20260101-000000");
    run(dir, "20260101-000001", "20260101-000000");
    run(dir, "20260101-000002", "20260101-000001");
    expect(ids(dir, "20260101-000002")).toEqual(["20260101-000000", "20260101-000001", "20260101-000002"]);
    expect(ids(dir, "20260101-000000")).toEqual(["20260101-000000"]);
  });

  test("a missing predecessor ends the chain with a note", () => {
    const dir = sdd();
    run(dir, "20260101-000001", "20260101-000000");
    const c = runChain(dir, resolveRun(dir, "20260101-000001", { requireJournal: true }));
    expect(c.runs.map((r) => r.runId)).toEqual(["20260101-000001"]);
    expect(c.missing?.runId).toBe("20260101-000000");
    expect(c.missing?.reason).toContain("20260101-000000");
  });

  test("a loop ends the chain instead of running forever", () => {
    const dir = sdd();
    run(dir, "20260101-000000", "20260101-000001");
    run(dir, "20260101-000001", "20260101-000000");
    const c = runChain(dir, resolveRun(dir, "20260101-000001", { requireJournal: true }));
    expect(c.runs.map((r) => r.runId)).toEqual(["20260101-000000", "20260101-000001"]);
    expect(c.missing?.runId).toBe("20260101-000001");
  });

  test("a predecessor named with an invalid id is a note, not a throw", () => {
    const dir = sdd();
    run(dir, "20260101-000001", "../escape");
    const c = runChain(dir, resolveRun(dir, "20260101-000001", { requireJournal: true }));
    expect(c.runs).toHaveLength(1);
    expect(c.missing?.runId).toBe("../escape");
  });
});
