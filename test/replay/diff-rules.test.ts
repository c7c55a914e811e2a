import { describe, expect, test } from "bun:test";
import { canonical } from "../../src/pyjson/encode.ts";
import { parse } from "../../src/pyjson/parse.ts";
import type { PyObject } from "../../src/pyjson/types.ts";
import { diffRules, RowProjector } from "../../src/replay/diff-rules.ts";

const row = (s: string) => parse(s) as PyObject;

describe("replay diff rules", () => {
  test("defaults: identity fields and agent ids; --no-default-ignores: none; user paths are added once", () => {
    expect(diffRules()).toEqual({ ignored: ["run_id", "git_sha", "git_branch", "fingerprint", "session_id", "pid"], aligned: ["agent_id", "agent_ids"], defaults: true });
    expect(diffRules({ noDefaultIgnores: true, ignore: ["a.b", "a.b", " c "] })).toEqual({ ignored: ["a.b", "c"], aligned: [], defaults: false });
    for (const bad of ["", ".", "a.", ".a", "a..b"]) expect(() => diffRules({ ignore: [bad] })).toThrow("--ignore needs");
  });

  test("a dotted path removes a nested key, through lists, and never mutates the row", () => {
    const p = new RowProjector(diffRules({ noDefaultIgnores: true, ignore: ["usage.tokens", "calls.id"] }));
    const r = row('{"event":"x","usage":{"tokens":5,"cost":1},"calls":[{"id":"a","n":1},{"id":"b"},3],"keep":{"usage":{"tokens":1}}}');
    const before = canonical(r);
    expect(canonical(p.project(r))).toBe('{"calls":[{"n":1},{},3],"event":"x","keep":{"usage":{"tokens":1}},"usage":{"cost":1}}');
    expect(canonical(r)).toBe(before);
    expect([...p.seen].sort()).toEqual(["calls.id", "usage.tokens"]);
    // Absent paths: the same row object back, nothing seen.
    const q = new RowProjector(diffRules({ noDefaultIgnores: true, ignore: ["nope.deeper"] }));
    const plain = row('{"event":"x","nope":1}');
    expect(q.project(plain)).toBe(plain);
    expect(q.seen.size).toBe(0);
  });

  test("aligned ids: renamed by order of first appearance, per run, lists included", () => {
    const a = new RowProjector(diffRules());
    const b = new RowProjector(diffRules());
    const seqA = ['{"agent_id":"qa-1111"}', '{"agent_id":"be-2222"}', '{"agent_ids":["be-2222","qa-1111"]}'].map((s) => canonical(a.project(row(s))));
    const seqB = ['{"agent_id":"qa-9999"}', '{"agent_id":"be-8888"}', '{"agent_ids":["be-8888","qa-9999"]}'].map((s) => canonical(b.project(row(s))));
    expect(seqA).toEqual(seqB);
    expect(seqA).toEqual(['{"agent_id":"#1"}', '{"agent_id":"#2"}', '{"agent_ids":["#2","#1"]}']);
    // Handing the second task to the first agent is a difference.
    const c = new RowProjector(diffRules());
    const seqC = ['{"agent_id":"qa-9999"}', '{"agent_id":"qa-9999"}'].map((s) => canonical(c.project(row(s))));
    expect(seqC[1]).not.toBe(seqA[1]);
  });
});
