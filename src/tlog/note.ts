import { createPublicKey, sign as edSign, verify as edVerify, type KeyObject } from "node:crypto";
import { decodeBase64Canonical } from "../base64.ts";
import { rawPublicKey } from "../receipts/keys.ts";

/** The raw 32-byte public key of an Ed25519 key (one helper, kept under this name for the tlog callers). */
export { rawPublicKey };

/**
 * C2SP signed notes (c2sp.org/signed-note), Ed25519 only (signature type 0x01):
 *
 *   <text ending in \n>
 *   <blank line>
 *   — <key name> base64(4-byte big-endian key ID ‖ 64-byte signature)\n   (one or more)
 *
 * key ID = SHA-256(name ‖ 0x0A ‖ 0x01 ‖ 32-byte public key)[:4]
 * verifier key text = name+hex(key ID)+base64(0x01 ‖ public key)
 */

const ED25519 = 0x01;
const SIG_PREFIX = "— "; // U+2014 EM DASH, space
/** C2SP: verifiers must accept at least 16 signatures; more than this is refused as abuse. */
export const MAX_SIGNATURES = 64;
const SPKI_ED25519 = Buffer.from("302a300506032b6570032100", "hex");

export class NoteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NoteError";
  }
}

export interface NoteSignature {
  name: string;
  keyId: number;
  /** The signature bytes after the key ID. */
  sig: Uint8Array;
}

export interface ParsedNote {
  text: string;
  signatures: NoteSignature[];
}

export interface VerifierKey {
  name: string;
  keyId: number;
  publicKey: Uint8Array;
}

function validName(name: string): boolean {
  return name.length > 0 && !/[\s+]/u.test(name);
}

export function keyIdOf(name: string, publicKey: Uint8Array): number {
  const enc = new TextEncoder().encode(name);
  const buf = new Uint8Array(enc.length + 2 + publicKey.length);
  buf.set(enc, 0);
  buf[enc.length] = 0x0a;
  buf[enc.length + 1] = ED25519;
  buf.set(publicKey, enc.length + 2);
  const h = Bun.SHA256.hash(buf) as Uint8Array;
  return ((h[0]! << 24) | (h[1]! << 16) | (h[2]! << 8) | h[3]!) >>> 0;
}

function hex8(n: number): string {
  return n.toString(16).padStart(8, "0");
}

/** `name+hex(keyID)+base64(0x01 ‖ pubkey)`. */
export function formatVerifierKey(name: string, publicKey: Uint8Array): string {
  if (!validName(name)) throw new NoteError(`invalid key name ${JSON.stringify(name)} (non-empty, no spaces, no '+')`);
  const typed = new Uint8Array(33);
  typed[0] = ED25519;
  typed.set(publicKey, 1);
  return `${name}+${hex8(keyIdOf(name, publicKey))}+${Buffer.from(typed).toString("base64")}`;
}

/** Parse verifier key text; split at the first two '+' only (base64 contains '+'). */
export function parseVerifierKey(text: string): VerifierKey {
  const t = text.trim();
  const a = t.indexOf("+");
  const b = a < 0 ? -1 : t.indexOf("+", a + 1);
  if (a < 0 || b < 0) throw new NoteError("verifier key must be name+keyid+base64");
  const name = t.slice(0, a);
  const idHex = t.slice(a + 1, b);
  const material = t.slice(b + 1);
  if (!validName(name)) throw new NoteError(`invalid key name in verifier key: ${JSON.stringify(name)}`);
  if (!/^[0-9a-f]{8}$/.test(idHex)) throw new NoteError("verifier key id must be 8 lowercase hex digits");
  const raw = decodeBase64Canonical(material);
  if (raw === null || raw.length !== 33 || raw[0] !== ED25519) throw new NoteError("verifier key is not an Ed25519 (type 0x01) key");
  const publicKey = raw.subarray(1);
  const keyId = parseInt(idHex, 16) >>> 0;
  if (keyIdOf(name, publicKey) !== keyId) throw new NoteError("verifier key id does not match its name and public key");
  return { name, keyId, publicKey };
}

function publicKeyObject(raw: Uint8Array): KeyObject {
  return createPublicKey({ key: Buffer.concat([SPKI_ED25519, Buffer.from(raw)]), format: "der", type: "spki" });
}

/** Parse a signed note. Throws NoteError for anything that is not one. */
export function parseNote(note: string): ParsedNote {
  if (!note.endsWith("\n")) throw new NoteError("a signed note must end with a newline");
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0009\u000b-\u001f]/.test(note)) throw new NoteError("a signed note must not contain control characters other than newline");
  const sep = note.lastIndexOf("\n\n");
  if (sep < 0) throw new NoteError("a signed note needs a blank line before its signatures");
  const text = note.slice(0, sep + 1);
  const sigLines = note.slice(sep + 2, -1).split("\n");
  if (sigLines.length > MAX_SIGNATURES) throw new NoteError(`too many signatures (more than ${MAX_SIGNATURES})`);
  const signatures: NoteSignature[] = [];
  for (const line of sigLines) {
    if (!line.startsWith(SIG_PREFIX)) throw new NoteError(`malformed signature line: ${JSON.stringify(line.slice(0, 80))}`);
    const rest = line.slice(SIG_PREFIX.length);
    const sp = rest.indexOf(" ");
    if (sp <= 0) throw new NoteError("malformed signature line: no key name");
    const name = rest.slice(0, sp);
    const raw = decodeBase64Canonical(rest.slice(sp + 1));
    if (!validName(name) || raw === null || raw.length < 5) throw new NoteError(`malformed signature line for ${JSON.stringify(name)}`);
    const keyId = ((raw[0]! << 24) | (raw[1]! << 16) | (raw[2]! << 8) | raw[3]!) >>> 0;
    signatures.push({ name, keyId, sig: raw.subarray(4) });
  }
  return { text, signatures };
}

/** Sign `text` (which must end in a newline) with each key; returns the whole note. */
export function signNote(text: string, signers: readonly { name: string; key: KeyObject }[], existing: readonly NoteSignature[] = []): string {
  if (!text.endsWith("\n")) throw new NoteError("note text must end with a newline");
  const lines: string[] = existing.map((s) => sigLine(s.name, s.keyId, s.sig));
  for (const { name, key } of signers) {
    const pub = rawPublicKey(key);
    const sig = new Uint8Array(edSign(null, Buffer.from(text, "utf8"), key));
    lines.push(sigLine(name, keyIdOf(name, pub), sig));
  }
  const note = `${text}\n${lines.join("")}`;
  parseNote(note); // never emit what we would refuse to read
  return note;
}

function sigLine(name: string, keyId: number, sig: Uint8Array): string {
  const raw = new Uint8Array(4 + sig.length);
  raw[0] = keyId >>> 24;
  raw[1] = (keyId >>> 16) & 0xff;
  raw[2] = (keyId >>> 8) & 0xff;
  raw[3] = keyId & 0xff;
  raw.set(sig, 4);
  return `${SIG_PREFIX}${name} ${Buffer.from(raw).toString("base64")}\n`;
}

export interface NoteVerdict {
  text: string;
  /** Names of the known keys whose signatures verified. */
  verified: string[];
  /** Names of known keys whose signatures failed. */
  failed: string[];
  /** Signature lines from keys we do not know (ignored, as C2SP requires). */
  unknown: number;
}

/**
 * Check a note's signatures against known keys (matched by name AND key ID;
 * others are ignored). The caller decides the policy; `openNote` applies
 * C2SP's: reject when a known signature fails or none verifies.
 */
export function checkNote(note: string, keys: readonly VerifierKey[]): NoteVerdict {
  const parsed = parseNote(note);
  const data = Buffer.from(parsed.text, "utf8");
  const verdict: NoteVerdict = { text: parsed.text, verified: [], failed: [], unknown: 0 };
  for (const s of parsed.signatures) {
    const key = keys.find((k) => k.name === s.name && k.keyId === s.keyId);
    if (!key) {
      verdict.unknown++;
      continue;
    }
    const good = s.sig.length === 64 && edVerify(null, data, publicKeyObject(key.publicKey), Buffer.from(s.sig));
    (good ? verdict.verified : verdict.failed).push(key.name);
  }
  return verdict;
}

/** Verify with C2SP's rules and return the text, or throw NoteError. */
export function openNote(note: string, keys: readonly VerifierKey[], minSignatures = 1): NoteVerdict {
  const v = checkNote(note, keys);
  if (v.failed.length > 0) throw new NoteError(`signature by ${v.failed.join(", ")} does not verify`);
  const distinct = new Set(v.verified).size;
  if (distinct === 0) throw new NoteError("no signature by a known key");
  if (distinct < minSignatures) throw new NoteError(`${distinct} known signature(s) verified, ${minSignatures} required`);
  return v;
}

/** A verifier key for every name that signed this note, given only a raw public key (no name known). */
export function keysForPublicKey(note: string, publicKey: Uint8Array): VerifierKey[] {
  const names = new Set(parseNote(note).signatures.map((s) => s.name));
  return [...names].map((name) => ({ name, keyId: keyIdOf(name, publicKey), publicKey }));
}
