import { createPrivateKey, type KeyObject } from "node:crypto";
import { InputError, UsageError } from "../errors/index.ts";
import { loadSigningKey } from "../receipts/keys.ts";

/**
 * The receipt signing key (spec §1.1, §1.10): `--signing-key-path` (PEM
 * PKCS#8 or a raw 32-byte seed) or `--signing-env-var NAME` (a variable
 * holding a PEM private key), else `$BERNSTEIN_RUN_RECEIPT_SIGNING_KEY_PATH`
 * / `$BERNSTEIN_RUN_RECEIPT_SIGNING_ENV_VAR`; the kid from
 * `--signing-key-id` or `$BERNSTEIN_RUN_RECEIPT_SIGNING_KID`. Every value is
 * whitespace-stripped; empty means unset.
 */
export interface SigningKeyRequest {
  path?: string;
  envVar?: string;
  keyId?: string;
}

const val = (s: string | undefined) => (s ?? "").trim() || undefined;

export function resolveSigningKey(req: SigningKeyRequest, env: NodeJS.ProcessEnv = process.env): { key: KeyObject; keyId?: string } {
  if (val(req.path) && val(req.envVar)) throw new UsageError("--signing-key-path and --signing-env-var are mutually exclusive.");
  const path = val(req.path) ?? (val(req.envVar) ? undefined : val(env.BERNSTEIN_RUN_RECEIPT_SIGNING_KEY_PATH));
  const envVar = val(req.envVar) ?? (path ? undefined : val(env.BERNSTEIN_RUN_RECEIPT_SIGNING_ENV_VAR));
  const keyId = val(req.keyId) ?? val(env.BERNSTEIN_RUN_RECEIPT_SIGNING_KID);
  if (path) {
    try {
      return { key: loadSigningKey(path), keyId };
    } catch (err) {
      throw new InputError("signing_key_unreadable", `Failed to load receipt signing key: ${(err as Error).message}`, { path });
    }
  }
  if (envVar) {
    const pem = val(env[envVar]);
    if (!pem) throw new InputError("signing_key_unreadable", `Failed to load receipt signing key: environment variable ${envVar} is not set or empty`);
    let key: KeyObject;
    try {
      key = createPrivateKey({ key: pem, format: "pem" });
    } catch (err) {
      throw new InputError("signing_key_unreadable", `Failed to load receipt signing key: ${(err as Error).message}`);
    }
    if (key.asymmetricKeyType !== "ed25519") throw new InputError("signing_key_unreadable", `Failed to load receipt signing key: the key in ${envVar} is not Ed25519`);
    return { key, keyId };
  }
  throw new UsageError(
    "No signing key configured. Provide --signing-key-path or --signing-env-var (or set $BERNSTEIN_RUN_RECEIPT_SIGNING_KEY_PATH / $BERNSTEIN_RUN_RECEIPT_SIGNING_ENV_VAR).",
    "signing_key_missing",
  );
}
