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
 * it pulls in) cost ~3.5 ms of start-up on every command that can write a file.
 */
export function randomHex(bytes: number): string {
  const b = crypto.getRandomValues(new Uint8Array(bytes));
  let s = "";
  for (const x of b) s += HEX_DIGITS[x >> 4]! + HEX_DIGITS[x & 15]!;
  return s;
}
