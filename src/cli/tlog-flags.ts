import { UsageError } from "../errors/index.ts";

/**
 * Flags of the seal, checkpoint and proof commands, declared once. Kept
 * apart from tlog-args.ts (which loads keys and node:crypto) so `journal
 * verify` declares them without paying that start-up cost on every run.
 */
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

export function minSignaturesFrom(value: string | undefined): number {
  if (value === undefined) return 1;
  if (!/^[1-9][0-9]{0,2}$/.test(value)) throw new UsageError("--min-signatures must be a number from 1 to 999");
  return Number(value);
}
