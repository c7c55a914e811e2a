import { canonicalNumber } from "../pyjson/float.ts";

const latin1 = new TextDecoder("latin1");

/**
 * A float lexeme `bytes[s, e)` spelled exactly as Python's `repr` would
 * (what `canonical` writes for it), as a test cheap enough to run on every
 * row's `ts`. A clock reading (`I.F`, 1 <= I < 2^32, a few fraction
 * digits) is decided in integer arithmetic (`fixedIsRepr`); other fixed
 * notation (`-?digits.digits`) in [1e-4, 1e16) uses the same shortest
 * round-trip digits as JS `String()` (Python adds `.0` to integral
 * values); anything else asks `canonicalNumber`. An int lexeme is not a
 * float's spelling (it re-spells with `.0`).
 */
export function isReprFloat(bytes: Uint8Array, s: number, e: number): boolean {
  if (s < 0 || e - s > 40) return false;
  const fast = fixedIsRepr(bytes, s, e);
  if (fast !== UNDECIDED) return fast === 1;
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

const UNDECIDED = -1;
/** Every product below stays an exact double. */
const EXACT = 2 ** 53;

/**
 * `-?I.F` with 1 <= I < 2^32 (no leading zero) and F of m digits (last one
 * not 0) decided without building a string: 1 or 0, or UNDECIDED (leave
 * it to the exact test). I is exact and lies in the binade [2^b, 2^(b+1))
 * where doubles are spaced 1/S (S = 2^(52-b)), so the double read is
 * I + j/S with j = F·S/10^m rounded, and it owns the reals within 1/(2S)
 * of it, all between I and I + 1 (0 < j < S). Python's repr is the
 * shortest decimal there, the nearest one among equally short ones: F is
 * it when no decimal of m-1 fraction digits lies within 1/(2S) of j/S
 * (one of fewer digits is one of those too) and F lies within half a
 * 10^-m of j/S. Ties and ends are left to the exact test.
 */
function fixedIsRepr(bytes: Uint8Array, s: number, e: number): number {
  let i = bytes[s] === 0x2d ? s + 1 : s;
  if (bytes[i] === 0x30) return UNDECIDED; // I = 0 (or a leading zero)
  let int = 0;
  const intStart = i;
  for (; i < e; i++) {
    const c = bytes[i]!;
    if (c < 0x30 || c > 0x39) break;
    int = int * 10 + (c - 0x30);
  }
  if (i === intStart || i - intStart > 10 || i >= e || bytes[i] !== 0x2e) return UNDECIDED;
  i++;
  const m = e - i;
  if (m < 1 || m > 15) return UNDECIDED;
  let frac = 0;
  for (; i < e; i++) {
    const c = bytes[i]!;
    if (c < 0x30 || c > 0x39) return UNDECIDED;
    frac = frac * 10 + (c - 0x30);
  }
  if (frac === 0) return m === 1 ? 1 : 0; // "I.0" is repr(I); "I.00" is not
  if (bytes[e - 1] === 0x30) return 0; // a trailing zero: a shorter spelling reads the same
  if (int >= 2 ** 32) return UNDECIDED;
  const b = 31 - Math.clz32(int);
  const S = 2 ** (52 - b);
  const P = 10 ** m;
  if (2 * S * P > EXACT) return UNDECIDED;
  const fs = frac * S; // exact: < S·P
  let q = Math.floor(fs / P); // the quotient rounded may be one off: fs - q·P is exact
  if (fs - q * P < 0) q--;
  else if (fs - q * P >= P) q++;
  const r2 = 2 * (fs - q * P);
  if (r2 === P) return UNDECIDED; // a tie: the even grid point
  const j = r2 > P ? q + 1 : q;
  if (j === 0 || j === S) return UNDECIDED;
  // F within half a step of j/S: |F·S - j·P| < S/2 (equal: a tie between two spellings)
  const off = 2 * Math.abs(fs - j * P);
  if (off === S) return UNDECIDED;
  if (off > S) return 0;
  // A decimal k/T (T = 10^(m-1)) within 1/(2S) of j/S: (2j-1)·T <= 2S·k <= (2j+1)·T.
  const T = P / 10;
  const lo = (2 * j - 1) * T;
  const hi = (2 * j + 1) * T;
  const k = Math.ceil(lo / (2 * S));
  const at = 2 * S * k;
  if (at === lo || at === hi) return UNDECIDED;
  return at < hi ? 0 : 1;
}
