import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "../../src/pyjson/parse.ts";
import type { PyObject } from "../../src/pyjson/types.ts";
import { changedFields, diffRunJournals } from "../../src/replay/diff.ts";

const row = (text: string) => parse(text) as PyObject;

describe("run-journal diff (library)", () => {
  test("changed fields ignore clock/chain fields, see 1 vs 1.0 as the hash does, and count absence", () => {
    const a = row('{"ts": 1, "index": 0, "event_hash": "x", "event": "e", "n": 1, "s": "a", "gone": null}');
    const b = row('{"ts": 2, "index": 9, "event_hash": "y", "event": "e", "n": 1.0, "s": "a", "new": 0}');
    expect(changedFields(a, b)).toEqual(["gone", "n", "new"]);
    expect(changedFields(row('{"x": {"a": 1, "b": 2}}'), row('{"x": {"b": 2, "a": 1}}'))).toEqual([]);
  });

  test("the stored payload_hash is not trusted: equal stored hashes over different payloads still diverge", async () => {
    const dir = mkdtempSync(join(tmpdir(), "replay-diff-"));
    try {
      const a = join(dir, "a.jsonl");
      const b = join(dir, "b.jsonl");
      writeFileSync(a, '{"event": "tool_call", "payload_hash": "same", "result": "ok"}\n');
      writeFileSync(b, '{"event": "tool_call", "payload_hash": "same", "result": "DIFFERENT"}\n');
      const d = await diffRunJournals(a, b);
      expect(d).toMatchObject({ diverged: true, index: 0, reason_code: "payload_mismatch", fields_changed: ["result"] });
      writeFileSync(b, '{"event": "tool_call", "payload_hash": "same", "kind": "http", "response": "other", "result": "ok"}\n');
      writeFileSync(a, '{"event": "tool_call", "payload_hash": "same", "kind": "http", "response": "first", "result": "ok"}\n');
      expect((await diffRunJournals(a, b)).reason_code).toBe("response_mismatch");
      writeFileSync(b, '{"event": "provider_state_mutation", "mutation_kind": "memory_write"}\n');
      const m = await diffRunJournals(a, b);
      expect(m.reason_code).toBe("provider_state_mutation");
      expect(m.reason).toContain("(memory_write) recorded in run_b");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
