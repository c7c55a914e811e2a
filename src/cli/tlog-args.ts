import { createPublicKey } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { InputError, UsageError } from "../errors.ts";
import { loadPublicKey, loadSigningKey } from "../receipts/keys.ts";
import type { Signer, TrustedKeys } from "../tlog/flows.ts";
import { NoteError, parseVerifierKey, rawPublicKey } from "../tlog/note.ts";

/** Flags of the seal/checkpoint/proof commands, declared once. */
export const keyArgs = {
  "public-key": { type: "string", description: "Trust signatures by this Ed25519 public key (PEM or raw; repeatable); a key given means a valid signature is required" },
  vkey: { type: "string", description: "Trust this verifier key, name+id+base64 text or a file holding it (repeatable)" },
  "trusted-key": { type: "string", description: "Another trusted verifier key, e.g. a witness (repeatable; same as --vkey)" },
  "min-signatures": { type: "string", description: "Distinct trusted keys that must have signed (default 1)" },
} as const;

export const signArgs = {
  sign: { type: "string", description: "Sign with this Ed25519 private key (from 'bernstein keys generate'; repeatable)" },
  "key-name": { type: "string", description: "Signer name in the signature line (default: the origin)" },
  origin: { type: "string", description: "Log origin line (default bernstein/<RUN_ID>)" },
} as const;

/** Every value of a repeatable flag (`--f v`, `--f=v`), in order. */
export function repeated(rawArgs: string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const a = rawArgs[i]!;
    if (a === "--") break;
    if (a === `--${name}`) {
      const v = rawArgs[++i];
      if (v !== undefined) out.push(v);
    } else if (a.startsWith(`--${name}=`)) out.push(a.slice(name.length + 3));
  }
  return out;
}

function vkeyText(value: string): string {
  return existsSync(value) ? readFileSync(value, "utf8").trim() : value;
}

export function trustedKeysFrom(rawArgs: string[]): TrustedKeys {
  const publicKeys = repeated(rawArgs, "public-key").map((p) => rawPublicKey(loadPublicKey(p)));
  const vkeys = [...repeated(rawArgs, "vkey"), ...repeated(rawArgs, "trusted-key")].map((v) => {
    try {
      return parseVerifierKey(vkeyText(v));
    } catch (err) {
      throw new InputError("public_key_unreadable", `invalid verifier key ${JSON.stringify(v.slice(0, 80))}: ${(err as NoteError).message}`);
    }
  });
  return { publicKeys, vkeys };
}

export function minSignaturesFrom(value: string | undefined): number {
  if (value === undefined) return 1;
  if (!/^[1-9][0-9]{0,2}$/.test(value)) throw new UsageError("--min-signatures must be a number from 1 to 999");
  return Number(value);
}

export function signersFrom(rawArgs: string[], defaultName: string, keyName?: string): Signer[] {
  const name = keyName ?? defaultName;
  if (name.length === 0 || /[\s+]/u.test(name)) {
    throw new UsageError(`invalid signer name ${JSON.stringify(name)}: no spaces or '+' (set --key-name)`);
  }
  return repeated(rawArgs, "sign").map((path) => ({ key: loadSigningKey(path), name }));
}

/** A key file's public half, from either a private or a public key file. */
export function publicKeyOfFile(path: string): Uint8Array {
  try {
    return rawPublicKey(createPublicKey(loadSigningKey(path)));
  } catch {
    return rawPublicKey(loadPublicKey(path));
  }
}
