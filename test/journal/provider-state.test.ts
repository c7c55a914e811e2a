import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { RowIndex } from "../../src/codec/row-index.ts";
import { contentAddress, indexedFinding, mutationFinding, parsedFinding, verifyProviderState } from "../../src/journal/provider-state.ts";
import { parse } from "../../src/pyjson/index.ts";
import type { JournalRow } from "../../src/journal/reader.ts";
import { tempDirs } from "./tmp.ts";
import { mulberry32 } from "../../tools/fuzz/rng.ts";

const dirs = tempDirs("provider-state");
const row = (text: string) => parse(text) as JournalRow;

describe("provider-state gate (spec upstream-parity §4)", () => {
  test("the spec's worked content address; step_index missing is 0, a non-integer is no address", () => {
    const r = row('{"mutation_kind":"compact_boundary","before_digest":"3d3995a15e467e22ba1391a4a4fabea031a085ae39c6b2b874ad89529ab30f73","after_digest":"55e124f2559a533c756f2595ecfbb375a93ca019c348451f29b0374af34732db","step_index":0}');
    expect(contentAddress(r)).toBe("a588797224cfe6ffc30d992c48f290ca83381dc39e50f2bd0f4b051e443f46f9");
    r.delete("step_index");
    expect(contentAddress(r)).toBe("a588797224cfe6ffc30d992c48f290ca83381dc39e50f2bd0f4b051e443f46f9");
    expect(contentAddress(row('{"step_index":"x"}'))).toBeNull();
  });

  test("Python truthiness of flagged; indices count rows, not blank lines; other events are ignored", () => {
    const d = dirs.make();
    const path = join(d, "j.jsonl");
    const lines = [
      '{"event":"run_started"}',
      "",
      '{"event":"provider_state_mutation","flagged":"false","content_address":"x"}',
      '{"event":"task_completed","note":"provider_state_mutation","flagged":true}',
      '{"event":"provider_state_mutation","flagged":0}',
      '{"event":"provider_state_mutation","flagged":[1],"mutation_kind":"k"}',
    ];
    writeFileSync(path, lines.join("\n") + "\n");
    const v = verifyProviderState(path);
    expect(v.mutations).toBe(3);
    expect(v.flagged_steps).toEqual([1, 4]);
    expect(v.errors[0]).toBe("step 1: provider_state_mutation content address mismatch");
    expect(v.errors).toContain("step 4: flagged provider-side mutation (k) arrived in deterministic mode");
    dirs.cleanup();
  });

  test("the same findings and indices whatever the line breaks (LF, CRLF, CR), blank lines, a missing final newline, or lines across read chunks", () => {
    const d = dirs.make();
    const rows = Array.from({ length: 3000 }, (_, i) =>
      i % 97 === 5 ? `{"event":"provider_state_mutation","flagged":true,"mutation_kind":"m${i}","pad":"${"x".repeat(i % 700)}"}` : `{"event":"tick","n":${i},"pad":"${"y".repeat(i % 900)}"}`,
    );
    const want = rows.flatMap((r, i) => (r.includes("provider_state") ? [i] : []));
    for (const [name, text] of [
      ["lf", rows.join("\n") + "\n"],
      ["crlf", rows.join("\r\n") + "\r\n"],
      ["cr", rows.join("\r")],
      ["blank", rows.join("\n\n \t\n") + "\n"],
    ] as const) {
      const path = join(d, `${name}.jsonl`);
      writeFileSync(path, text);
      expect([name, verifyProviderState(path).flagged_steps]).toEqual([name, want]);
    }
  });

  test("lines mixing breaks, escapes that are not of a printable, and an event name spelled with escaped printables", () => {
    const d = dirs.make();
    const breaks = ["\n", "\r\n", "\r", "\n\n", "\r\n\r\n"];
    const rows = Array.from({ length: 4000 }, (_, i) => {
      // escapes a printable-escape probe must pass over: é (either case), a control character, DEL
      const pad = ["caf\\u00e9", "\\u001b[0m", "\\u007f", "CAF\\u00C9", "plain"][i % 5];
      if (i % 101 === 7) return `{"event":"provider_state_mutation","flagged":true,"mutation_kind":"m${i}","pad":"${pad}"}`;
      // the event name spelled with `\u005f` (an escaped `_`): no needle in the bytes, still a mutation row
      if (i % 211 === 9) return `{"event":"provider\\u005fstate\\u005fmutation","flagged":1,"pad":"${pad}"}`;
      return `{"event":"tick","n":${i},"pad":"${pad}${"z".repeat(i % 300)}"}`;
    });
    const want = rows.flatMap((r, i) => (r.includes("provider_state") || r.includes("provider\\u005f") ? [i] : []));
    expect(want.length).toBeGreaterThan(50);
    const text = rows.map((r, i) => r + breaks[(i * 7) % breaks.length]).join("");
    const path = join(d, "mixed.jsonl");
    writeFileSync(path, text);
    expect(verifyProviderState(path).flagged_steps).toEqual(want);
  });

  test("rows that straddle read chunks, one after another in the splitter's reused buffer, are each searched anew", () => {
    const d = dirs.make();
    const path = join(d, "straddle.jsonl");
    // ~700 KB rows: nearly every one crosses a 1 MiB read, so each is assembled in the splitter's own buffer, the
    // same buffer again for the next (a search cached from the last row's bytes must not answer for this one)
    const rows = Array.from({ length: 12 }, (_, i) =>
      i % 3 === 2
        ? `{"event":"provider_state_mutation","flagged":true,"mutation_kind":"m${i}","pad":"${"m".repeat(700_000)}"}`
        : `{"event":"tick","n":${i},"pad":"${"t".repeat(700_000)}"}`,
    );
    writeFileSync(path, rows.join("\n") + "\n");
    expect(verifyProviderState(path).flagged_steps).toEqual([2, 5, 8, 11]);
  });

  test("a mutation row longer than 16 MiB is gated like any other (the verify reads rows up to 256 MiB)", () => {
    const d = dirs.make();
    const path = join(d, "huge.jsonl");
    const pad = "p".repeat(17 << 20);
    writeFileSync(path, ['{"event":"run_started"}', `{"event":"provider_state_mutation","flagged":true,"mutation_kind":"big","pad":"${pad}"}`, '{"event":"run_completed"}'].join("\n") + "\n");
    const v = verifyProviderState(path);
    expect(v.mutations).toBe(1);
    expect(v.flagged_steps).toEqual([1]);
    expect(v.ok).toBe(false);
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
