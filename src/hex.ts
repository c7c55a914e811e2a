/** Lowercase hex: the digits, as text and as bytes, and the two hex strings the tree makes. */
export const HEX_DIGITS = "0123456789abcdef";
export const HEX_BYTES = new TextEncoder().encode(HEX_DIGITS);

/** Lowercase hex SHA-256 of `data` (a string is hashed as its UTF-8 bytes). */
export function sha256Hex(data: string | Uint8Array): string {
  return Bun.SHA256.hash(data, "hex") as string;
}

/**
 * `bytes` random bytes as lowercase hex. Web Crypto's global
 * getRandomValues, not node:crypto: loading that module (and the streams
 * it pulls in) adds milliseconds of start-up to every command that can write a file.
 */
export function randomHex(bytes: number): string {
  const b = crypto.getRandomValues(new Uint8Array(bytes));
  let s = "";
  for (const x of b) s += HEX_DIGITS[x >> 4]! + HEX_DIGITS[x & 15]!;
  return s;
}

/** Each byte's value as a hex digit, either case (0–15), or -1: the one hex decoder of the tree. */
export const HEX_VALUE = new Int8Array(256).fill(-1);
/** Each byte's value as a lowercase hex digit, or -1: the only case a canonical spelling (a hash, Python's `\u` escape) uses. */
export const LOWER_HEX_VALUE = new Int8Array(256).fill(-1);
for (let i = 0; i < 16; i++) {
  HEX_VALUE[HEX_BYTES[i]!] = i;
  LOWER_HEX_VALUE[HEX_BYTES[i]!] = i;
  if (i >= 10) HEX_VALUE[HEX_BYTES[i]! - 0x20] = i;
}

/** The code unit that the four hex digits (either case) at b[p..p+4) spell, or -1 when one is not a hex digit (or is past the end). */
export function hex4(b: Uint8Array, p: number): number {
  return hex4By(HEX_VALUE, b, p);
}

/** hex4 for lowercase digits only (a canonical `\u` escape's): -1 when one is not. */
export function lowerHex4(b: Uint8Array, p: number): number {
  return hex4By(LOWER_HEX_VALUE, b, p);
}

function hex4By(digit: Int8Array, b: Uint8Array, p: number): number {
  const h0 = digit[b[p] ?? 0]!;
  const h1 = digit[b[p + 1] ?? 0]!;
  const h2 = digit[b[p + 2] ?? 0]!;
  const h3 = digit[b[p + 3] ?? 0]!;
  if ((h0 | h1 | h2 | h3) < 0) return -1;
  return (h0 << 12) | (h1 << 8) | (h2 << 4) | h3;
}

/** True for exactly 64 lowercase hex digits: a SHA-256 as every file of the tree spells it. */
export function isLowerHex64(s: string): boolean {
  return LOWER_HEX64.test(s);
}
const LOWER_HEX64 = /^[0-9a-f]{64}$/;
