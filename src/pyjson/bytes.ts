import { BACKSLASH, COLON, COMMA, isDigitByte, isWsByte, LBRACE, LBRACKET, MINUS, QUOTE, RBRACE, RBRACKET, spanIs } from "../codec/bytes.ts";
import { jsonStringEnd, scannedString, stringTokenEnd } from "../codec/row-index.ts";
import { DEFAULT_MAX_DEPTH, INT_MAX_STR_DIGITS } from "./parse.ts";
import { PyJsonError } from "./types.ts";

/**
 * `json.loads` validation over UTF-8 bytes, without building values: the
 * same acceptance and the same error messages as `parse()` (parse.ts; a
 * differential test pins them), positions counted in code points as
 * Python does. A huge row is checked (and its top-level members located)
 * by this, then hashed or re-encoded from its bytes (encode-bytes.ts), so
 * it never becomes a tree of JS values (which costs many times its bytes).
 */

const enc = new TextEncoder();
const W_NULL = enc.encode("null");
const W_TRUE = enc.encode("true");
const W_FALSE = enc.encode("false");
const W_NAN = enc.encode("NaN");
const W_INF = enc.encode("Infinity");
const W_NEGINF = enc.encode("-Infinity");

/** bytes[pos..] starts with `word`. */
export function startsWithBytes(b: Uint8Array, pos: number, word: Uint8Array): boolean {
  return pos + word.length <= b.length && spanIs(b, pos, pos + word.length, word);
}

/** The literal (null/true/false/NaN/Infinity/-Infinity) at `pos`, or null. */
export function literalAt(b: Uint8Array, pos: number): Uint8Array | null {
  switch (b[pos]) {
    case 0x6e: return startsWithBytes(b, pos, W_NULL) ? W_NULL : null;
    case 0x74: return startsWithBytes(b, pos, W_TRUE) ? W_TRUE : null;
    case 0x66: return startsWithBytes(b, pos, W_FALSE) ? W_FALSE : null;
    case 0x4e: return startsWithBytes(b, pos, W_NAN) ? W_NAN : null;
    case 0x49: return startsWithBytes(b, pos, W_INF) ? W_INF : null;
    case MINUS: return startsWithBytes(b, pos, W_NEGINF) ? W_NEGINF : null;
  }
  return null;
}

/**
 * The end of the JSON number at `pos` (parse.ts's grammar: a fraction needs
 * a digit after the dot and an exponent a digit after its sign, else they
 * are not part of the number), or -1; `isFloat` via the out parameter.
 */
export function numberEnd(b: Uint8Array, pos: number, out: { isFloat: boolean }): number {
  let p = pos;
  if (b[p] === MINUS) p++;
  const c0 = b[p];
  if (c0 === 0x30) p++;
  else if (c0 !== undefined && c0 >= 0x31 && c0 <= 0x39) {
    p++;
    while (isDigitByte(b[p])) p++;
  } else return -1;
  let isFloat = false;
  if (b[p] === 0x2e && isDigitByte(b[p + 1])) {
    p += 2;
    while (isDigitByte(b[p])) p++;
    isFloat = true;
  }
  const ec = b[p];
  if (ec === 0x65 || ec === 0x45) {
    let q = p + 1;
    const sc = b[q];
    if (sc === 0x2b || sc === MINUS) q++;
    if (isDigitByte(b[q])) {
      q++;
      while (isDigitByte(b[q])) q++;
      p = q;
      isFloat = true;
    }
  }
  out.isFloat = isFloat;
  return p;
}

const anyNumber = { isFloat: false };

/**
 * numberEnd for the fast readers, which decline what Python refuses: -1
 * also for an integer of more than INT_MAX_STR_DIGITS digits (Python raises
 * ValueError converting it; the exact path reports that).
 */
export function convertibleNumberEnd(b: Uint8Array, pos: number): number {
  const p = numberEnd(b, pos, anyNumber);
  if (p >= 0 && !anyNumber.isFloat && p - pos - (b[pos] === MINUS ? 1 : 0) > INT_MAX_STR_DIGITS) return -1;
  return p;
}

/** parse.ts's errorAt over bytes: Python's line, column and char (code points). */
function errorAt(b: Uint8Array, msg: string, pos: number): PyJsonError {
  let lineno = 1;
  let cp = 0;
  let lineStartCp = 0;
  for (let i = 0; i < pos && i < b.length; i++) {
    const c = b[i]!;
    if ((c & 0xc0) === 0x80) continue; // a continuation byte: same code point
    cp++;
    if (c === 0x0a) {
      lineno++;
      lineStartCp = cp;
    }
  }
  return new PyJsonError(`${msg}: line ${lineno} column ${cp - lineStartCp + 1} (char ${cp})`, pos);
}

/**
 * json.loads' error for the string token at `begin` that jsonStringEnd
 * refused at `stop` (valid UTF-8 assumed): parse()'s message and position.
 */
function stringError(b: Uint8Array, begin: number, stop: number): PyJsonError {
  const len = b.length;
  if (stop >= len) return errorAt(b, "Unterminated string starting at", begin);
  if (b[stop] === BACKSLASH) {
    if (stop + 1 >= len) return errorAt(b, "Unterminated string starting at", begin);
    if (b[stop + 1] === 0x75) return errorAt(b, "Invalid \\uXXXX escape", stop + 1);
    return errorAt(b, "Invalid \\escape", stop);
  }
  if (b[stop]! < 0x20) return errorAt(b, "Invalid control character at", stop);
  // validateBytes' input is valid UTF-8: a refused lead byte is a caller's bug
  throw new Error(`validateBytes: invalid UTF-8 at byte ${stop}`);
}

/** One top-level object member: key token [keyStart, keyEnd) (quotes included), value [valueStart, valueEnd). */
export interface MemberSpan {
  keyStart: number;
  keyEnd: number;
  valueStart: number;
  valueEnd: number;
}

export interface ValidateResult {
  /** The document is an object: its members in input order (duplicates kept). */
  members: MemberSpan[] | null;
}

/**
 * Validate `b` (the whole JSON text, already checked to be UTF-8) with
 * `json.loads` semantics; throws `PyJsonError` with parse()'s message.
 * When the document is an object, its top-level members are returned.
 */
export function validateBytes(b: Uint8Array, maxDepth = DEFAULT_MAX_DEPTH): ValidateResult {
  const len = b.length;
  let pos = 0;
  const num = { isFloat: false };
  let members: MemberSpan[] | null = null;

  const skipWs = (): void => {
    while (pos < len && isWsByte(b[pos])) pos++;
  };

  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const parseString = (): void => {
    const end = jsonStringEnd(b, dv, pos, len);
    if (end < 0) throw stringError(b, pos, scannedString.stop);
    pos = end;
  };

  const parseNumber = (): boolean => {
    const start = pos;
    const p = numberEnd(b, pos, num);
    if (p < 0) return false;
    if (!num.isFloat) {
      const digits = p - start - (b[start] === MINUS ? 1 : 0);
      if (digits > INT_MAX_STR_DIGITS) {
        throw new PyJsonError(
          `Exceeds the limit (${INT_MAX_STR_DIGITS} digits) for integer string conversion: value has ${digits} digits; use sys.set_int_max_str_digits() to increase the limit`,
          start,
        );
      }
    }
    pos = p;
    return true;
  };

  const parseValue = (depth: number): void => {
    if (pos >= len) throw errorAt(b, "Expecting value", pos);
    const c = b[pos];
    if (c === QUOTE) return parseString();
    if (c === LBRACE) return parseObject(depth + 1, false);
    if (c === LBRACKET) return parseArray(depth + 1);
    const lit = literalAt(b, pos);
    if (lit !== null) {
      pos += lit.length;
      return;
    }
    if (!parseNumber()) throw errorAt(b, "Expecting value", pos);
  };

  const parseObject = (depth: number, top: boolean): void => {
    if (depth > maxDepth) throw errorAt(b, "Nesting too deep", pos);
    pos++;
    skipWs();
    if (b[pos] === RBRACE) {
      pos++;
      return;
    }
    for (;;) {
      if (b[pos] !== QUOTE) throw errorAt(b, "Expecting property name enclosed in double quotes", pos);
      const keyStart = pos;
      parseString();
      const keyEnd = pos;
      skipWs();
      if (b[pos] !== COLON) throw errorAt(b, "Expecting ':' delimiter", pos);
      pos++;
      skipWs();
      const valueStart = pos;
      parseValue(depth);
      if (top) members!.push({ keyStart, keyEnd, valueStart, valueEnd: pos });
      skipWs();
      const d = b[pos];
      if (d === RBRACE) {
        pos++;
        return;
      }
      if (d !== COMMA) throw errorAt(b, "Expecting ',' delimiter", pos);
      pos++;
      skipWs();
    }
  };

  const parseArray = (depth: number): void => {
    if (depth > maxDepth) throw errorAt(b, "Nesting too deep", pos);
    pos++;
    skipWs();
    if (b[pos] === RBRACKET) {
      pos++;
      return;
    }
    for (;;) {
      parseValue(depth);
      skipWs();
      const d = b[pos];
      if (d === RBRACKET) {
        pos++;
        return;
      }
      if (d !== COMMA) throw errorAt(b, "Expecting ',' delimiter", pos);
      pos++;
      skipWs();
    }
  };

  if (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) {
    throw errorAt(b, "Unexpected UTF-8 BOM (decode using utf-8-sig)", 0);
  }
  skipWs();
  if (b[pos] === LBRACE) {
    members = [];
    parseObject(1, true);
  } else {
    parseValue(0);
  }
  skipWs();
  if (pos !== len) throw errorAt(b, "Extra data", pos);
  return { members };
}

/**
 * The end of the (validated) value starting at `pos`: strings by their
 * closing quote (the codec's string reader; four bytes at a time with `dv`,
 * a view of `b`, for a caller skipping much of a huge row), containers by
 * bracket depth (strings skipped).
 */
export function skipValue(b: Uint8Array, pos: number, dv: DataView | null = null): number {
  const c = b[pos];
  if (c === QUOTE) return jsonStringEnd(b, dv, pos, b.length);
  if (c === LBRACE || c === LBRACKET) {
    let depth = 0;
    let p = pos;
    for (;;) {
      const d = b[p]!;
      if (d === QUOTE) {
        p = jsonStringEnd(b, dv, p, b.length);
        continue;
      }
      if (d === LBRACE || d === LBRACKET) depth++;
      else if (d === RBRACE || d === RBRACKET) {
        depth--;
        if (depth === 0) return p + 1;
      }
      p++;
    }
  }
  const lit = literalAt(b, pos);
  if (lit !== null) return pos + lit.length;
  return numberEnd(b, pos, { isFloat: false });
}

export function skipWsBytes(b: Uint8Array, pos: number): number {
  while (isWsByte(b[pos])) pos++;
  return pos;
}

/** Containers nested deeper than this are not counted by widestObject. */
const WIDEST_DEPTH_MAX = 4096;
const widestStack = new Int32Array(WIDEST_DEPTH_MAX + 1);

/**
 * The commas of the widest object in a line (its members - 1, when well
 * formed) at any depth, counted until `enough`: a cheap look at how much
 * key sorting a line holds before deciding where to encode it. Arrays do
 * not count (a dense list needs no sorting). Strings are skipped; the
 * bytes need not be valid (the count is then meaningless but bounded).
 */
export function widestObject(b: Uint8Array, enough: number): number {
  // per open container: its comma count, or -1 for an array
  const stack = widestStack;
  let depth = 0;
  let widest = 0;
  const len = b.length;
  for (let p = 0; p < len; p++) {
    const c = b[p]!;
    if (c === QUOTE) {
      const end = stringTokenEnd(b, p);
      // a string json.loads refuses: the line is refused too, whatever the count
      if (end < 0) return widest;
      p = end - 1;
    } else if (c === LBRACE || c === LBRACKET) {
      if (++depth <= WIDEST_DEPTH_MAX) stack[depth] = c === LBRACE ? 0 : -1;
    } else if (c === RBRACE || c === RBRACKET) {
      if (depth > 0) depth--;
    } else if (c === COMMA && depth > 0 && depth <= WIDEST_DEPTH_MAX && stack[depth]! >= 0) {
      const n = ++stack[depth]!;
      if (n > widest && (widest = n) >= enough) return widest;
    }
  }
  return widest;
}
