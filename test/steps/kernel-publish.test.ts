/**
 * The step kernel's parts `replay publish` leans on, against the
 * JavaScript they stand in for: its clock-reading test of a dict-form
 * row's `ts` (the codec's isPythonFloat), and publish mode (KERNEL_PUBLISH):
 * each taken row's published line and the redacted chain (rows.ts
 * redactRow + rowLine), and the rows it reports for the leak scanner
 * (PathLeakScanner.mayHold over the fields left unredacted), under every
 * policy and kind of home directory.
 */
import { describe, expect, test } from "bun:test";
import { mulberry32 } from "../../tools/fuzz/rng.ts";
import { canonical } from "../../src/pyjson/encode.ts";
import { parse } from "../../src/pyjson/parse.ts";
import type { PyLike } from "../../src/pyjson/types.ts";
import { PathLeakScanner } from "../../src/receipts/path-leaks.ts";
import { fieldSlots } from "../../src/receipts/redact-fast.ts";
import { dictForm, redactRow, rowLine } from "../../src/receipts/rows.ts";
import { GENESIS_HASH } from "../../src/steps/hash.ts";
import { KERNEL_DICT_FORM, KERNEL_PUBLISH, StepKernel, stepKernelStats } from "../../src/steps/kernel.ts";
import { isPythonFloat } from "../../src/codec/row-index.ts";
import { dictFormJournal, dictFormRow } from "../helpers/step-journals.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

const READ = 4 << 20;
const kernelOf = (mode: number): StepKernel => {
  const k = new StepKernel(READ + 65536, READ, { publish: 2 * READ });
  k.setMode(mode);
  return k;
};

describe("dict-form ts: the kernel decides clock readings as isPythonFloat does", () => {
  const k = kernelOf(KERNEL_DICT_FORM);
  const plainFields = { model: "m", prompt: "p", tool_call: { a: 1 }, tool_result: null };
  /** Whether the kernel takes the row with this ts (the rest of it is dict form and verifies). */
  const takes = (ts: string): boolean => {
    const bytes = enc.encode(`${dictFormRow(0, GENESIS_HASH, plainFields, ts).line}\n`);
    k.arena.set(bytes, 0);
    k.head.set(enc.encode(GENESIS_HASH));
    return k.verify(k.arena, 0, bytes.length, READ, 0) === bytes.length;
  };
  /** What the kernel must answer: a float lexeme (its pre-checks) spelled as repr. */
  const want = (ts: string): boolean => {
    const b = enc.encode(ts);
    return /[.eE]/.test(ts) && /^-?[0-9]/.test(ts) && ts.length <= 32 && isPythonFloat(b, 0, b.length);
  };

  test("hostile spellings", () => {
    const cases = [
      "1796137431.4230797", "1796137431.42307970", "1796137431.423080", "1796137431.0", "1796137431.00", "1796137431.5", "-1796137431.25",
      "1.0", "1.00", "1.10", "1.5", "-1.5", "0.1", "0.10", "0.0", "-0.0", "1e16", "1e+16", "1E16", "1.7961374314230797e9", "5e-324",
      "4294967295.9999999", "4294967296.5", "4294967295.5", "2147483648.0000002", "2147483648.0000001", "1.0000000000000002",
      "1.0000000000000001", "9007199254740993.0", "123456789.123456789", "1796142364.3377368", "1796142364.3377367", "1796142364.337737",
    ];
    for (const ts of cases) expect({ ts, takes: takes(ts) }).toEqual({ ts, takes: want(ts) });
    // the verdicts are not all alike (a test that took or refused everything fails)
    expect(takes("1796142364.3377368")).toBe(true);
    expect(takes("1796142364.33773680")).toBe(false);
  });

  test("clock readings and other doubles spelled several ways, decided without asking the host", () => {
    const r = mulberry32(41);
    let taken = 0;
    let clocks = 0;
    const asked = stepKernelStats.tsAsked;
    for (let i = 0; i < 5000; i++) {
      const c = 1e9 + r() * 3e9;
      const w = r() * 2 ** (1 + Math.floor(r() * 33));
      for (const ts of [String(c), c.toPrecision(17), c.toPrecision(16), c.toFixed(6), c.toFixed(7), w.toPrecision(17), w.toFixed(3), `-${String(c)}`]) {
        const got = takes(ts);
        if (got !== want(ts)) expect({ ts, got }).toEqual({ ts, got: want(ts) });
        if (got) taken++;
      }
      clocks++;
      expect(takes(String(c))).toBe(true);
    }
    expect(taken).toBeGreaterThan(5000);
    // the rare ties and ends only: the host's exact test is not asked per row
    expect(stepKernelStats.tsAsked - asked).toBeLessThan(clocks);
  });
});

const STRINGS = [
  "plain text", "/home/alice/project/src/main.py", "x/home/alice/deeper", "relhome/x", "C:\\Users\\bob\\x.txt", "C:/Users/bob",
  "~/notes.md", "a ~/b", "relative/path/only.ts", "src/core/net.py", "(/usr/lib)", "k=/etc/passwd", "/root", "/single", "a/b/c",
  "tab\there /tmp/x", "quote \" /var/log", "\\\\server\\share\\", "日本 /opt/x", "", "/",
  // escapes right before a slash: a space or quote (may lead a path), a letter (does not)
  "x\t/etc/passwd", "x\n/etc/x", "nbsp\u00a0/opt/x", "ls\u2028/var/x", "say \"/etc/x\"", "src/日志/handler.py", "docs/Résumé.md", "é/x/y", "\u0001/a/b",
];

function value(r: Rand, depth = 0): PyLike {
  switch (Math.floor(r() * (depth > 2 ? 4 : 7))) {
    case 0:
      return pick(r, STRINGS);
    case 1:
      return `${pick(r, STRINGS)} ${pick(r, STRINGS)}`;
    case 2:
      return pick(r, [null, true, 0, 12, "", {}, []]);
    case 3:
      return null;
    case 4:
      return [value(r, depth + 1), value(r, depth + 1)];
    default:
      return { path: pick(r, STRINGS), argv: [pick(r, STRINGS), value(r, depth + 1)], cwd: value(r, depth + 1) };
  }
}

describe("publish mode: the exact path's lines, head and leak rows", () => {
  const POLICIES = [["prompt", "tool_result"], ["model", "prompt", "tool_call", "tool_result"], ["tool_call"], ["prompt", "tool_result", "model"], []];
  const HOMES = ["/home/alice", "/root", "relhome", "/", "/" + "h".repeat(300), '/home/qu"ote'];

  test("every policy and home", () => {
    const r = mulberry32(43);
    const journal = dictFormJournal(1500, () => ({ model: pick(r, ["claude", null, "/models/x", "m/x"]), prompt: value(r), tool_call: value(r), tool_result: value(r), effort: pick(r, [undefined, "high", "/low"]) }));
    const rows = journal.slice(0, -1).split("\n");
    const bytes = enc.encode(journal);
    let leakRows = 0;
    for (const policyList of POLICIES) {
      const policy = new Set(policyList);
      for (const home of HOMES) {
        const scanner = new PathLeakScanner(policy, home);
        // the exact path: every row parsed, redacted, re-chained; the scanner's test on its fields' canonical text
        let head = GENESIS_HASH;
        let want = "";
        const wantReported: number[] = [];
        rows.forEach((line, seq) => {
          const d = redactRow(dictForm(parse(line) as Map<string, never>), policy, head);
          head = d.get("step_hash") as string;
          want += rowLine(d);
          const row = parse(line) as Map<string, PyLike>;
          if (scanner.scanned.some((f) => {
            const text = enc.encode(canonical(row.get(f)!));
            return scanner.mayHold(text, 0, text.length);
          })) wantReported.push(seq);
        });

        const k = kernelOf(KERNEL_DICT_FORM | KERNEL_PUBLISH);
        const h = scanner.kernelHome;
        k.setPublish(fieldSlots(policy), h.bytes, h.always);
        k.publishHead.set(enc.encode(GENESIS_HASH));
        const reported: number[] = [];
        k.onRow = () => reported.push(k.rowsBefore);
        k.arena.set(bytes, 0);
        k.head.set(enc.encode(GENESIS_HASH));
        const to = k.verify(k.arena, 0, bytes.length, READ, 0);
        const label = { policy: policyList.join(","), home: home.slice(0, 20) };
        expect({ ...label, to, rows: k.rows }).toEqual({ ...label, to: bytes.length, rows: rows.length });
        expect({ ...label, same: dec.decode(k.published()) === want }).toEqual({ ...label, same: true });
        expect({ ...label, head: dec.decode(k.publishHead) }).toEqual({ ...label, head });
        // a home the byte scan cannot look for (not an ASCII absolute path, or longer than the
        // kernel's 256 bytes for it): every row goes to the host; else exactly mayHold's rows
        if (h.always || (h.bytes?.length ?? 0) > 256) expect(reported.length).toBe(rows.length);
        else expect({ ...label, reported }).toEqual({ ...label, reported: wantReported });
        leakRows += wantReported.length;
      }
    }
    // the journal holds rows of both kinds
    expect(leakRows).toBeGreaterThan(1000);
  });

  test("a publish area smaller than a chunk's lines: handed over whenever full; a row whose line cannot fit is left to the host", () => {
    const small = new StepKernel(READ + 65536, READ, { publish: 4096 });
    small.setMode(KERNEL_DICT_FORM | KERNEL_PUBLISH);
    small.setPublish(fieldSlots(["prompt"]), null, false);
    small.publishHead.set(enc.encode(GENESIS_HASH));
    let out = "";
    let flushes = 0;
    small.onFlush = () => {
      flushes++;
      out += dec.decode(small.published());
    };
    // 40 rows of ~400 bytes, then one whose line is longer than the area
    const journal = dictFormJournal(41, (seq) => ({ model: "m", prompt: "p".repeat(seq === 40 ? 5000 : 100), tool_call: 1, tool_result: "x".repeat(seq === 40 ? 5000 : 1) }));
    const bytes = enc.encode(journal);
    small.arena.set(bytes, 0);
    small.head.set(enc.encode(GENESIS_HASH));
    const to = small.verify(small.arena, 0, bytes.length, READ, 0);
    out += dec.decode(small.published());
    expect(small.rows).toBe(40);
    expect(to).toBe(journal.split("\n").slice(0, 40).join("\n").length + 1);
    expect(flushes).toBeGreaterThan(2);
    // the lines handed over are the exact path's, in order
    let head = GENESIS_HASH;
    let want = "";
    for (const line of journal.split("\n").slice(0, 40)) {
      const d = redactRow(dictForm(parse(line) as Map<string, never>), new Set(["prompt"]), head);
      head = d.get("step_hash") as string;
      want += rowLine(d);
    }
    expect(out === want).toBe(true);
    expect(dec.decode(small.publishHead)).toBe(head);
  });
});
