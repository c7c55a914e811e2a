import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canonical, dumps } from "../../../src/pyjson/encode.ts";
import { parse } from "../../../src/pyjson/parse.ts";
import { parseRowBytes } from "../../../src/pyjson/row.ts";
import { PyJsonError, type PyValue } from "../../../src/pyjson/types.ts";
import { runBinary } from "../binary.ts";
import { deepNesting, JSON_TOKENS, mutateBytes } from "../mutate.ts";
import { runPythonBatch } from "../python.ts";
import type { Rng } from "../rng.ts";
import { linesOf, receiptVectors, runJournalVectors, stepJournalVectors } from "../seeds.ts";
import { violation, type FuzzTarget } from "../types.ts";

/**
 * (a) The lexeme-preserving JSON parser and the canonical encoder.
 * In-process invariants: `parse` either returns or throws `PyJsonError`
 * (a RangeError from deep nesting, a TypeError, ... is a crash); the
 * canonical form re-parses to itself; the default, indented and
 * raw-number forms re-parse to the same canonical value. Batched against
 * python3: the same text is accepted/refused by `json.loads` (with the same
 * JSONDecodeError message), and `json.dumps` in the canonical, default and
 * indent-2 forms equals our encoder's bytes. The tree-free byte path of
 * huge rows (src/pyjson/row.ts) must agree with the tree on every case:
 * same acceptance, same error message, same bytes in every form (so the
 * Python check covers it too).
 */

const PY_CHECK = `
import json, sys
out = []
for t in json.load(sys.stdin):
    try:
        v = json.loads(t)
    except RecursionError:
        out.append(["REC"]); continue
    except json.JSONDecodeError as e:
        out.append(["ERR", str(e)]); continue
    except ValueError as e:
        out.append(["VERR", str(e)]); continue
    try:
        out.append(["OK", json.dumps(v, sort_keys=True, separators=(",", ":")), json.dumps(v), json.dumps(v, indent=2)])
    except RecursionError:
        out.append(["REC"])
print(json.dumps(out))
`;

const HAND_SEEDS = [
  '{"a": 1, "b": [1.0, -0.0, 1e-05, 1e+16, NaN, Infinity, -Infinity], "c": null, "d": true}',
  '"\\ud83d\\ude80 \\u00e9 \\u2028 \\u007f \\ud800 \\udc00x"',
  '{"\\ud800": 1, "\\uffff": 2, "\\ud83d\\ude00": 3, "": 4, "a": {"z": [], "y": {}}}',
  "[123456789012345678901234567890, -0, 0.1, 5e-324, 1.7976931348623157e308, 1E5, 1.50]",
  '{"a": 1, "a": 2, "b": {"x": 1, "x": [2]}}',
  ' \t\r\n[ 1 , 2 ]\n ',
];

interface Pending {
  text: string;
  ok: boolean;
  message: string;
  forms: string[];
}

const decoder = new TextDecoder("utf-8");
const enc = new TextEncoder();

export interface ParserTargetOptions {
  /** Compiled binary for the sampled CLI cases (null: in-process only). */
  bin?: string | null;
  /** Cross-check with python3 (default true). */
  python?: boolean;
  /** Texts per python batch. */
  batchSize?: number;
}

export function parserTarget(opts: ParserTargetOptions = {}): FuzzTarget {
  let pending: Pending[] = [];
  let tmp: string | null = null;
  let pythonChecked = 0;
  const python = opts.python ?? true;
  const batchSize = opts.batchSize ?? 1500;
  const workDir = (): string => (tmp ??= mkdtempSync(join(tmpdir(), "bernstein-fuzz-parser-")));

  const check = (text: string): Pending => {
    let value: PyValue;
    try {
      value = parse(text);
    } catch (err) {
      if (!(err instanceof PyJsonError)) throw err;
      byteCheck(text, err.message, []);
      return { text, ok: false, message: err.message, forms: [] };
    }
    const c = canonical(value);
    const d = dumps(value);
    const i = dumps(value, { indent: 2 });
    const raw = dumps(value, { rawNumbers: true });
    const unicode = dumps(value, { ensureAscii: false, sortKeys: true });
    let again: PyValue;
    try {
      again = parse(c);
    } catch (err) {
      throw violation("canonical_reparse", `canonical form does not parse: ${(err as Error).message}`);
    }
    if (canonical(again) !== c) throw violation("canonical_idempotent", "canonical(parse(canonical(v))) differs from canonical(v)");
    for (const [name, form] of [["default", d], ["indent", i], ["raw_numbers", raw], ["unicode", unicode]] as const) {
      let v2: PyValue;
      try {
        v2 = parse(form);
      } catch (err) {
        throw violation(`reparse_${name}`, `${name} form does not parse: ${(err as Error).message}`);
      }
      if (canonical(v2) !== c) throw violation(`roundtrip_${name}`, `${name} form re-parses to a different value`);
    }
    byteCheck(text, "", [c, d, i, raw, unicode]);
    return { text, ok: true, message: "", forms: [c, d, i] };
  };

  /** The byte path (every member kept as bytes) against the tree's verdict and forms. */
  const byteCheck = (text: string, message: string, forms: string[]): void => {
    let v: PyValue;
    try {
      v = parseRowBytes(enc.encode(text), 0);
    } catch (err) {
      if (!(err instanceof PyJsonError)) throw err;
      if (err.message !== message) throw violation("byte_path_verdict", `byte path refused with ${JSON.stringify(err.message)}, tree with ${JSON.stringify(message)}`);
      return;
    }
    if (message !== "") throw violation("byte_path_verdict", `byte path accepted what the tree refused: ${message}`);
    const got = [canonical(v), dumps(v), dumps(v, { indent: 2 }), dumps(v, { rawNumbers: true }), dumps(v, { ensureAscii: false, sortKeys: true })];
    got.forEach((g, k) => {
      if (g !== forms[k]) throw violation("byte_path_form", `byte path form ${k} differs from the tree's`);
    });
  };

  return {
    name: "parser",
    seeds() {
      const out: Uint8Array[] = HAND_SEEDS.map((s) => enc.encode(s));
      for (const v of runJournalVectors()) out.push(...linesOf(v.bytes).slice(0, 40));
      for (const v of stepJournalVectors()) out.push(...linesOf(v.bytes).slice(0, 10));
      void receiptVectors;
      return out;
    },
    mutate(rng: Rng, seeds) {
      const base = rng.pick(seeds);
      if (rng.chance(0.02)) {
        // Nesting near the limits (both sides of 1000).
        const depth = rng.pick([999, 1000, 1001, 5000, rng.range(1, 1200)]);
        return enc.encode(deepNesting(depth, rng.pick(["array", "object", "mixed"] as const)));
      }
      return mutateBytes(rng, base, { corpus: seeds, maxBytes: 64 * 1024, dictionary: JSON_TOKENS });
    },
    run(input) {
      const p = check(decoder.decode(input));
      if (python && p.text.length <= 64 * 1024) pending.push(p);
    },
    async runBinary(input, rng) {
      const text = decoder.decode(input);
      const dir = workDir();
      if (rng.chance(0.5) || text.includes("\0")) {
        const file = join(dir, "one-line.jsonl");
        writeFileSync(file, input);
        // 3: a line that is no journal row (not_a_journal) or only blanks (input_empty)
        await runBinary({ bin: opts.bin!, args: ["journal", "verify", file, "--as-json"], allowed: [0, 1, 3] });
      } else {
        const sdd = join(dir, `sdd-${rng.u32()}`);
        try {
          await runBinary({ bin: opts.bin!, args: ["journal", "record", "fuzz-run", "fuzz_event", "--data", text, "--sdd-dir", sdd, "--as-json"], allowed: [0, 2, 3] });
        } finally {
          rmSync(sdd, { recursive: true, force: true });
        }
      }
    },
    extremes() {
      const deep = (name: string, text: () => string) => ({
        name,
        run() {
          try {
            parse(text());
          } catch (err) {
            if (err instanceof PyJsonError && /Nesting too deep/.test(err.message)) return;
            throw violation("deep_nesting", `${name}: expected a 'Nesting too deep' parse error, got ${(err as Error).name}: ${(err as Error).message}`);
          }
          throw violation("deep_nesting", `${name}: parsed without refusal`);
        },
      });
      return [
        deep("100,000-deep arrays", () => deepNesting(100_000, "array")),
        {
          name: "100,000-deep nesting on the byte path",
          run() {
            try {
              parseRowBytes(enc.encode(deepNesting(100_000, "mixed")), 0);
            } catch (err) {
              if (err instanceof PyJsonError && /Nesting too deep/.test(err.message)) return;
              throw violation("deep_nesting", `byte path: expected 'Nesting too deep', got ${(err as Error).message}`);
            }
            throw violation("deep_nesting", "byte path: parsed without refusal");
          },
        },
        {
          name: "8 MB dense row: byte path hashes like the tree",
          run() {
            const text = '{"event": "x", "data": [' + Array.from({ length: 1_000_000 }, (_, k) => ["1.5", "1E5", "-0", '"\\u00e9"', '{"b":1,"a":[2]}'][k % 5]).join(", ") + "]}";
            if (canonical(parseRowBytes(enc.encode(text))) !== canonical(parse(text))) throw violation("byte_path_form", "dense row: canonical differs");
          },
        },
        deep("100,000-deep objects", () => deepNesting(100_000, "object")),
        deep("100,000-deep mixed, unterminated", () => deepNesting(100_000, "mixed").slice(0, 500_000)),
        {
          name: "integer of 4301 digits refused, 4300 kept",
          run() {
            try {
              parse("1".repeat(4301));
              throw violation("int_digits", "a 4301-digit int parsed");
            } catch (err) {
              if (!(err instanceof PyJsonError)) throw err;
            }
            const n = "7".repeat(4300);
            if (canonical(parse(n)) !== n) throw violation("int_digits", "a 4300-digit int did not round-trip");
          },
        },
        {
          name: "10 MB string of escapes",
          run() {
            const s = '"' + "\\u00e9\\ud83d\\ude80\\n".repeat(600_000) + '"';
            const v = parse(s);
            if (typeof v !== "string" || v.length !== 600_000 * 4) throw violation("long_string", "wrong decoded length");
            canonical(v);
          },
        },
      ];
    },
    async flush() {
      if (!python || pending.length === 0) return [];
      const out: { input: Uint8Array; error: Error }[] = [];
      while (pending.length) {
        const batch = pending.slice(0, batchSize);
        pending = pending.slice(batchSize);
        const answers = await runPythonBatch<string[][]>(PY_CHECK, batch.map((p) => p.text));
        pythonChecked += batch.length;
        batch.forEach((p, k) => {
          const a = answers[k]!;
          const err = compareWithPython(p, a);
          if (err) out.push({ input: enc.encode(p.text), error: err });
        });
      }
      return out;
    },
    stats() {
      return { python_checked: pythonChecked };
    },
    close() {
      if (tmp) rmSync(tmp, { recursive: true, force: true });
    },
  };
}

function compareWithPython(p: Pending, a: string[]): Error | null {
  const kind = a[0];
  if (kind === "REC") return null; // CPython's recursion limit: our depth limit answers instead
  if (kind === "ERR" || kind === "VERR") {
    if (p.ok) return violation("python_refuses", `python refused a text we accepted: ${a[1]}`);
    if (kind === "ERR" && a[1] !== p.message && !/Nesting too deep/.test(p.message)) {
      return violation("python_error_message", `message differs: ours ${JSON.stringify(p.message)} python ${JSON.stringify(a[1])}`);
    }
    return null;
  }
  if (!p.ok) {
    if (/Nesting too deep/.test(p.message)) return null;
    return violation("python_accepts", `python accepted a text we refused (${p.message})`);
  }
  const names = ["canonical", "default", "indent"];
  for (let i = 0; i < 3; i++) {
    if (a[i + 1] !== p.forms[i]) {
      return violation(`python_dumps_${names[i]}`, `json.dumps (${names[i]}) differs: ours ${JSON.stringify(p.forms[i]!.slice(0, 120))} python ${JSON.stringify(a[i + 1]!.slice(0, 120))}`);
    }
  }
  return null;
}
