import { createPublicKey } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { InputError, UsageError } from "../errors/index.ts";
import { loadPublicKey, loadSigningKey } from "../receipts/keys.ts";
import type { Signer, TrustedKeys } from "../tlog/flows.ts";
import { repeated } from "./tlog-flags.ts";
import { NoteError, parseVerifierKey, rawPublicKey } from "../tlog/note.ts";

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
