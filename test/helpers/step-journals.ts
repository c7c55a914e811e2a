import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { canonical } from "../../src/pyjson/encode.ts";
import { PyNum, pyFloat, type PyLike } from "../../src/pyjson/types.ts";
import { GENESIS_HASH, stepHash } from "../../src/steps/hash.ts";
import { BUCKET_NAME } from "../../src/steps/paths.ts";

/**
 * Hostile but valid step journals for the fast-path differential tests:
 * every row chains (so export and publish go through), but the rows vary
 * in everything the byte paths must get right or leave to the exact path:
 * unicode and escapes, floats, nesting, empty containers, absolute paths in
 * redactable fields, legacy rows, an int or oddly spelled `ts`, blob refs,
 * null and non-null effort, extra keys, unsorted keys, CRLF and blank
 * lines, rows cut by the 1 MiB read chunks, and a row over 1 MiB.
 */

/** A small deterministic generator (xorshift32). */
export function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

const STRINGS = [
  "plain text",
  "日本語 and emoji 😀 ✓",
  'quotes " and backslash \\ and tab \t and newline \n',
  "control \u0001 and del \u007f and sep \u2028",
  "lone surrogate \ud800 here",
  "/home/alice/project/src/main.py",
  "C:\\Users\\bob\\x.txt",
  "~/notes.md",
  "relative/path/only.ts",
  "",
];

export interface JournalOptions {
  rows: number;
  seed: number;
  /** Index of a row over 1 MiB (none when absent). */
  hugeAt?: number;
  /** Index of a row of ~70 KB whose tool call is that large (a huge row's tool call, read as bytes). */
  hugeToolCallAt?: number;
  /** Write a top-level NaN model at this row. */
  nanAt?: number;
  /** Plain rows only (every one in export dict form, `\n` ends): the verbatim copy path. */
  plain?: boolean;
  /** With `plain`: each row's ts spelled one of HOSTILE_TS ways (repr or not), the rest of the row still dict form. */
  hostileTs?: boolean;
}

/**
 * ts spellings around the kernel's float test (src/codec/float.wat):
 * the shortest repr of a clock reading and longer or shorter ones of it,
 * trailing zeros, exponents, ints, -0.0, the smallest subnormal, 2^32 and
 * doubles whose shortest spelling has 17 digits.
 */
function hostileTs(r: () => number, seq: number): string {
  const c = 1796137431.4230797 + seq * 0.0137;
  const w = r() * 2 ** (1 + Math.floor(r() * 33));
  return pick(r, [
    String(c), c.toPrecision(17), c.toPrecision(16), c.toFixed(7), c.toFixed(9), c.toFixed(4), `${c.toFixed(7)}0`,
    String(w), w.toPrecision(17), w.toFixed(3), `${Math.floor(w) + 1}.0`, `${Math.floor(w) + 1}.00`,
    "1e16", "1e+16", "1E16", "10000000000000000.0", "9999999999999998.0", "5e-324", "4.9e-324", "1.0", "1", "-0.0", "-0", "0.0",
    "0.1", "0.10", "1e-1", "0.30000000000000004", "0.30000000000000003", "0.3", "0.0001", "0.00001", "1e-05",
    "4294967295.9999999", "4294967296.5", "4294967295.5", "2147483648.0000002", "1.0000000000000002", "1.0000000000000001",
    "-1796137431.25", "1.7961374314230797e9", "1796137431.0", "1796137431.00",
  ]);
}

const ESCAPED_KEYS = ["é", "🚀", "\uffff", "中文", 'q"', "\\", "a b"];

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}

function value(r: () => number, depth = 0): PyLike {
  const k = Math.floor(r() * (depth > 2 ? 6 : 10));
  switch (k) {
    case 0:
      return pick(r, STRINGS);
    case 1:
      return Math.floor(r() * 2000) - 1000;
    case 2:
      return pick(r, [pyFloat(1.5), pyFloat(1e16), pyFloat(-0), pyFloat(1e-5), pyFloat(0.1), pyFloat(3)]);
    case 3:
      return pick(r, [true, false, null]);
    case 4:
      return pick(r, [{}, []]);
    case 5:
      return `${pick(r, STRINGS)} #${Math.floor(r() * 1e6)}`;
    case 6:
      return [value(r, depth + 1), value(r, depth + 1)];
    case 7:
      return { b: value(r, depth + 1), a: value(r, depth + 1), path: pick(r, STRINGS) };
    default:
      // keys Python's writer escapes: sorted by their code points, not their bytes
      return { [pick(r, ESCAPED_KEYS)]: value(r, depth + 1), z: pick(r, STRINGS), [pick(r, ESCAPED_KEYS)]: 1 };
  }
}

/** One row's line (no terminator), chained onto `prev`; and its step hash. */
function row(r: () => number, seq: number, prev: string, o: JournalOptions): { line: string; hash: string } {
  const plain = o.plain === true;
  const model: PyLike = seq === o.nanAt ? new PyNum("NaN", true) : plain ? "claude-sonnet-4-5" : pick(r, ["claude-sonnet-4-5", null, "m-\u00e9"]);
  let prompt: PyLike = plain ? `Step ${seq}: ${pick(r, STRINGS)}` : value(r);
  if (seq === o.hugeAt) prompt = "x".repeat(1_200_000) + " end";
  let toolCall: PyLike = plain ? { name: "edit", args: { path: pick(r, STRINGS), line: seq } } : value(r);
  if (seq === o.hugeToolCallAt) toolCall = { name: "edit", args: { path: "p".repeat(70_000), line: seq } };
  const toolResult: PyLike = plain ? { ok: true, out: pick(r, STRINGS) } : value(r);
  const effort: PyLike | undefined = plain ? undefined : pick(r, [undefined, undefined, null, "high"]);
  const fields = { prev_hash: prev, input_hash: `in-${seq}`, model, prompt, tool_call: toolCall, tool_result: toolResult, effort: effort ?? null };
  const hash = stepHash(fields);
  const obj: Record<string, PyLike> = { seq, prev_hash: prev, input_hash: `in-${seq}`, model, prompt, tool_call: toolCall, tool_result: toolResult, step_hash: hash };
  if (effort !== undefined) obj.effort = effort;
  const legacy = !plain && r() < 0.05;
  if (!legacy) obj.schema_version = 2;
  obj.blob_refs = plain || r() < 0.9 ? [] : pick(r, [["sha256:ab12"], null, ["a", "b"]]);
  if (!plain && r() < 0.05) obj.zzz_extra = "kept";
  let line = canonical(obj);
  // ts goes in by hand: its spelling is part of what is tested
  const ts = o.hostileTs ? hostileTs(r, seq) : plain ? (1796137431.4230797 + seq * 0.0137).toString() : pick(r, [(1796137431.4230797 + seq).toString(), "1796137431", "1.50", "1e9", "1796137431.25"]);
  line = line.includes(',"zzz_extra"') ? line.replace(',"zzz_extra"', `,"ts":${ts},"zzz_extra"`) : line.slice(0, -1) + `,"ts":${ts}}`;
  // now and then a row whose keys are not sorted (valid JSON, not canonical)
  if (!plain && r() < 0.05) line = `{"seq":${seq},` + line.slice(1).replace(`"seq":${seq},`, "");
  return { line, hash };
}

/** The journal's bytes. */
export function journalBytes(o: JournalOptions): string {
  const r = rng(o.seed);
  let prev = GENESIS_HASH;
  let out = "";
  for (let seq = 0; seq < o.rows; seq++) {
    const { line, hash } = row(r, seq, prev, o);
    prev = hash;
    out += line;
    if (o.plain) out += "\n";
    else out += pick(r, ["\n", "\n", "\n", "\n", "\n", "\n", "\r\n", "\n\n", "\n  \n"]);
  }
  return out;
}

/** An `.sdd` holding `agentId`'s journal with these bytes. */
export function writeAgentJournal(sdd: string, agentId: string, bytes: string | Uint8Array): string {
  const dir = join(sdd, "runtime", "journal", agentId);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, BUCKET_NAME);
  writeFileSync(path, bytes);
  return path;
}

/** The redactable fields (and effort) of a row `dictFormRow` writes. */
export interface DictFields {
  model: PyLike;
  prompt: PyLike;
  tool_call: PyLike;
  tool_result: PyLike;
  effort?: string;
}

/**
 * A row exactly in export dict form (sorted keys, `blob_refs` empty,
 * schema_version 2, `ts` spelled `ts`: the step kernel takes it), linked
 * to `prev`; and its step hash.
 */
export function dictFormRow(seq: number, prev: string, f: DictFields, ts: string): { line: string; hash: string } {
  const fields = { prev_hash: prev, input_hash: `in-${seq}`, model: f.model, prompt: f.prompt, tool_call: f.tool_call, tool_result: f.tool_result, effort: f.effort ?? null };
  const hash = stepHash(fields);
  const obj: Record<string, PyLike> = { blob_refs: [], input_hash: `in-${seq}`, model: f.model, prev_hash: prev, prompt: f.prompt, schema_version: 2, seq, step_hash: hash, tool_call: f.tool_call, tool_result: f.tool_result };
  if (f.effort !== undefined) obj.effort = f.effort;
  return { line: `${canonical(obj).slice(0, -1)},"ts":${ts}}`, hash };
}

/** A journal of `dictFormRow`s (`\n` ends), the fields of row `seq` from `fields(seq)`, a clock reading as ts. */
export function dictFormJournal(rows: number, fields: (seq: number) => DictFields): string {
  let prev = GENESIS_HASH;
  let out = "";
  for (let seq = 0; seq < rows; seq++) {
    const { line, hash } = dictFormRow(seq, prev, fields(seq), (1796137431.4230797 + seq * 0.0137).toString());
    prev = hash;
    out += `${line}\n`;
  }
  return out;
}

/** The fields of a `dictFormRow` whose tool_call is `toolCall` (a nested one renders far longer than its line). */
export function wideRow(seq: number, toolCall: PyLike): DictFields {
  return { model: "m", prompt: `p ${seq}`, tool_call: toolCall, tool_result: { ok: true } };
}

const HOSTILE_H = "0123456789abcdef".repeat(4);
/**
 * Step-journal lines made to take every branch of a reader that answers
 * from the codec's index and falls back to the exact parse: escaped and
 * non-ASCII keys and cells, repeated keys, cells of other types, rows that
 * are not entries, lines that are not rows (no chain: they do not verify).
 */
export const HOSTILE_STEP_LINES = [
  `{"seq": 0, "step_hash": "${HOSTILE_H}", "prev_hash": "${HOSTILE_H}", "model": "m", "tool_call": {"name": "edit", "args": {}}}`,
  // escaped and non-ASCII cells
  `{"seq": 1, "step_hash": "\\u0041${HOSTILE_H}", "prev_hash": "${HOSTILE_H}", "model": "m\\u00e9", "tool_call": {"name": "ed\\"it"}}`,
  `{"seq": 2, "step_hash": "${HOSTILE_H}", "prev_hash": "${HOSTILE_H}", "model": "mé", "tool_call": {"name": "édit"}}`,
  // a key spelled with an escape is the same key
  `{"seq": 3, "step\\u005fhash": "${HOSTILE_H}", "prev_hash": "x", "model": "m", "tool_call": null}`,
  `{"seq": 4, "st\\u0065p_hash": "A", "step_hash": "B", "model": "m", "tool_call": {"n\\u0061me": "x", "name": "y"}}`,
  // keys Python's writer escapes are other keys (read from the index); beside a needless escape anywhere, the exact path's
  `{"seq": 16, "step_hash": "${HOSTILE_H}", "prev_hash": "${HOSTILE_H}", "model": "m", "tool_call": {"\\u00e9": 1, "name": "edit", "\\ud83d\\ude80": {"\\n": 2}}}`,
  `{"seq": 17, "step_hash": "${HOSTILE_H}", "model": "m", "tool_call": {"\\u00e9": 1, "n\\u0061me": "x", "name": "y"}}`,
  `{"seq": 18, "step_hash": "${HOSTILE_H}", "model": "m", "tool_call": {"\\u00e9": 1.50, "name": "y"}}`,
  // repeated keys: json.loads keeps the last
  `{"seq": 5, "step_hash": "first", "step_hash": "second", "model": "a", "model": null, "tool_call": {"name": "a", "name": "b"}}`,
  // cells of other types
  `{"seq": 6.0, "step_hash": null, "prev_hash": 7, "model": true, "tool_call": "edit"}`,
  `{"seq": "7", "step_hash": ["x"], "model": {"a": 1}, "tool_call": [1, 2]}`,
  `{"seq": -0, "step_hash": "${HOSTILE_H}", "tool_call": {"name": null}}`,
  `{"seq": 123456789012345678901234567890, "step_hash": "${HOSTILE_H}", "tool_call": {"name": 5}}`,
  `{"seq": NaN, "step_hash": "${HOSTILE_H}", "model": Infinity, "tool_call": {}}`,
  `{"step_hash": "${HOSTILE_H}"}`,
  `{"seq": 1e3, "step_hash": "short", "prev_hash": "", "model": "", "tool_call": {"name": ""}}`,
  // a DEL and a needless escape in a cell
  `{"seq": 12, "step_hash": "a\x7fb", "model": "\\u0061", "tool_call": {"name": "\\/"}}`,
  // not entries
  `{"seq": 13, "prev_hash": "${HOSTILE_H}"}`,
  `[1, 2]`,
  `"step_hash"`,
  `{"seq": 14, "step_hash": "${HOSTILE_H}",}`,
  `{"seq": 15, "step_hash": "\xff"}`,
  `   `,
  ``,
  `{"seq": 16, "step_hash": "${HOSTILE_H}"} trailing`,
  // cells longer than their column, trailing spaces (the line is trimmed), an empty tool name
  `{"seq": 1234567, "step_hash": "${HOSTILE_H}", "prev_hash": "ab", "model": "a-model-name-longer-than-its-column", "tool_call": {"name": "edit  "}}`,
  `{"seq": 19, "step_hash": "${HOSTILE_H}", "model": "m  ", "tool_call": {"name": ""}}`,
  `{"seq": 20, "step_hash": "${HOSTILE_H}", "model": "m", "tool_call": {"name": " "}}`,
  // whitespace around and inside
  ` \t{"seq":17,"step_hash":"${HOSTILE_H}","model":"m","tool_call":{"name":"t"}}\t `,
  `{ "seq" : 18 , "step_hash" : "${HOSTILE_H}" }`,
  // a carriage return inside a row is a line break to the tolerant reader: these are not entries
  `{"seq": 21, "step_hash": "${HOSTILE_H}",\r"model": "m"}`,
  `{"seq": 22, "step_hash": "${HOSTILE_H}", "tool_call": {"name":\r"t"}}`,
  `{"seq": 23, "step_hash": "${HOSTILE_H}"}\r{"seq": 24, "step_hash": "${HOSTILE_H}"}`,
];
