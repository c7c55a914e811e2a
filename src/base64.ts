/**
 * The one strict Base64 decoder for signatures, keys and hashes.
 *
 * A text is accepted only when it is the canonical encoding of its bytes:
 * the format's alphabet (standard `+/` or URL-safe `-_`), padding exactly as
 * that form writes it (standard: `=` up to a multiple of 4; URL-safe as a
 * JWK writes it: none), no whitespace or newline, and zero unused bits in
 * the last character. So each byte string has exactly one accepted text and
 * an encoding cannot be malleated without being refused.
 */

export type Base64Form = "std" | "url";

export interface CanonicalBase64Options {
  /** `std` (RFC 4648 §4, padded; the default) or `url` (§5, unpadded). */
  form?: Base64Form;
  /** The exact number of bytes the text must decode to. */
  length?: number;
}

/** The canonical text of `bytes` in `form`. */
export function encodeBase64(bytes: Uint8Array, form: Base64Form = "std"): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString(form === "url" ? "base64url" : "base64");
}

/**
 * The bytes `text` encodes, or null unless it is the canonical encoding
 * (and, with `length`, of exactly that many bytes). Node's decoder is
 * lenient (it skips foreign characters and ignores stray bits), so the
 * decoded bytes are encoded again and must give back `text` exactly.
 */
export function decodeBase64Canonical(text: string, opts: CanonicalBase64Options = {}): Uint8Array | null {
  const form = opts.form ?? "std";
  if (opts.length !== undefined && text.length !== encodedLength(opts.length, form)) return null;
  const bytes = Buffer.from(text, form === "url" ? "base64url" : "base64");
  if (bytes.toString(form === "url" ? "base64url" : "base64") !== text) return null;
  if (opts.length !== undefined && bytes.length !== opts.length) return null;
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Characters in the canonical encoding of `n` bytes. */
export function encodedLength(n: number, form: Base64Form = "std"): number {
  return form === "url" ? Math.ceil((n * 8) / 6) : Math.ceil(n / 3) * 4;
}

/** An Ed25519 signature's bytes (RFC 8032). */
export const ED25519_SIGNATURE_BYTES = 64;
/** An Ed25519 public key's raw bytes. */
export const ED25519_PUBLIC_KEY_BYTES = 32;

/**
 * The DER inside a PEM block with `label` (RFC 7468's strict form), or null:
 * only whitespace around the block, `-----BEGIN label-----`, the body in
 * lines of 64 characters (the last 1–64) that join to canonical standard
 * Base64, `-----END label-----`. Lines may end in LF or CRLF.
 */
export function decodePem(text: string, label: string): Uint8Array | null {
  const lines = text.trim().split(/\r?\n/);
  if (lines.length < 3 || lines[0] !== `-----BEGIN ${label}-----` || lines.at(-1) !== `-----END ${label}-----`) return null;
  const body = lines.slice(1, -1);
  if (body.some((l, i) => l.length === 0 || l.length > 64 || (i < body.length - 1 && l.length !== 64))) return null;
  return decodeBase64Canonical(body.join(""));
}
