import { floatRepr, canonicalNumber } from "./float.ts";
import { materialize } from "./parse.ts";
import { PyNum, PyRaw, type PyValue } from "./types.ts";

/**
 * Python's `str()` and `repr()` of parsed JSON values, and `==`. The
 * Python verifiers coerce with `str()` (null -> "None", true -> "True") and
 * compare with `==` (1 == 1.0 == True), so identical verdicts need the same.
 */

// Python's str.isprintable(): not in Cc, Cf, Cs, Co, Cn, Zl, Zp, Zs (space excepted).
const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

function reprString(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (let i = 0; i < s.length; i++) {
    let cp = s.charCodeAt(i);
    let ch = s[i]!;
    if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < s.length) {
      const lo = s.charCodeAt(i + 1);
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        cp = s.codePointAt(i)!;
        ch = s.slice(i, i + 2);
        i++;
      }
    }
    if (ch === quote || ch === "\\") out += "\\" + ch;
    else if (ch === "\t") out += "\\t";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (cp < 0x20 || cp === 0x7f) out += "\\x" + cp.toString(16).padStart(2, "0");
    else if (cp < 0x7f) out += ch;
    else if (NON_PRINTABLE.test(ch)) {
      if (cp <= 0xff) out += "\\x" + cp.toString(16).padStart(2, "0");
      else if (cp <= 0xffff) out += "\\u" + cp.toString(16).padStart(4, "0");
      else out += "\\U" + cp.toString(16).padStart(8, "0");
    } else out += ch;
  }
  return out + quote;
}

export function pyRepr(v: PyValue | undefined): string {
  if (v === null || v === undefined) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (typeof v === "string") return reprString(v);
  if (v instanceof PyNum) {
    if (!v.isFloat) return canonicalNumber(v.raw, false);
    const r = canonicalNumber(v.raw, true);
    // repr(float('nan')) is 'nan', repr(inf) is 'inf'
    if (r === "NaN") return "nan";
    if (r === "Infinity") return "inf";
    if (r === "-Infinity") return "-inf";
    return r;
  }
  if (v instanceof PyRaw) return pyRepr(materialize(v));
  if (Array.isArray(v)) return "[" + v.map((x) => pyRepr(x)).join(", ") + "]";
  const parts: string[] = [];
  for (const [k, x] of v) parts.push(reprString(k) + ": " + pyRepr(x));
  return "{" + parts.join(", ") + "}";
}

/** Python `str(value)` of a parsed JSON value; a missing value gives `fallback`. */
export function pyStr(v: PyValue | undefined, fallback = ""): string {
  if (v === undefined) return fallback;
  if (typeof v === "string") return v;
  // a huge row's long string still bytes (src/pyjson/row.ts) is a str: str() is itself, not its repr
  if (v instanceof PyRaw && v.kind === "string") return materialize(v) as string;
  return pyRepr(v);
}

type NumLike = { kind: "int"; value: bigint } | { kind: "float"; value: number };

function asNumber(v: PyValue): NumLike | null {
  if (v === true) return { kind: "int", value: 1n };
  if (v === false) return { kind: "int", value: 0n };
  if (v instanceof PyNum) {
    if (!v.isFloat) return { kind: "int", value: BigInt(v.raw) };
    return { kind: "float", value: Number(v.raw) };
  }
  return null;
}

function numEquals(a: NumLike, b: NumLike): boolean {
  if (a.kind === "int" && b.kind === "int") return a.value === b.value;
  if (a.kind === "float" && b.kind === "float") return a.value === b.value;
  const f = a.kind === "float" ? a.value : (b.value as number);
  const i = a.kind === "int" ? a.value : (b.value as bigint);
  // Python compares int and float exactly, not by converting the int.
  if (!Number.isFinite(f) || !Number.isInteger(f)) return false;
  return BigInt(f) === i;
}

/** Python `==` between two parsed JSON values (missing treated as None). */
export function pyEquals(a: PyValue | undefined, b: PyValue | undefined): boolean {
  const x = a === undefined ? null : a instanceof PyRaw ? materialize(a) : a;
  const y = b === undefined ? null : b instanceof PyRaw ? materialize(b) : b;
  if (x === null || y === null) return x === y;
  const nx = asNumber(x);
  const ny = asNumber(y);
  if (nx || ny) return nx !== null && ny !== null && numEquals(nx, ny);
  if (typeof x === "string" || typeof y === "string") return x === y;
  if (Array.isArray(x) || Array.isArray(y)) {
    if (!Array.isArray(x) || !Array.isArray(y) || x.length !== y.length) return false;
    return x.every((e, i) => pyEquals(e, y[i]));
  }
  const mx = x as Map<string, PyValue>;
  const my = y as Map<string, PyValue>;
  if (mx.size !== my.size) return false;
  for (const [k, v] of mx) {
    if (!my.has(k) || !pyEquals(v, my.get(k))) return false;
  }
  return true;
}

/** A parsed float NaN (json.loads' `NaN`). */
export const isNaNFloat = (v: PyValue | undefined): boolean => v instanceof PyNum && v.isFloat && Number.isNaN(Number(v.raw));

/**
 * Python `==` between two parsed values as a container's comparison (a
 * tuple's, a list's, a dict's) applies it to its members: identity first,
 * and `json.loads` returns one shared NaN object for every `NaN` token, so
 * a NaN equals a NaN at the same place, at any depth (while `nan == nan`
 * alone is false). Missing is None.
 */
export function pyEqualsAsMember(a: PyValue | undefined, b: PyValue | undefined): boolean {
  const x = a === undefined ? null : a instanceof PyRaw ? materialize(a) : a;
  const y = b === undefined ? null : b instanceof PyRaw ? materialize(b) : b;
  if (x !== null && y !== null && isNaNFloat(x) && isNaNFloat(y)) return true;
  if (Array.isArray(x) && Array.isArray(y)) return x.length === y.length && x.every((e, i) => pyEqualsAsMember(e, y[i]));
  if (x instanceof Map && y instanceof Map) {
    if (x.size !== y.size) return false;
    for (const [k, v] of x) if (!y.has(k) || !pyEqualsAsMember(v, y.get(k))) return false;
    return true;
  }
  return pyEquals(x, y);
}

/**
 * Python `int(value)` as the walkers use it for `seq`: ints, floats
 * (truncated), bools and numeric strings; anything else is not convertible.
 */
export function pyInt(v: PyValue | undefined): bigint | null {
  if (v === true) return 1n;
  if (v === false) return 0n;
  if (v instanceof PyNum) {
    if (!v.isFloat) return BigInt(v.raw);
    const f = Number(v.raw);
    if (!Number.isFinite(f)) return null;
    return BigInt(Math.trunc(f));
  }
  if (typeof v === "string") return pyIntFromString(v);
  return null;
}

/**
 * Python's whitespace (`str.isspace()`, the set `str.strip()` removes):
 * includes \x1c-\x1f, \x85 and U+2028/2029; excludes U+FEFF and U+200B.
 */
export function isPyWhitespace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
  if (c < 0x85) return false;
  return (
    c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000
  );
}

/** Python `str.strip()` (no argument). */
export function pyStrip(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && isPyWhitespace(s.charCodeAt(a))) a++;
  while (b > a && isPyWhitespace(s.charCodeAt(b - 1))) b--;
  return a === 0 && b === s.length ? s : s.slice(a, b);
}

const DECIMAL_DIGIT = /^\p{Nd}$/u;

/** The value 0-9 of a Unicode decimal digit (Nd), or -1. */
function decimalValue(ch: string): number {
  const cp = ch.codePointAt(0)!;
  if (cp >= 0x30 && cp <= 0x39) return cp - 0x30;
  if (cp < 0x80 || !DECIMAL_DIGIT.test(ch)) return -1;
  // Unicode encodes every decimal digit set as ten contiguous code points
  // 0..9 (a stability guarantee); sets can be adjacent (e.g. the five
  // mathematical digit sets), so count back to the start of the run.
  let start = cp;
  while (DECIMAL_DIGIT.test(String.fromCodePoint(start - 1))) start--;
  return (cp - start) % 10;
}

/**
 * Python `int(text)` in base 10: surrounding whitespace (ASCII spaces and
 * non-ASCII Unicode whitespace, not \x1c-\x1f), one optional sign,
 * ASCII or any Unicode decimal digits, single underscores between digits,
 * at most 4300 digits (CPython >= 3.11). Anything else is a ValueError
 * (`null` here). `parseInt("3x")` is 3; `int("3x")` raises.
 */
export function pyIntFromString(text: string): bigint | null {
  // int() keeps ASCII characters as they are and skips only ASCII spaces
  // (" \t\n\v\f\r") around the number, but maps non-ASCII whitespace to a
  // space first: so "\u20283" parses while "\x1c3" does not.
  let a = 0;
  let b = text.length;
  const skippable = (c: number): boolean => (c < 0x80 ? c === 0x20 || (c >= 0x09 && c <= 0x0d) : isPyWhitespace(c));
  while (a < b && skippable(text.charCodeAt(a))) a++;
  while (b > a && skippable(text.charCodeAt(b - 1))) b--;
  const t = text.slice(a, b);
  let i = 0;
  let neg = false;
  if (t[0] === "+" || t[0] === "-") {
    neg = t[0] === "-";
    i = 1;
  }
  let digits = "";
  let prevDigit = false;
  for (const ch of t.slice(i)) {
    if (ch === "_") {
      if (!prevDigit) return null;
      prevDigit = false;
      continue;
    }
    const d = decimalValue(ch);
    if (d < 0) return null;
    digits += String(d);
    prevDigit = true;
  }
  if (!prevDigit || digits.length === 0 || digits.length > 4300) return null;
  const n = BigInt(digits);
  return neg ? -n : n;
}

export { floatRepr };

/**
 * Python `round(x, ndigits)` for a float and `ndigits >= 0`: correctly
 * rounded on the exact binary value, ties to even. (`toFixed` rounds exact
 * ties up: `(0.0625).toFixed(3)` is "0.063", Python gives 0.062;
 * `Math.round(x * 1000) / 1000` is wrong more often, on the inexact product.)
 */
export function pyRound(x: number, ndigits: number): number {
  if (!Number.isFinite(x) || x === 0 || Math.abs(x) >= 2 ** 52) return x;
  const neg = x < 0;
  const a = Math.abs(x);
  // Enough digits to see whether the discarded part is exactly one half:
  // near a tie the spacing of doubles is far above 10^-(ndigits+25).
  const exact = a.toFixed(Math.min(100, ndigits + 25));
  const dot = exact.indexOf(".");
  const rest = exact.slice(dot + 1 + ndigits);
  let r: number;
  if (rest[0] === "5" && /^0*$/.test(rest.slice(1))) {
    const kept = exact.slice(0, dot + 1 + ndigits);
    const last = ndigits > 0 ? kept.charCodeAt(kept.length - 1) : kept.charCodeAt(dot - 1);
    r = (last - 0x30) % 2 === 0 ? Number(kept) : Number(a.toFixed(ndigits));
  } else {
    r = Number(a.toFixed(ndigits));
  }
  return neg ? -r : r;
}

/**
 * Python's `s[:n]`: the first n code points (a JS slice counts UTF-16
 * units, so an astral character would count twice). Error messages quote
 * `hash[:16]` of values a journal or manifest controls.
 */
export function pyPrefix(s: string, n: number): string {
  let units = 0;
  for (let k = 0; k < n && units < s.length; k++) {
    const c = s.charCodeAt(units);
    const d = s.charCodeAt(units + 1);
    units += c >= 0xd800 && c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff ? 2 : 1;
  }
  return s.slice(0, units);
}
