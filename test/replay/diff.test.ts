import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "../../src/pyjson/parse.ts";
import type { PyObject } from "../../src/pyjson/types.ts";
import { parseRowBytes, setBytePathMin } from "../../src/pyjson/row.ts";
import { changedFields, diffRunJournals, diffRunJournalsExact } from "../../src/replay/diff.ts";
import { diffRules, type DiffRules } from "../../src/replay/diff-rules.ts";

const row = (text: string) => parse(text) as PyObject;

describe("run-journal diff (library)", () => {
  test("changed fields ignore clock/chain fields, see 1 vs 1.0 as the hash does, and count absence", () => {
    const a = row('{"ts": 1, "index": 0, "event_hash": "x", "event": "e", "n": 1, "s": "a", "gone": null}');
    const b = row('{"ts": 2, "index": 9, "event_hash": "y", "event": "e", "n": 1.0, "s": "a", "new": 0}');
    expect(changedFields(a, b)).toEqual(["gone", "n", "new"]);
    expect(changedFields(row('{"x": {"a": 1, "b": 2}}'), row('{"x": {"b": 2, "a": 1}}'))).toEqual([]);
  });

  test("a huge row's values still bytes compare as their trees, whatever their spelling", () => {
    // every list, object and string kept as bytes, as in a huge row (src/pyjson/row.ts)
    const bytesRow = (text: string) => parseRowBytes(new TextEncoder().encode(text), 0, 0) as PyObject;
    const a = '{"s": "\\u00e9\\ud83d\\ude00", "o": {"a": 1, "b": [2, "x"]}, "n": [1], "t": "same", "u": {"k": 1}}';
    const b = '{"s": "é😀", "o": {"b": [2, "x"], "a": 1}, "n": [1.0], "t": "same", "u": {"k": 2}}';
    expect(changedFields(bytesRow(a), bytesRow(b))).toEqual(["n", "u"]);
    expect(changedFields(bytesRow(a), row(b))).toEqual(["n", "u"]);
    expect(changedFields(row(a), bytesRow(b))).toEqual(["n", "u"]);
    expect(changedFields(row(a), row(b))).toEqual(["n", "u"]);
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

  /**
   * A row of 64 KiB or more is read with its large lists and objects still
   * bytes (src/pyjson/row.ts): the rules must reach into them as into any
   * row's. Each case holds both paths to the verdict a small row gets, on
   * rows that are that large, and on small rows all read the byte way.
   */
  describe("a huge row's large members are compared as any row's", () => {
    const ids = (tag: string) => Array.from({ length: 40 }, (_, i) => `backend-${(4096 + i).toString(16)}${tag}`);
    const spawn = (list: string[]) => JSON.stringify({ event: "agent_spawned", agent_ids: list });
    const call = (list: string[], t: number, pad: string) => JSON.stringify({ event: "tool_call", agent_ids: list, payload: { pad, t, nested: [{ t }] }, note: "n".repeat(300) });
    const cases: { name: string; a: (pad: string) => string[]; b: (pad: string) => string[]; rules: DiffRules; expected: [string, number | null] }[] = [
      {
        name: "an --ignore path into a large object is applied",
        a: (pad) => [spawn(ids("a")), call(ids("a"), 1, pad)],
        b: (pad) => [spawn(ids("b")), call(ids("b"), 2, pad)],
        rules: diffRules({ ignore: ["payload.t", "payload.nested.t"] }),
        expected: ["identical", null],
      },
      {
        name: "without it, the path's value diverges",
        a: (pad) => [spawn(ids("a")), call(ids("a"), 1, pad)],
        b: (pad) => [spawn(ids("b")), call(ids("b"), 2, pad)],
        rules: diffRules(),
        expected: ["payload_mismatch", 1],
      },
      {
        // the same ids in the same order, but run B met them in the reverse order: aligned, the lists differ
        name: "aligned ids in a large list are compared by first appearance (equal text is not equal)",
        a: (pad) => [spawn(ids("a")), call(ids("a"), 1, pad)],
        b: (pad) => [spawn(ids("a").reverse()), call(ids("a"), 1, pad)],
        rules: diffRules(),
        expected: ["payload_mismatch", 1],
      },
      {
        name: "and other ids met in the same order are equal",
        a: (pad) => [spawn(ids("a")), call(ids("a"), 1, pad)],
        b: (pad) => [spawn(ids("b")), call(ids("b"), 1, pad)],
        rules: diffRules(),
        expected: ["identical", null],
      },
    ];
    const dir = mkdtempSync(join(tmpdir(), "replay-diff-huge-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const write = (name: string, lines: string[]) => {
      const p = join(dir, name);
      writeFileSync(p, lines.join("\n") + "\n");
      return p;
    };
    const verdicts = async (a: string, b: string, rules: DiffRules): Promise<[string, number | null][]> =>
      [await diffRunJournals(a, b, rules), await diffRunJournalsExact(a, b, rules)].map((d) => [d.reason_code, d.index]);

    for (const c of cases) {
      test(c.name, async () => {
        const pad = "x".repeat(70_000);
        const a = write("a.jsonl", c.a(pad));
        const b = write("b.jsonl", c.b(pad));
        expect(await verdicts(a, b, c.rules)).toEqual([c.expected, c.expected]);
        const sa = write("sa.jsonl", c.a("x"));
        const sb = write("sb.jsonl", c.b("x"));
        expect(await verdicts(sa, sb, c.rules)).toEqual([c.expected, c.expected]);
        const prev = setBytePathMin(0);
        try {
          expect(await verdicts(sa, sb, c.rules)).toEqual([c.expected, c.expected]);
        } finally {
          setBytePathMin(prev);
        }
      });
    }
  });
});
