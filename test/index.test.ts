import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as api from "../src/index.ts";

test("the public API records, seals and verifies a journal without the CLI", async () => {
  const sdd = mkdtempSync(join(tmpdir(), "bernstein-api-"));
  try {
    const j = api.EventJournal.create("run-1", { sddDir: sdd });
    j.record("run_started", { run_id: "run-1" });
    j.record("task_claimed", { task_id: "T-1" });
    j.record("task_completed", { task_id: "T-1" });
    j.record("run_completed", { run_id: "run-1" });
    const head = j.head();
    j.close();
    // The four-row worked example of the spec (§1.5).
    expect(head).toBe("beb8b92285cb2d3e5f1a4fc30b1024fb9848da6105bbada9fa19fb0933847f71");
    const seal = await api.sealJournal(sdd, "run-1");
    const r = await api.verifyJournal(api.journal.journalPath(sdd, "run-1"), { seal });
    expect(r).toMatchObject({ ok: true, identity: "verified", count: 4, head });
    expect(api.pyjson.canonical(api.pyjson.parse('{"b":1.0,"a":"é"}'))).toBe('{"a":"\\u00e9","b":1.0}');
    expect(typeof api.VERSION).toBe("string");
  } finally {
    rmSync(sdd, { recursive: true, force: true });
  }
});
