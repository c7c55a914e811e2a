import { describe, expect, test } from "bun:test";
import { RowIndex } from "../../src/codec/row-index.ts";
import { contentAddress, indexedFinding, mutationFinding, parsedFinding } from "../../src/journal/provider-state.ts";
import { parse } from "../../src/pyjson/index.ts";
import type { JournalRow } from "../../src/journal/reader.ts";
import { mulberry32 } from "../../tools/fuzz/rng.ts";

const row = (text: string) => parse(text) as JournalRow;

describe("provider-state gate (spec upstream-parity §4)", () => {
  test("the spec's worked content address; step_index missing is 0, a non-integer is no address", () => {
    const r = row('{"mutation_kind":"compact_boundary","before_digest":"3d3995a15e467e22ba1391a4a4fabea031a085ae39c6b2b874ad89529ab30f73","after_digest":"55e124f2559a533c756f2595ecfbb375a93ca019c348451f29b0374af34732db","step_index":0}');
    expect(contentAddress(r)).toBe("a588797224cfe6ffc30d992c48f290ca83381dc39e50f2bd0f4b051e443f46f9");
    r.delete("step_index");
    expect(contentAddress(r)).toBe("a588797224cfe6ffc30d992c48f290ca83381dc39e50f2bd0f4b051e443f46f9");
    expect(contentAddress(row('{"step_index":"x"}'))).toBeNull();
  });
});

describe("a mutation row read off the codec's index = the parsed row", () => {
  const enc = new TextEncoder();
  const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const EVENTS = ['"provider_state_mutation"', '"provider\\u005fstate_mutation"', '"provider_state_mutatio\\u006E"', '"tick"', "5", "null", '["provider_state_mutation"]', '"provider_state_mutation "'];
  const STEPS = ["0", "7", "-3", '"12"', '" 12 "', "1.0", "true", "false", "null", '"x"', "123456789012345678901234567890", "-0", "[1]", "1e2"];
  const TEXTS = ['"plain"', '"caf\\u00e9"', '"café"', '"say \\"hi\\""', '"a/b"', '"a\\/b"', "5", "-0", "null", "true", "[]", '{"a": 1}', '""', '"\\u0041"', '"\\t"'];
  const FLAGS = ["true", "false", "null", "0", "1", "-0", "0.0", "0.5", '""', '"false"', "[]", "[0]", "{}", '{"a": 1}', "NaN", "-Infinity", "1e-400"];

  function row(r: () => number): string {
    const members: [string, string][] = [];
    if (r() < 0.95) members.push(["event", r() < 0.7 ? EVENTS[0]! : pick(r, EVENTS)]);
    if (r() < 0.9) members.push(["step_index", r() < 0.5 ? String(Math.floor(r() * 1000)) : pick(r, STEPS)]);
    for (const k of ["after_digest", "before_digest", "mutation_kind"]) if (r() < 0.9) members.push([k, r() < 0.6 ? `"${k[0]}${Math.floor(r() * 1e6)}"` : pick(r, TEXTS)]);
    if (r() < 0.85) members.push(["flagged", r() < 0.5 ? pick(r, ["true", "false"]) : pick(r, FLAGS)]);
    if (r() < 0.3) members.push(["note", '"provider_state_mutation"']);
    if (r() < 0.05) members.push([pick(r, ["event", "flagged", "step_index"]), pick(r, [...EVENTS, ...FLAGS])]); // a repeated key: the last one counts
    // half the rows carry the right content address (computed from the parsed row), so clean rows are many
    const text = (ms: [string, string][], sep: string) => "{" + ms.map(([k, v]) => `"${k}"${sep === ", " ? ": " : ":"}${v}`).join(sep) + "}";
    const sep = r() < 0.7 ? ", " : ",";
    let address = r() < 0.3 ? pick(r, TEXTS) : '"' + "0".repeat(64) + '"';
    if (r() < 0.5) {
      const parsed = parse(text(members, sep)) as JournalRow;
      const right = parsed instanceof Map ? contentAddress(parsed) : null;
      if (right !== null) address = `"${right}"`;
    }
    if (r() < 0.9) members.splice(Math.floor(r() * (members.length + 1)), 0, ["content_address", address]);
    return text(members, sep);
  }

  test("every finding the same on 20,000 rows spelled every way; most decided from the index", () => {
    const r = mulberry32(7);
    let indexed = 0;
    let findings = 0;
    const ix = new RowIndex();
    for (let i = 0; i < 20_000; i++) {
      const line = enc.encode(row(r));
      const want = parsedFinding(line);
      expect({ line: new TextDecoder().decode(line), got: mutationFinding(line) }).toEqual({ line: new TextDecoder().decode(line), got: want });
      const fromIndex = indexedFinding(line, ix);
      if (fromIndex !== undefined) {
        indexed++;
        expect(fromIndex).toEqual(want);
      }
      if (want !== null && want.address === 0 && want.flagged === null) findings++;
    }
    // both readers are exercised: the index decides the plain rows, the parse every other
    expect(indexed).toBeGreaterThan(5_000);
    expect(indexed).toBeLessThan(19_000);
    expect(findings).toBeGreaterThan(1_000);
  });
});
