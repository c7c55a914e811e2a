import { createPublicKey, verify, type KeyObject } from "node:crypto";
import type { PyObject, PyValue } from "../pyjson/types.ts";
import { pyRepr } from "../pyjson/python.ts";

/**
 * The key material of a run receipt (spec §1.2, §1.9 rows 22–26): the
 * embedded Ed25519 JWK, an optional pinned PEM key, and the signature.
 */

/** Python's `urlsafe_b64decode(x + padding)`: characters outside the alphabet are dropped. */
export function decodeBase64Url(x: string): Buffer {
  const std = x.replace(/-/g, "+").replace(/_/g, "/").replace(/[^A-Za-z0-9+/=]/g, "");
  return Buffer.from(std.replace(/=+$/, ""), "base64");
}

/** base64url without padding (a JWK's `x`). */
export function encodeBase64Url(b: Uint8Array): string {
  return Buffer.from(b).toString("base64url");
}

const STRICT_B64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** `b64decode(s, validate=True)`: null when the text is not strict standard Base64. */
export function decodeBase64Strict(s: string): Buffer | null {
  if (!STRICT_B64.test(s)) return null;
  return Buffer.from(s, "base64");
}

export function keyFromRaw(raw: Uint8Array): KeyObject {
  return createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: encodeBase64Url(raw) }, format: "jwk" });
}

export function rawOfKey(key: KeyObject): Buffer {
  const jwk = key.export({ format: "jwk" }) as { x?: string };
  return decodeBase64Url(jwk.x ?? "");
}

/** The embedded JWK's raw key, or the reason it is not a usable Ed25519 key (Python's texts). */
export function jwkRawKey(jwk: PyObject): { raw: Buffer } | { reason: string } {
  const kty = jwk.get("kty");
  const crv = jwk.get("crv");
  if (kty !== "OKP" || crv !== "Ed25519") return { reason: `expected kty=OKP, crv=Ed25519; got kty=${pyRepr(kty)} crv=${pyRepr(crv)}` };
  const x = jwk.get("x");
  if (typeof x !== "string") return { reason: "JWK 'x' missing or not a string" };
  const raw = decodeBase64Url(x);
  if (raw.length !== 32) return { reason: `Ed25519 public key must be 32 bytes (got ${raw.length})` };
  return { raw };
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
  return { key };
}

export function verifyEd25519(raw: Uint8Array, message: Uint8Array, sig: Uint8Array): boolean {
  if (sig.length !== 64) return false;
  try {
    return verify(null, message, keyFromRaw(raw), sig);
  } catch {
    return false;
  }
}

export function isObject(v: PyValue | undefined): v is PyObject {
  return v instanceof Map;
}
