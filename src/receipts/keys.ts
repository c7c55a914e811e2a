import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from "node:crypto";
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { InputError, UsageError } from "../errors/index.ts";
import { writeFileAtomic } from "../fsutil/atomic.ts";
import { sha256Hex } from "../steps/hash.ts";
import { decodeBase64Canonical, decodePem, ED25519_SIGNATURE_BYTES } from "../base64.ts";

/**
 * Ed25519 keys for receipt signatures (§2.3). A key file is PEM (PKCS#8
 * private / SPKI public; recognised by `-----BEGIN` after leading
 * whitespace) or the raw 32 bytes (a longer file is stripped first, so a
 * trailing newline is fine).
 */

// DER prefixes that wrap a raw 32-byte Ed25519 seed / public key.
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

const PY_WS = new Set([0x20, 0x09, 0x0a, 0x0b, 0x0c, 0x0d]);
/** Python `bytes.strip()` (ASCII whitespace). */
export function stripBytes(b: Buffer): Buffer {
  let s = 0;
  let e = b.length;
  while (s < e && PY_WS.has(b[s]!)) s++;
  while (e > s && PY_WS.has(b[e - 1]!)) e--;
  return b.subarray(s, e);
}

function isPem(b: Buffer): boolean {
  return stripBytes(b).subarray(0, 10).toString("latin1") === "-----BEGIN";
}

function readKeyFile(path: string, what: "signing" | "public"): Buffer {
  const code = what === "signing" ? "signing_key_unreadable" : "public_key_unreadable";
  // A key file is input: missing or unreadable is exit 3 like every other missing input.
  if (!existsSync(path)) throw new InputError(code, `${what === "signing" ? "signing" : "public"} key not found: ${path}`);
  try {
    return readFileSync(path);
  } catch (err) {
    throw new InputError(code, `cannot read ${what === "signing" ? "signing" : "public"} key ${path}: ${(err as Error).message}`);
  }
}

function raw32(data: Buffer, path: string, what: "private" | "public"): Buffer {
  const bytes = data.length > 32 ? stripBytes(data) : data;
  if (bytes.length !== 32) {
    throw new InputError(
      what === "private" ? "signing_key_unreadable" : "public_key_unreadable",
      what === "private"
        ? `raw Ed25519 private key must be 32 bytes (got ${bytes.length} from ${path})`
        : `raw Ed25519 public key must be 32 bytes, got ${bytes.length}`,
    );
  }
  return bytes;
}

export function loadSigningKey(path: string): KeyObject {
  const data = readKeyFile(path, "signing");
  let key: KeyObject;
  if (isPem(data)) {
    try {
      key = createPrivateKey({ key: data, format: "pem" });
    } catch (err) {
      throw new InputError("signing_key_unreadable", `invalid PEM private key ${path}: ${(err as Error).message}`);
    }
  } else {
    key = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, raw32(data, path, "private")]), format: "der", type: "pkcs8" });
  }
  if (key.asymmetricKeyType !== "ed25519") throw new InputError("signing_key_unreadable", `private key ${path} is not Ed25519`);
  return key;
}

export function loadPublicKey(path: string): KeyObject {
  const data = readKeyFile(path, "public");
  let key: KeyObject;
  if (isPem(data)) {
    try {
      key = createPublicKey({ key: data, format: "pem" });
    } catch (err) {
      throw new InputError("public_key_unreadable", `invalid PEM public key ${path}: ${(err as Error).message}`);
    }
  } else {
    key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw32(data, path, "public")]), format: "der", type: "spki" });
  }
  if (key.asymmetricKeyType !== "ed25519") throw new InputError("public_key_unreadable", `public key ${path} is not Ed25519`);
  const odd = isPem(data) ? nonCanonicalPublicPem(data.toString("latin1"), key) : null;
  if (odd !== null) throw new InputError("public_key_unreadable", `invalid PEM public key ${path}: ${odd}`);
  return key;
}

/**
 * Why the PEM text of Ed25519 public key `key` is not its one canonical
 * text, or null. OpenSSL's PEM reader skips stray characters and ignores
 * unused bits, so it is not trusted with that: the body must be canonical
 * Base64 of exactly the 44-byte SPKI DER of the key.
 */
export function nonCanonicalPublicPem(pem: string, key: KeyObject): string | null {
  const der = decodePem(pem, "PUBLIC KEY");
  if (der === null) return "not one canonical PUBLIC KEY block (64-character lines of canonical Base64, nothing else)";
  const spki = key.export({ format: "der", type: "spki" }) as Buffer;
  return spki.equals(der) ? null : `the DER is not exactly the ${spki.length}-byte Ed25519 SubjectPublicKeyInfo`;
}

/** `manifest.sig` content: standard Base64 (padded, no newline) of the Ed25519 signature. */
export function signManifest(key: KeyObject, manifestBytes: Uint8Array): string {
  return sign(null, manifestBytes, key).toString("base64");
}

/**
 * `manifest.sig` must be exactly what signManifest writes: canonical
 * standard Base64 of a 64-byte signature (padded, no newline, zero unused
 * bits). Python's decoder is lenient, so a malleated text (a trailing
 * newline, missing padding, stray bits) would still verify there; here it
 * fails like a wrong signature.
 */
export function verifyManifestSignature(key: KeyObject, manifestBytes: Uint8Array, sigText: string): boolean {
  const sig = decodeBase64Canonical(sigText, { length: ED25519_SIGNATURE_BYTES });
  if (sig === null) return false;
  try {
    return verify(null, manifestBytes, key, sig);
  } catch {
    return false;
  }
}

/** The raw 32-byte public key of an Ed25519 key (public or private). */
export function rawPublicKey(key: KeyObject): Buffer {
  const pub = key.type === "private" ? createPublicKey(key) : key;
  const der = pub.export({ format: "der", type: "spki" }) as Buffer;
  return der.subarray(der.length - 32);
}

export interface GeneratedKeyPair {
  private_key: string;
  public_key: string;
  /** SHA-256 (hex) of the raw public key, to compare out of band. */
  fingerprint: string;
}

/**
 * Write a new key pair: `<dir>/<name>.key` (PKCS#8 PEM, 0600) and
 * `<dir>/<name>.pub` (SPKI PEM, 0644). Existing files are never replaced:
 * each file is written to a temp name and hard-linked into place, which
 * fails if the name exists, even when another process races us.
 */
export function generateKeyPair(dir: string, name: string): GeneratedKeyPair {
  const privPath = join(dir, `${name}.key`);
  const pubPath = join(dir, `${name}.pub`);
  for (const p of [privPath, pubPath]) {
    if (existsSync(p)) throw new UsageError(`refusing to overwrite existing key file ${p}`, "key_exists");
  }
  mkdirSync(dir, { recursive: true });
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const privPem = privateKey.export({ format: "pem", type: "pkcs8" }) as string;
  const pubPem = publicKey.export({ format: "pem", type: "spki" }) as string;
  placeNew(privPath, privPem, 0o600);
  try {
    placeNew(pubPath, pubPem, 0o644);
  } catch (err) {
    unlinkSync(privPath);
    throw err;
  }
  return { private_key: privPath, public_key: pubPath, fingerprint: sha256Hex(rawPublicKey(publicKey)) };
}

function placeNew(path: string, data: string, mode: number): void {
  const staging = `${path}.new.${process.pid}`;
  writeFileAtomic(staging, data, { mode });
  try {
    linkSync(staging, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") throw new UsageError(`refusing to overwrite existing key file ${path}`, "key_exists");
    throw err;
  } finally {
    unlinkSync(staging);
  }
}
