import { canonicalNumber } from "../pyjson/float.ts";

const latin1 = new TextDecoder("latin1");

/**
 * A float lexeme `bytes[s, e)` spelled exactly as Python's `repr` would
 * (what `canonical` writes for it), as a test cheap enough to run on every
 * row's `ts`. Fixed notation (`-?digits.digits`) in [1e-4, 1e16) uses the
 * same shortest round-trip digits as JS `String()` (Python adds `.0` to
 * integral values); anything else asks `canonicalNumber`. An int lexeme is
 * not a float's spelling (it re-spells with `.0`).
 */
export function isReprFloat(bytes: Uint8Array, s: number, e: number): boolean {
  if (s < 0 || e - s > 40) return false;
  let dots = 0;
  let plain = true;
  let exp = false;
  for (let i = s; i < e; i++) {
    const c = bytes[i]!;
    if (c === 0x2e) dots++;
    else if (c < 0x30 || c > 0x39) {
      if (c !== 0x2d || i !== s) plain = false;
      if (c === 0x65 || c === 0x45 || c === 0x49 || c === 0x4e) exp = true;
    }
  }
  if (dots === 0 && !exp) return false;
  const text = latin1.decode(bytes.subarray(s, e));
  const neg = bytes[s] === 0x2d ? 1 : 0;
  if (plain && dots === 1 && bytes[s + neg] !== 0x2e && bytes[e - 1] !== 0x2e) {
    const v = +text;
    const a = Math.abs(v);
    if (a >= 1e-4 && a < 1e16) return Number.isInteger(v) ? text === (Object.is(v, -0) ? "-0" : String(v)) + ".0" : text === String(v);
  }
  return canonicalNumber(text, true) === text;
}
