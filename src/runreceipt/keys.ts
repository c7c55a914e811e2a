import { createPublicKey, verify, type KeyObject } from "node:crypto";
import type { PyObject, PyValue } from "../pyjson/types.ts";
import { pyRepr } from "../pyjson/python.ts";
import { dumps } from "../pyjson/encode.ts";
import { nonCanonicalPublicPem } from "../receipts/keys.ts";
import { decodeBase64Canonical, encodeBase64, ED25519_PUBLIC_KEY_BYTES, ED25519_SIGNATURE_BYTES } from "../base64.ts";

/**
 * The key material of a run receipt (spec §1.2, §1.9 rows 22–26): the
 * embedded Ed25519 JWK, an optional pinned PEM key, and the signature.
 */

/** base64url without padding (a JWK's `x`). */
export function encodeBase64Url(b: Uint8Array): string {
  return encodeBase64(b, "url");
}

export function keyFromRaw(raw: Uint8Array): KeyObject {
  return createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: encodeBase64Url(raw) }, format: "jwk" });
}

/** The embedded JWK's raw key, or the reason it is not a usable Ed25519 key (Python's texts). */
export function jwkRawKey(jwk: PyObject): { raw: Buffer } | { reason: string } {
  const kty = jwk.get("kty");
  const crv = jwk.get("crv");
  if (kty !== "OKP" || crv !== "Ed25519") return { reason: `expected kty=OKP, crv=Ed25519; got kty=${pyRepr(kty)} crv=${pyRepr(crv)}` };
  const x = jwk.get("x");
  if (typeof x !== "string") return { reason: "JWK 'x' missing or not a string" };
  // Canonical unpadded base64url only (RFC 8037 §2): one text per key.
  const raw = decodeBase64Canonical(x, { form: "url" });
  if (raw === null) return { reason: "JWK 'x' is not canonical unpadded base64url" };
  if (raw.length !== ED25519_PUBLIC_KEY_BYTES) return { reason: `Ed25519 public key must be 32 bytes (got ${raw.length})` };
  return { raw: Buffer.from(raw) };
}

/** A pinned key from PEM text: the key, or a malformed reason. */
export function pinnedKey(pem: string): { key: KeyObject } | { reason: string } {
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: "pem" });
  } catch (err) {
    return { reason: `pinned public key is not valid PEM: ${(err as Error).message}` };
  }
  if (key.asymmetricKeyType !== "ed25519") return { reason: `pinned public key is not Ed25519 (got ${key.asymmetricKeyType ?? "unknown"})` };
  const odd = nonCanonicalPublicPem(pem, key);
  if (odd !== null) return { reason: `pinned public key is not valid PEM: ${odd}` };
  return { key };
}

export function verifyEd25519(raw: Uint8Array, message: Uint8Array, sig: Uint8Array): boolean {
  if (sig.length !== ED25519_SIGNATURE_BYTES) return false;
  try {
    return verify(null, message, keyFromRaw(raw), sig);
  } catch {
    return false;
  }
}

export function isObject(v: PyValue | undefined): v is PyObject {
  return v instanceof Map;
}

/** `signature_b64`: canonical standard Base64 of exactly 64 bytes, else null. */
export function decodeSignature(text: string): Uint8Array | null {
  return decodeBase64Canonical(text, { length: ED25519_SIGNATURE_BYTES });
}

/** The algorithm name every producer writes for an Ed25519 key (RFC 8037). */
export const KEY_ALG = "EdDSA";
/** `signing.key_id` when the JWK names no `kid` (upstream's default). */
export const DEFAULT_KEY_ID = "run-receipt-key";

/** RFC 7638 thumbprint of the Ed25519 JWK of `raw`: base64url SHA-256 of its required members. */
export function jwkThumbprint(raw: Uint8Array): string {
  const members = `{"crv":"Ed25519","kty":"OKP","x":"${encodeBase64Url(raw)}"}`;
  return encodeBase64(new Uint8Array(Bun.SHA256.hash(members) as Uint8Array), "url");
}

const quoted = (v: PyValue | undefined) => (v === undefined ? "missing" : dumps(v, { ensureAscii: false }));

/**
 * Why the signing block's algorithm and key names do not belong to the
 * embedded key, or null. These members are outside the signed binding, so
 * they are checked against the key itself. `alg` (both places) must be
 * "EdDSA". The names take one of the two forms producers write:
 *   - a named key (bernstein `build_run_receipt`): `kid` is the configured
 *     name and `key_id` equals it, or, with no `kid`, `key_id` is
 *     "run-receipt-key";
 *   - a derived id (bernstein-attest): `kid` is the key's RFC 7638
 *     thumbprint and `key_id` is `<name>-<first 8 hex of SHA-256(x)>`.
 * A name cannot be derived from the key, so a named key's `kid` and
 * `key_id` changed together stay consistent; `--public-key` pins the key.
 */
export function keyMetadataProblem(signing: PyObject, jwk: PyObject, raw: Uint8Array): string | null {
  if (signing.get("alg") !== KEY_ALG) return `signing.alg is ${quoted(signing.get("alg"))}, not "${KEY_ALG}" (the algorithm of an Ed25519 key)`;
  if (jwk.get("alg") !== KEY_ALG) return `public_key_jwk.alg is ${quoted(jwk.get("alg"))}, not "${KEY_ALG}" (the algorithm of an Ed25519 key)`;
  const keyId = signing.get("key_id");
  const kid = jwk.get("kid");
  if (typeof keyId !== "string") return `signing.key_id is ${quoted(keyId)}, not a string`;
  if (kid === undefined || kid === null || kid === "") {
    return keyId === DEFAULT_KEY_ID ? null : `signing.key_id ${quoted(keyId)} names no key: the JWK has no kid, so it must be "${DEFAULT_KEY_ID}"`;
  }
  if (typeof kid !== "string") return `public_key_jwk.kid is ${quoted(kid)}, not a string`;
  if (kid === keyId) return null;
  const thumb = jwkThumbprint(raw);
  if (kid !== thumb) return `public_key_jwk.kid ${quoted(kid)} is neither signing.key_id ${quoted(keyId)} nor the key's RFC 7638 thumbprint`;
  const short = (Bun.SHA256.hash(encodeBase64Url(raw), "hex") as string).slice(0, 8);
  if (!keyId.endsWith(`-${short}`) || keyId.length <= short.length + 1) return `signing.key_id ${quoted(keyId)} does not name this key (expected <name>-${short})`;
  return null;
}
