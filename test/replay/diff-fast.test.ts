/**
 * `replay diff`'s fast path (src/replay/diff-fast.ts) against the exact
 * one it replaced (diffRunJournalsExact): the same result — JSON and prose,
 * rows, fields, rules applied — or the same error, for every pair of shared
 * run-journal vectors and for generated pairs with hostile differences.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { prose } from "../../src/cli/commands/replay/diff.ts";
import { JOURNAL_MAX_ROW_BYTES } from "../../src/fsutil/input.ts";
import { renderJson } from "../../src/render/json.ts";
import { diffRunJournals, diffRunJournalsExact } from "../../src/replay/diff.ts";
import { diffRules, type DiffRules } from "../../src/replay/diff-rules.ts";
import { RowScan } from "../../src/replay/diff-fast-scan.ts";
import { VECTORS } from "../helpers/cli.ts";
import { writeLongRowJournal } from "./hostile-rows.ts";

const dir = mkdtempSync(join(tmpdir(), "diff-fast-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const RULES: [string, DiffRules][] = [
  ["defaults", diffRules()],
  ["no defaults", diffRules({ noDefaultIgnores: true })],
  ["dotted", diffRules({ ignore: ["args.line", "tokens.cache.read", "entries.sha256", "result"] })],
  ["overlapping", diffRules({ ignore: ["args.line", "args", "ts", "event", "agent_id.x"] })],
];

/** Both paths' outcome as text: the JSON document and the prose, or the error. */
async function outcome(run: (a: string, b: string, r: DiffRules) => Promise<unknown>, a: string, b: string, rules: DiffRules): Promise<string> {
  try {
    const d = (await run(a, b, rules)) as Parameters<typeof prose>[2];
    return renderJson(d, 2) + "\n" + prose({ runId: "A", runDir: "", journal: a }, { runId: "B", runDir: "", journal: b }, d).join("\n");
  } catch (err) {
    return `error ${(err as { code?: string }).code}: ${(err as Error).message}`;
  }
}

async function expectSame(a: string, b: string): Promise<void> {
  for (const [name, rules] of RULES) {
    const exact = await outcome(diffRunJournalsExact, a, b, rules);
    const fast = await outcome(diffRunJournals, a, b, rules);
    if (fast !== exact) throw new Error(`${name}: ${a} vs ${b}\n--- exact\n${exact}\n--- fast\n${fast}`);
  }
}

/** Whether `diff` diverged, and how many rows the fast path's scan took meanwhile. */
async function scannedRows(diff: () => Promise<{ diverged: boolean }>): Promise<{ diverged: boolean; scanned: number }> {
  const scan = RowScan.prototype.scan;
  let scanned = 0;
  RowScan.prototype.scan = function (this: RowScan, b: Uint8Array, s: number, e: number) {
    const took = scan.call(this, b, s, e);
    if (took) scanned++;
    return took;
  };
  try {
    return { diverged: (await diff()).diverged, scanned };
  } finally {
    RowScan.prototype.scan = scan;
  }
}

function write(name: string, text: string | Uint8Array): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

describe("replay diff fast path = exact path", () => {
  test("every pair of shared run-journal vectors, under every rule set", async () => {
    const runDir = join(VECTORS, "run-journal");
    const files = readdirSync(runDir).filter((f) => f.endsWith(".jsonl")).map((f) => join(runDir, f));
    expect(files.length).toBeGreaterThan(10);
    for (const a of files) for (const b of files) await expectSame(a, b);
  }, 120_000);

  // A journal in Python's default spelling: envelope, agent ids, nested values, escaped text.
  const rows: string[] = [];
  for (let i = 0; i < 400; i++) {
    const agent = `agent-${(i % 7).toString(16).padStart(8, "0")}`;
    const env = `{"ts": ${1727000000 + i}.5, "elapsed_s": ${i}.25, "index": ${i}, "event": "${i % 5 === 0 ? "tool_call" : "task_claimed"}", "prev_hash": "${"a".repeat(64)}", "payload_hash": "${"b".repeat(64)}", "event_hash": "${"c".repeat(64)}"`;
    rows.push(
      env +
        `, "run_id": "run-a", "agent_id": "${agent}", "task_ids": ["T-${i}"], "args": {"path": "src/x.py", "line": ${i}}, ` +
        `"tokens": {"input": ${i * 3}, "cache": {"read": ${i}, "write": 0}}, "entries": [{"path": "a", "sha256": "${i}"}], ` +
        `"summary": "R\\u00e9sum\\u00e9 \\u2014 ok \\"q\\" \\\\ \\n", "ok": true, "cost": 1.5, "none": null}`,
    );
  }
  const base = write("base.jsonl", rows.join("\n") + "\n");
  const variant = (name: string, edit: (rows: string[]) => string[], join_ = "\n"): string => write(name, edit([...rows]).join(join_) + join_);
  const at = (k: number, f: (row: string) => string) => (r: string[]) => {
    r[k] = f(r[k]!);
    return r;
  };

  const cases: [string, (r: string[]) => string[], string?][] = [
    ["identical", (r) => r],
    ["deep change", at(123, (x) => x.replace('"read": 123', '"read": 124'))],
    ["ignored field differs", (r) => r.map((x) => x.replace('"run_id": "run-a"', '"run_id": "run-b"'))],
    ["dotted ignored differs", (r) => r.map((x, i) => (i === 50 ? x.replace(/"line": \d+/, '"line": -1') : x))],
    ["list element path differs", at(77, (x) => x.replace('"sha256": "77"', '"sha256": "x"'))],
    ["agent ids renamed", (r) => r.map((x) => x.replace(/agent-0000000(\d)/, "bot-$1$1"))],
    ["agent ids swapped late", at(300, (x) => x.replace(/agent-0000000\d/, "agent-00000009"))],
    ["agent id not a string", at(10, (x) => x.replace(/"agent-0000000\d"/, "null"))],
    ["agent_ids list", (r) => r.map((x, i) => (i % 3 ? x : x.replace('"task_ids"', `"agent_ids": ["agent-${i % 4}", ["agent-1", 2]], "task_ids"`)))],
    ["agent_ids holds an object", at(9, (x) => x.replace('"task_ids"', '"agent_ids": [{"a": 1}], "task_ids"'))],
    ["agent id escaped spelling", at(20, (x) => x.replace(/"agent-0000000(\d)"/, '"agent\\u002d0000000$1"'))],
    ["escaped key spelling", at(21, (x) => x.replace('"agent_id"', '"agent\\u005fid"'))],
    ["shorter", (r) => r.slice(0, 350)],
    ["longer", (r) => [...r, r[5]!, r[6]!]],
    ["extra mutation row", (r) => [...r, '{"event": "provider_state_mutation", "mutation_kind": "memory_write"}']],
    ["discarded lines", (r) => r.flatMap((x, i) => (i % 40 === 0 ? ["not json", "[1, 2]", '{"torn": ', "   ", x] : [x]))],
    ["compact spacing", (r) => r.map((x) => x.replace(/": /g, '":').replace(/, "/g, ',"'))],
    ["extra spacing", (r) => r.map((x) => x.replace(/": /g, '" :  ').replace(/^\{/, "{ \t"))],
    ["leading whitespace", (r) => r.map((x) => ` ${x}\t`)],
    ["raw unicode", (r) => r.map((x) => x.replace(/\\u00e9/g, "é").replace("\\u2014", "—"))],
    ["uppercase escapes", (r) => r.map((x) => x.replace(/\\u00e9/g, "\\u00E9"))],
    ["slash escape", at(3, (x) => x.replace('"src/x.py"', '"src\\/x.py"'))],
    ["float vs int", at(200, (x) => x.replace('"cost": 1.5', '"cost": 1.0'))],
    ["int vs float", (r) => r.map((x) => x.replace('"cost": 1.5', '"cost": 1'))],
    ["exponent float", (r) => r.map((x) => x.replace('"cost": 1.5', '"cost": 15e-1'))],
    ["key order", (r) => r.map((x) => x.replace('"ok": true, "cost": 1.5', '"cost": 1.5, "ok": true').replace('{"path": "src/x.py", "line"', '{"line"').replace(/"line": (\d+)\}/, '"line": $1, "path": "src/x.py"}'))],
    ["duplicate keys", at(30, (x) => x.replace('"ok": true', '"ok": false, "ok": true'))],
    ["duplicate aligned key", at(31, (x) => x.replace('"ok": true', '"agent_id": "agent-00000003", "ok": true'))],
    ["event missing", at(40, (x) => x.replace(/"event": "[a-z_]+", /, ""))],
    ["event escaped", at(41, (x) => x.replace('"event": "task_claimed"', '"event": "task\\u005fclaimed"'))],
    ["event not a string", (r) => r.map((x, i) => (i === 42 ? x.replace(/"event": "[a-z_]+"/, '"event": 5') : x))],
    ["hash_profile", at(43, (x) => x.replace('"ok": true', '"hash_profile": "py-json-v1", "ok": true'))],
    ["ignored envelope spelling", at(44, (x) => x.replace('"ts": ', '"ts" : '))],
    ["nan and infinity", (r) => r.map((x) => x.replace('"cost": 1.5', '"cost": NaN, "inf": -Infinity'))],
    ["big int", at(45, (x) => x.replace('"cost": 1.5', `"cost": ${"9".repeat(5000)}`))],
    ["deep nesting", at(46, (x) => x.replace('"none": null', `"none": ${"[".repeat(80)}${"]".repeat(80)}`))],
    ["control byte in a string", at(47, (x) => x.replace("ok \\\"q", "ok \u0001 \\\"q"))],
    ["crlf", (r) => r, "\r\n"],
    ["lone cr", (r) => r, "\r"],
    ["mixed cr", (r) => r.map((x, i) => (i % 9 === 0 ? `${x}\r` : x))],
    ["crlf with lone and doubled crs", (r) => r.map((x, i) => (i % 13 === 0 ? `${x}\r` : i % 17 === 0 ? `${x}\r\r` : x)), "\r\n"],
    ["blank and whitespace lines", (r) => r.flatMap((x, i) => (i % 11 ? [x] : ["", " \u000c ", x]))],
  ];
  // What the defaults find, for some of them (the comparison above cannot tell a path that never diverges).
  const verdicts: Record<string, [boolean, number | null]> = {
    identical: [false, null],
    "deep change": [true, 123],
    "ignored field differs": [false, null],
    "dotted ignored differs": [true, 50],
    "agent ids renamed": [false, null],
    "agent ids swapped late": [true, 300],
    shorter: [true, 350],
    "discarded lines": [false, null],
    "compact spacing": [false, null],
    "raw unicode": [false, null],
    "float vs int": [true, 200],
    "key order": [false, null],
    crlf: [false, null],
    "lone cr": [false, null],
  };
  test("CR LF line ends are scanned, not handed to the exact reader (the test is not vacuous)", async () => {
    const crlf = variant("crlf-scanned.jsonl", (r) => r, "\r\n");
    const { diverged, scanned } = await scannedRows(() => diffRunJournals(base, crlf));
    expect(diverged).toBe(false);
    expect(scanned).toBe(2 * rows.length);
  });

  for (const [name, edit, sep] of cases) {
    test(`generated pair: ${name}`, async () => {
      const other = variant(`${name.replace(/\W+/g, "-")}.jsonl`, edit, sep);
      await expectSame(base, other);
      await expectSame(other, base);
      const want = verdicts[name];
      if (want) {
        const d = await diffRunJournals(base, other);
        expect([d.diverged, d.index]).toEqual(want);
      }
    }, 30_000);
  }

  describe("escaped keys (Python spells every non-ASCII key with escapes)", () => {
    const escaped = rows.map((x, i) =>
      x.replace('"ok": true', `"R\\u00e9sum\\u00e9": ${i % 3}, "ok": true`).replace('{"path": "src/x.py"', '{"p\\u00e9": 1, "q\\"k": 2, "path": "src/x.py"'),
    );
    const base2 = write("escaped-keys.jsonl", escaped.join("\n") + "\n");
    const edited = (name: string, k: number, f: (row: string) => string): string => {
      const r = [...escaped];
      r[k] = f(r[k]!);
      return write(`escaped-${name}.jsonl`, r.join("\n") + "\n");
    };
    // rules naming keys Python escapes: an escaped key may then be one of them, and only the exact path can tell
    const rules: [string, DiffRules][] = [...RULES, ["escaped names", diffRules({ ignore: ["Résumé", "args.pé", 'args.q"k'] })]];
    const pairs: [string, string, Record<string, [boolean, number | null]>][] = [
      ["identical", base2, { defaults: [false, null], "escaped names": [false, null] }],
      ["escaped key's value", edited("value", 70, (x) => x.replace(/"R\\u00e9sum\\u00e9": \d/, '"R\\u00e9sum\\u00e9": 7')), { defaults: [true, 70], "escaped names": [false, null] }],
      ["nested escaped key's value", edited("nested", 90, (x) => x.replace('"p\\u00e9": 1', '"p\\u00e9": 2')), { defaults: [true, 90], "escaped names": [false, null] }],
      ["quote in a key", edited("quote", 95, (x) => x.replace('"q\\"k": 2', '"q\\"k": 3')), { defaults: [true, 95], "escaped names": [false, null] }],
      ["uppercase escape", edited("upper", 110, (x) => x.replace('"R\\u00e9sum\\u00e9"', '"R\\u00E9sum\\u00e9"')), { defaults: [false, null] }],
      ["raw UTF-8 key", edited("raw", 120, (x) => x.replace('"R\\u00e9sum\\u00e9"', '"Résumé"')), { defaults: [false, null] }],
      ["named key escaped beside them", edited("named", 130, (x) => x.replace('"agent_id"', '"agent\\u005fid"')), { defaults: [false, null] }],
    ];
    // a name the rules give, spelled with an escape Python never writes, in every row of both: only the exact path
    // knows the rule applied (the row's NotPython flag sends its escaped keys there)
    const named = write("escaped-named-everywhere.jsonl", escaped.map((x) => x.replace('"agent_id"', '"agent\\u005fid"')).join("\n") + "\n");
    for (const [name, other, want] of pairs) {
      test(`${name}: the fast path's result is the exact path's, under every rule set`, async () => {
        for (const [rname, r] of rules) {
          for (const [x, y] of [[base2, other], [other, base2], [named, named]] as const) {
            const exact = await outcome(diffRunJournalsExact, x, y, r);
            const fast = await outcome(diffRunJournals, x, y, r);
            if (fast !== exact) throw new Error(`${rname}: ${x} vs ${y}\n--- exact\n${exact}\n--- fast\n${fast}`);
          }
          const w = want[rname];
          if (w) {
            const d = await diffRunJournals(base2, other, r);
            expect([rname, d.diverged, d.index]).toEqual([rname, ...w]);
          }
        }
      }, 30_000);
    }

    test("rows with escaped keys are scanned under rules that name none; declined where a name holds a character Python escapes", async () => {
      expect(await scannedRows(() => diffRunJournals(base2, base2))).toEqual({ diverged: false, scanned: 2 * escaped.length });
      expect(await scannedRows(() => diffRunJournals(base2, base2, rules.at(-1)![1]))).toEqual({ diverged: false, scanned: 0 });
    });
  });

  test("rows across read-buffer boundaries, long rows, an unterminated tail", async () => {
    const big = rows.map((x, i) => (i % 50 === 7 ? x.replace('"none": null', `"none": "${"z".repeat(70_000 + i)}"`) : x));
    const huge = [...big.slice(0, 200), big[1]!.replace('"none": null', `"none": "${"y".repeat(1_500_000)}"`), ...big.slice(200)];
    const a = write("big-a.jsonl", [...huge, ...huge, ...huge].join("\n"));
    const changed = [...huge, ...huge, ...huge];
    changed[1000] = changed[1000]!.replace('"read": ', '"read": 1');
    await expectSame(a, write("big-b.jsonl", [...huge, ...huge, ...huge].join("\n") + "\n"));
    await expectSame(a, write("big-c.jsonl", changed.join("\n")));
    await expectSame(a, write("big-d.jsonl", [...huge, ...huge, ...huge].join("\r\n")));
    expect((await diffRunJournals(a, join(dir, "big-c.jsonl"))).index).toBe(1000);
  }, 120_000);

  test("journals of lines of 64 KiB and more, each spanning reads (one buffer reused for them), alike and differing late", async () => {
    const a = join(dir, "long-a.jsonl");
    writeLongRowJournal(a);
    const text = readFileSync(a, "latin1");
    const b = write("long-b.jsonl", text);
    const at = text.lastIndexOf("x".repeat(1000));
    const c = write("long-c.jsonl", Buffer.from(text.slice(0, at) + "X" + text.slice(at + 1), "latin1"));
    await expectSame(a, b);
    await expectSame(a, c);
    await expectSame(c, a);
  }, 120_000);

  test("a line over 16 MiB (the old limit) is read the same way: its strings of a megabyte and more stay bytes on the fast path", async () => {
    const over = `{"event": "x", "pad": "${"p".repeat(16 * 1024 * 1024)}", "list": [1, "${"é".repeat(300)}"]}`;
    const a = write("over-a.jsonl", [...rows.slice(0, 5), over, ...rows.slice(5, 8)].join("\n") + "\n");
    await expectSame(a, base);
    await expectSame(base, a);
    const early = write("over-b.jsonl", [rows[0]!.replace('"ok": true', '"ok": false'), over].join("\n") + "\n");
    await expectSame(early, base);
    const late = write("over-c.jsonl", [...rows.slice(0, 5), over.replace('"pad": "p', '"pad": "P'), ...rows.slice(5, 8)].join("\n") + "\n");
    await expectSame(a, late);
  }, 60_000);

  test("a line past the row limit (256 MiB) fails the same way, unless a divergence comes first", async () => {
    // the line's middle a hole in the file (NUL bytes, no disk)
    const over = (name: string, before: string[]) => {
      const p = join(dir, name);
      const head = before.join("\n") + '\n{"event": "x", "pad": "';
      writeFileSync(p, head);
      truncateSync(p, Buffer.byteLength(head) + JOURNAL_MAX_ROW_BYTES);
      appendFileSync(p, '"}\n' + rows.slice(5, 8).join("\n") + "\n");
      return p;
    };
    const defaults = diffRules();
    const same = async (a: string, b: string) => expect(await outcome(diffRunJournals, a, b, defaults)).toBe(await outcome(diffRunJournalsExact, a, b, defaults));
    const a = over("limit-a.jsonl", rows.slice(0, 5));
    expect(await outcome(diffRunJournals, a, base, defaults)).toStartWith("error row_too_large");
    await same(a, base);
    await same(base, a);
    const early = over("limit-b.jsonl", [rows[0]!.replace('"ok": true', '"ok": false')]);
    expect(await outcome(diffRunJournals, early, base, defaults)).toStartWith("{");
    await same(early, base);
  }, 60_000);

  test("empty and missing journals", async () => {
    const empty = write("empty.jsonl", "");
    const blanks = write("blanks.jsonl", "\n\n  \n");
    await expectSame(empty, blanks);
    await expectSame(empty, base);
    await expectSame(base, blanks);
    await expectSame(join(dir, "missing.jsonl"), base);
  });
});
