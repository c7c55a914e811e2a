/** Verify verdicts (§1.9): identity against seals, hash_profile fail-closed, divergence report bytes. */
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  divergenceReportText,
  EventJournal,
  readSealFile,
  verifyJournal,
  writeDivergenceReport,
} from "../../src/journal/index.ts";
import { VECTORS } from "../helpers/cli.ts";
import { runPython } from "../helpers/python.ts";
import { tempDirs } from "./tmp.ts";

const dirs = tempDirs("verify");
afterAll(() => dirs.cleanup());
const CHAIN4 = join(VECTORS, "run-journal", "chain-4.jsonl");
const HEAD4 = "beb8b92285cb2d3e5f1a4fc30b1024fb9848da6105bbada9fa19fb0933847f71";

function copyChain4(): string {
  const p = join(dirs.make(), "journal.jsonl");
  copyFileSync(CHAIN4, p);
  return p;
}

describe("identity against a seal", () => {
  test("no seal: unverifiable, ok", async () => {
    const r = await verifyJournal(copyChain4());
    expect([r.ok, r.identity, r.count, r.head]).toEqual([true, "unverifiable", 4, HEAD4]);
    expect(r.unauthenticated_fields).toEqual(["elapsed_s", "event_hash", "index", "payload_hash", "prev_hash", "ts"]);
  });

  test("matching seal: verified", async () => {
    const r = await verifyJournal(copyChain4(), { seal: { head: HEAD4, event_count: 4 } });
    expect([r.ok, r.identity, r.errors]).toEqual([true, "verified", []]);
  });

  test("clean truncation at a row boundary: intact chain, but mismatched against the seal", async () => {
    const p = copyChain4();
    const lines = readFileSync(p, "utf8").split("\n");
    writeFileSync(p, lines.slice(0, 2).join("\n") + "\n");
    const unsealed = await verifyJournal(p);
    expect([unsealed.ok, unsealed.chain_consistent, unsealed.identity, unsealed.count]).toEqual([true, true, "unverifiable", 2]);
    const r = await verifyJournal(p, { seal: { head: HEAD4, event_count: 4 } });
    expect([r.ok, r.chain_consistent, r.identity]).toEqual([false, true, "mismatched"]);
    expect(r.errors).toContain("journal holds 2 events but the seal commits to 4");
    expect(r.errors.some((e) => e.startsWith("journal head ") && e.endsWith(`does not match sealed head ${HEAD4}`))).toBe(true);
  });

  test("an append after sealing: mismatched", async () => {
    const dir = dirs.make();
    const j = EventJournal.create("r", { sddDir: dir });
    j.record("a");
    const seal = { head: j.head(), event_count: 1 };
    j.record("b");
    j.close();
    const r = await verifyJournal(j.path, { seal });
    expect([r.ok, r.chain_consistent, r.identity]).toEqual([false, true, "mismatched"]);
  });

  test("missing journal: consistent and empty without a seal; mismatched with one", async () => {
    const p = join(dirs.make(), "none.jsonl");
    const r = await verifyJournal(p);
    expect([r.ok, r.chain_consistent, r.coverage, r.count, r.head]).toEqual([true, true, "complete", 0, ""]);
    const s = await verifyJournal(p, { seal: { head: "", event_count: 0 } });
    expect(s.identity).toBe("mismatched");
    expect(s.errors).toEqual(["journal file is missing but an external seal exists"]);
  });

  test("blank lines do not affect coverage or identity; junk makes both fail", async () => {
    const p = copyChain4();
    const text = readFileSync(p, "utf8").replace("\n", "\n\n  \n");
    writeFileSync(p, text);
    const ok = await verifyJournal(p, { seal: { head: HEAD4, event_count: 4 } });
    expect([ok.ok, ok.identity, ok.discarded_line_indices]).toEqual([true, "verified", []]);
    writeFileSync(p, text.replace("\n\n", "\nnot json\n"));
    const bad = await verifyJournal(p, { seal: { head: HEAD4, event_count: 4 } });
    expect([bad.ok, bad.coverage, bad.identity, bad.discarded_line_indices]).toEqual([false, "partial", "mismatched", [1]]);
    expect(bad.errors).toContain("reader discarded unparsable or non-object physical line(s): 1");
  });
});

describe("hash_profile", () => {
  test("an unknown profile on a row fails closed with a hash_profile error", async () => {
    const dir = dirs.make();
    const j = EventJournal.create("r", { sddDir: dir });
    j.record("a", { hash_profile: "py-json-v1" });
    j.record("b");
    j.close();
    const ok = await verifyJournal(j.path);
    expect(ok.ok).toBe(true);
    const text = readFileSync(j.path, "utf8").replace('"hash_profile": "py-json-v1"', '"hash_profile": "jcs-v3"');
    writeFileSync(j.path, text);
    const r = await verifyJournal(j.path);
    expect([r.ok, r.chain_consistent, r.divergent_index, r.expected_hash]).toEqual([false, false, 0, null]);
    expect(r.errors[0]).toContain("hash_profile");
    expect(r.errors[0]).toContain("jcs-v3");
  });

  test("an unknown profile on a seal is refused", () => {
    const p = join(dirs.make(), "seal.json");
    writeFileSync(p, JSON.stringify({ head: HEAD4, event_count: 4, hash_profile: "jcs-v3" }));
    expect(() => readSealFile(p)).toThrow(/hash_profile/);
    writeFileSync(p, JSON.stringify({ head: HEAD4, event_count: 4, hash_profile: "py-json-v1" }));
    expect(readSealFile(p)).toEqual({ head: HEAD4, event_count: 4 });
  });

  test("malformed seals are InputErrors (exit 3)", () => {
    const p = join(dirs.make(), "seal.json");
    for (const bad of ["[]", "{", '{"head": 1, "event_count": 4}', '{"head": "h", "event_count": 4.0}', '{"head": "h", "event_count": -1}', '{"head": "h", "event_count": true}']) {
      writeFileSync(p, bad);
      expect(() => readSealFile(p)).toThrow(expect.objectContaining({ code: "seal_malformed", exitCode: 3 }));
    }
    expect(() => readSealFile(join(dirs.make(), "none"))).toThrow(expect.objectContaining({ code: "seal_unreadable" }));
  });
});

describe("divergence_report.json", () => {
  test("bytes equal Python json.dumps(report, indent=2, sort_keys=True) + newline, nulls included", async () => {
    const p = copyChain4();
    const text = readFileSync(p, "utf8").replace('"task_id": "T-1"', '"task_id": "T-2"');
    writeFileSync(p, text);
    const broken = await verifyJournal(p);
    appendFileSync(p, "junk\n");
    const partialOnly = await verifyJournal(copyChain4());
    const cases = [
      { run_id: "run-1", r: broken },
      { run_id: "r\u00e9", r: { ...partialOnly, divergent_index: null, expected_hash: null, actual_hash: null } },
    ];
    const py = runPython(
      `import json, sys
out = []
for c in json.load(sys.stdin):
    out.append(json.dumps({"run_id": c["run_id"], "step_index": c["i"], "expected_hash": c["e"], "actual_hash": c["a"]}, indent=2, sort_keys=True) + "\\n")
print(json.dumps(out))`,
      cases.map((c) => ({ run_id: c.run_id, i: c.r.divergent_index, e: c.r.expected_hash, a: c.r.actual_hash })),
    ) as string[];
    expect(cases.map((c) => divergenceReportText(c.run_id, c.r))).toEqual(py);
    expect(broken.divergent_index).toBe(1);
    const written = writeDivergenceReport(dirs.make(), "run-1", broken);
    expect(readFileSync(written, "utf8")).toBe(py[0]!);
  });
});
