import { HEX_VALUE } from "../hex.ts";
import { PyJsonError, PyNum, type PyObject, type PyRaw, type PyValue } from "./types.ts";

/**
 * A JSON parser with the semantics of CPython's `json.loads` (C scanner,
 * strict mode): `NaN`/`Infinity`/`-Infinity` accepted, control characters in
 * strings refused, last duplicate key wins, number lexemes preserved.
 * Error messages follow Python's `JSONDecodeError` text, because step-journal
 * verify messages embed them.
 */
export interface ParseOptions {
  /** Maximum nesting of arrays/objects; deeper input is refused. */
  maxDepth?: number;
}

/**
 * Python's CPython 3.11 raises RecursionError near 1000 levels; we refuse
 * (as a parse error) at the same order of magnitude instead of crashing.
 */
export const DEFAULT_MAX_DEPTH = 1000;

/** CPython's default `sys.get_int_max_str_digits()`. */
export const INT_MAX_STR_DIGITS = 4300;

const WS_SPACE = 0x20;
const WS_TAB = 0x09;
const WS_LF = 0x0a;
const WS_CR = 0x0d;

function isWs(c: number): boolean {
  return c === WS_SPACE || c === WS_TAB || c === WS_LF || c === WS_CR;
}

const STRING_SPECIAL = /["\\\x00-\x1f]/g;

function errorAt(text: string, msg: string, pos: number): PyJsonError {
  // Python counts code points; a JS string counts UTF-16 units, so every
  // surrogate pair before the position counts once (a lone surrogate, which
  // Python also keeps as one code point, counts once either way).
  let lineno = 1;
  let cp = 0;
  let lineStartCp = 0;
  for (let i = 0; i < pos && i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < pos) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    cp++;
    if (c === WS_LF) {
      lineno++;
      lineStartCp = cp;
    }
  }
  const colno = cp - lineStartCp + 1;
  return new PyJsonError(`${msg}: line ${lineno} column ${colno} (char ${cp})`, pos);
}

export function parse(text: string, options: ParseOptions = {}): PyValue {
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  let pos = 0;
  const len = text.length;

  const skipWs = (): void => {
    while (pos < len && isWs(text.charCodeAt(pos))) pos++;
  };

  const parseString = (): string => {
    // pos is at the opening quote
    const begin = pos;
    pos++;
    let out = "";
    let chunkStart = pos;
    for (;;) {
      if (pos >= len) throw errorAt(text, "Unterminated string starting at", begin);
      // Jump to the next quote, backslash or control character (a native
      // regex scan: this loop is the verifier's hot path).
      STRING_SPECIAL.lastIndex = pos;
      if (!STRING_SPECIAL.test(text)) throw errorAt(text, "Unterminated string starting at", begin);
      pos = STRING_SPECIAL.lastIndex - 1;
      const c = text.charCodeAt(pos);
      if (c === 0x22) {
        out += text.slice(chunkStart, pos);
        pos++;
        return out;
      }
      if (c < 0x20) throw errorAt(text, "Invalid control character at", pos);
      out += text.slice(chunkStart, pos);
      pos++;
      if (pos >= len) throw errorAt(text, "Unterminated string starting at", begin);
      const e = text.charCodeAt(pos);
      switch (e) {
        case 0x22: out += '"'; pos++; break;
        case 0x5c: out += "\\"; pos++; break;
        case 0x2f: out += "/"; pos++; break;
        case 0x62: out += "\b"; pos++; break;
        case 0x66: out += "\f"; pos++; break;
        case 0x6e: out += "\n"; pos++; break;
        case 0x72: out += "\r"; pos++; break;
        case 0x74: out += "\t"; pos++; break;
        case 0x75: {
          const u = readHex4(pos + 1);
          if (u < 0) throw errorAt(text, "Invalid \\uXXXX escape", pos);
          pos += 5;
          // A high surrogate followed by an escaped low surrogate combines
          // into one code point in Python; in UTF-16 that is the same pair.
          out += String.fromCharCode(u);
          break;
        }
        default:
          throw errorAt(text, "Invalid \\escape", pos - 1);
      }
      chunkStart = pos;
    }
  };

  const readHex4 = (at: number): number => {
    // CPython refuses an escape whose 4 digits end the text (the closing
    // quote must follow): "Invalid \\uXXXX escape", not "Unterminated".
    if (at + 4 >= len) return -1;
    let v = 0;
    for (let i = 0; i < 4; i++) {
      const c = text.charCodeAt(at + i);
      const d = c < 0x80 ? HEX_VALUE[c]! : -1;
      if (d < 0) return -1;
      v = v * 16 + d;
    }
    return v;
  };

  const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

  const parseNumber = (): PyNum | null => {
    const start = pos;
    let p = pos;
    if (text.charCodeAt(p) === 0x2d) p++;
    const c0 = text.charCodeAt(p);
    if (c0 === 0x30) {
      p++;
    } else if (c0 >= 0x31 && c0 <= 0x39) {
      p++;
      while (p < len && isDigit(text.charCodeAt(p))) p++;
    } else {
      return null;
    }
    let isFloat = false;
    if (text.charCodeAt(p) === 0x2e && isDigit(text.charCodeAt(p + 1))) {
      p += 2;
      while (p < len && isDigit(text.charCodeAt(p))) p++;
      isFloat = true;
    }
    const ec = text.charCodeAt(p);
    if (ec === 0x65 || ec === 0x45) {
      let q = p + 1;
      const sc = text.charCodeAt(q);
      if (sc === 0x2b || sc === 0x2d) q++;
      if (isDigit(text.charCodeAt(q))) {
        q++;
        while (q < len && isDigit(text.charCodeAt(q))) q++;
        p = q;
        isFloat = true;
      }
    }
    if (!isFloat) {
      // CPython >= 3.11 refuses int() of more than 4300 digits (a ValueError
      // from json.loads), so such a row is unreadable to the Python reader.
      const digits = p - start - (text.charCodeAt(start) === 0x2d ? 1 : 0);
      if (digits > INT_MAX_STR_DIGITS) {
        throw new PyJsonError(
          `Exceeds the limit (${INT_MAX_STR_DIGITS} digits) for integer string conversion: value has ${digits} digits; use sys.set_int_max_str_digits() to increase the limit`,
          start,
        );
      }
    }
    pos = p;
    return new PyNum(text.slice(start, p), isFloat);
  };

  const parseValue = (depth: number): PyValue => {
    if (pos >= len) throw errorAt(text, "Expecting value", pos);
    const c = text.charCodeAt(pos);
    switch (c) {
      case 0x22:
        return parseString();
      case 0x7b:
        return parseObject(depth + 1);
      case 0x5b:
        return parseArray(depth + 1);
      case 0x6e:
        if (text.startsWith("null", pos)) { pos += 4; return null; }
        break;
      case 0x74:
        if (text.startsWith("true", pos)) { pos += 4; return true; }
        break;
      case 0x66:
        if (text.startsWith("false", pos)) { pos += 5; return false; }
        break;
      case 0x4e:
        if (text.startsWith("NaN", pos)) { pos += 3; return new PyNum("NaN", true); }
        break;
      case 0x49:
        if (text.startsWith("Infinity", pos)) { pos += 8; return new PyNum("Infinity", true); }
        break;
      case 0x2d:
        if (text.startsWith("-Infinity", pos)) { pos += 9; return new PyNum("-Infinity", true); }
        break;
    }
    const n = parseNumber();
    if (n === null) throw errorAt(text, "Expecting value", pos);
    return n;
  };

  const parseObject = (depth: number): PyObject => {
    if (depth > maxDepth) throw errorAt(text, "Nesting too deep", pos);
    pos++; // {
    const obj: PyObject = new Map();
    skipWs();
    if (text.charCodeAt(pos) === 0x7d) {
      pos++;
      return obj;
    }
    for (;;) {
      if (text.charCodeAt(pos) !== 0x22) {
        throw errorAt(text, "Expecting property name enclosed in double quotes", pos);
      }
      const key = parseString();
      skipWs();
      if (text.charCodeAt(pos) !== 0x3a) throw errorAt(text, "Expecting ':' delimiter", pos);
      pos++;
      skipWs();
      const value = parseValue(depth);
      obj.set(key, value);
      skipWs();
      const d = text.charCodeAt(pos);
      if (d === 0x7d) {
        pos++;
        return obj;
      }
      if (d !== 0x2c) throw errorAt(text, "Expecting ',' delimiter", pos);
      pos++;
      skipWs();
    }
  };

  const parseArray = (depth: number): PyValue[] => {
    if (depth > maxDepth) throw errorAt(text, "Nesting too deep", pos);
    pos++; // [
    const arr: PyValue[] = [];
    skipWs();
    if (text.charCodeAt(pos) === 0x5d) {
      pos++;
      return arr;
    }
    for (;;) {
      arr.push(parseValue(depth));
      skipWs();
      const d = text.charCodeAt(pos);
      if (d === 0x5d) {
        pos++;
        return arr;
      }
      if (d !== 0x2c) throw errorAt(text, "Expecting ',' delimiter", pos);
      pos++;
      skipWs();
    }
  };

  if (text.charCodeAt(0) === 0xfeff) {
    // json.loads(str) names the BOM instead of "Expecting value".
    throw errorAt(text, "Unexpected UTF-8 BOM (decode using utf-8-sig)", 0);
  }
  skipWs();
  const value = parseValue(0);
  skipWs();
  if (pos !== len) throw errorAt(text, "Extra data", pos);
  return value;
}

/** True for a parsed JSON object (a `Map`). */
export function isPyObject(v: unknown): v is PyObject {
  return v instanceof Map;
}

const rawDecoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** The tree of a `PyRaw` (costs what the tree parser costs: for the rare consumer that needs one). */
export function materialize(raw: PyRaw): PyValue {
  return parse(rawDecoder.decode(raw.bytes));
}

/** A `PyRaw` holding `[]` or `{}` (with only whitespace inside). */
export function rawIsEmpty(raw: PyRaw): boolean {
  const b = raw.bytes;
  let p = 1;
  while (b[p] === 0x20 || b[p] === 0x09 || b[p] === 0x0a || b[p] === 0x0d) p++;
  return p === b.length - 1;
}
