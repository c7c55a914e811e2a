/**
 * Seeded generators of journal rows spelled every way a writer might spell
 * them (canonical, foreign, invalid), for property tests of the fast path.
 */
import { mulberry32 } from "../../../tools/fuzz/rng.ts";

/** The seeded float generator shared with the fuzzers (mulberry32). */
export const prng = mulberry32;

export type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

function hex4(c: number, upper: boolean): string {
  const h = c.toString(16).padStart(4, "0");
  return "\\u" + (upper ? h.toUpperCase() : h);
}

/** Probability of an odd (non-canonical or invalid) spelling; set per row. */
let oddness = 0.15;

/** `make()` with spellings odd at probability `x` (0: every token as a Python writer spells it). */
export function withOddness<T>(x: number, make: () => T): T {
  const was = oddness;
  oddness = x;
  try {
    return make();
  } finally {
    oddness = was;
  }
}

/** One character, spelled canonically most of the time, otherwise any other way. */
function spellChar(r: Rand, ch: string): string {
  const c = ch.charCodeAt(0);
  const odd = r() < oddness;
  if (ch.length === 2) {
    // astral: a surrogate pair of escapes, or raw UTF-8
    if (odd) return ch;
    return hex4(ch.charCodeAt(0), false) + hex4(ch.charCodeAt(1), false);
  }
  if (ch === '"') return '\\"';
  if (ch === "\\") return "\\\\";
  if (ch === "/") return odd ? "\\/" : "/";
  const short: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f" };
  if (short[ch]) return odd && r() < 0.5 ? hex4(c, false) : r() < 0.03 ? ch : short[ch]!; // raw control: invalid JSON
  if (c < 0x20) return r() < 0.03 ? ch : hex4(c, odd);
  if (c >= 0x7f) return odd ? (r() < 0.5 ? ch : hex4(c, true)) : hex4(c, false);
  if (odd && r() < 0.2) return hex4(c, false); // needless escape of a printable
  return ch;
}

const CHARS = ["a", "b", "z", "A", " ", "0", "_", "-", ".", "/", '"', "\\", "\n", "\t", "\x01", "\x1f", "\x7f", "é", "中", "\u2028", "🚀"];

export function stringToken(r: Rand, text?: string): string {
  if (text === undefined) {
    text = "";
    const n = Math.floor(r() * 8);
    for (let i = 0; i < n; i++) text += pick(r, CHARS);
  }
  let out = '"';
  for (const ch of text) out += spellChar(r, ch);
  if (r() < 0.01) out += "\\udcff"; // escaped lone surrogate: valid JSON
  return out + '"';
}

const NUMBERS = [
  "0", "1", "-1", "42", "-0", "9007199254740993", "123456789012345678901234567890",
  "0.5", "1.0", "-0.0", "1e-05", "1e+16", "1.5", "0.1", "100.0", "1234567.891", "5e-324", "1.7976931348623157e+308",
  "0.30000000000000004", "0.0001", "0.00012", "1E5", "1e5", "1.50", "2.0E-3", "1e400", "-1e-400", "01", "1.", ".5",
  "NaN", "Infinity", "-Infinity", "12345678901234567.0", "1234567890123456.0", "0.001234567890123456",
];

function ws(r: Rand): string {
  const x = r();
  if (x < 0.6) return "";
  if (x < 0.9) return " ";
  if (x < 0.97) return "  ";
  return "\t";
}

export function valueToken(r: Rand, depth: number): string {
  const x = r();
  if (depth < 3 && x < 0.12) {
    const n = Math.floor(r() * 4);
    const items: string[] = [];
    for (let i = 0; i < n; i++) items.push(valueToken(r, depth + 1));
    return "[" + ws(r) + items.join(ws(r) + "," + ws(r)) + ws(r) + "]";
  }
  if (depth < 3 && x < 0.24) {
    const n = Math.floor(r() * 4);
    const members: string[] = [];
    // escaped keys order by code points, not by their bytes: an astral character after U+FFFF, a control before "a"
    const keys = ["a", "b", "B", "ab", "a b", "é", "zz", "_", "10", "9", "\uffff", "🚀", "\ue000", "a\n", "\x7f", "~", "中", "a\\"];
    for (let i = 0; i < n; i++) members.push(stringToken(r, pick(r, keys)) + ws(r) + ":" + ws(r) + valueToken(r, depth + 1));
    return "{" + ws(r) + members.join(ws(r) + "," + ws(r)) + ws(r) + "}";
  }
  if (x < 0.5) return stringToken(r);
  if (x < 0.85) return r() < oddness * 4 ? pick(r, NUMBERS) : pick(r, NUMBERS.slice(0, 20));
  return pick(r, ["true", "false", "null"]);
}

const HEXCH = "0123456789abcdef";
export function hex64(r: Rand): string {
  let s = "";
  for (let i = 0; i < 64; i++) s += HEXCH[Math.floor(r() * 16)];
  return s;
}

/** A journal-row-like line with random envelope completeness, key order, spellings and payload. */
export function randomRowLine(r: Rand): string {
  oddness = r() < 0.5 ? 0 : r() < 0.5 ? 0.02 : 0.15; // half the rows as a Python writer would spell them
  const members: string[] = [];
  const member = (k: string, v: string) => members.push(stringToken(r, k) + ws(r) + ":" + ws(r) + v);
  if (r() < 0.95) member("ts", pick(r, ["1727000000.1234567", "1.5", "0", '"x"', "null", "1E5"]));
  if (r() < 0.95) member("elapsed_s", pick(r, ["0.035", "12.0", "-0.0"]));
  if (r() < 0.95) member("index", pick(r, ["0", "7", '"7"', "true"]));
  if (r() < 0.97) member("event", r() < 0.9 ? stringToken(r, pick(r, ["task_claimed", "tool_call", "é/x", "a\"b"])) : valueToken(r, 2));
  if (r() < 0.97) member("prev_hash", pick(r, ['""', `"${hex64(r)}"`, '"short"']));
  if (r() < 0.97) member("payload_hash", pick(r, [`"${hex64(r)}"`, '"zz"', "null"]));
  if (r() < 0.97) member("event_hash", pick(r, [`"${hex64(r)}"`, '""']));
  const n = Math.floor(r() * 6);
  const keys = ["agent_id", "model", "cost_usd", "tokens", "files", "a", "Z", "é", "a\"b", "ts", "event", "hash_profile", "index", "🚀", "\uffff", "a\n", "中"];
  for (let i = 0; i < n; i++) {
    const k = pick(r, keys);
    member(k, k === "hash_profile" ? stringToken(r, pick(r, ["py-json-v1", "jcs-v3"])) : valueToken(r, 0));
  }
  // shuffle sometimes (foreign writers)
  if (r() < 0.3) members.sort(() => r() - 0.5);
  let line = "{" + ws(r) + members.join(ws(r) + "," + ws(r)) + ws(r) + "}";
  if (r() < oddness / 4) line = " " + line;
  if (r() < oddness / 4) line += "x";
  return line;
}
