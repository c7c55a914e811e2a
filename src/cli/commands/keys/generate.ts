import { jsonDoc } from "../../../json-fields.ts";
import { UsageError } from "../../../errors/index.ts";
import { generateKeyPair } from "../../../receipts/keys.ts";
import { defineCliCommand } from "../../command.ts";
import { printJson, printLines } from "../../output.ts";

const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** `bernstein keys generate [--out-dir D] [--name N]`: an Ed25519 pair for `--sign` / `--public-key`. */
export default defineCliCommand({
  docs: {
    exits: { 2: "refused: a key file is already there" },
    json: [
      jsonDoc({ example: "bernstein keys generate --out-dir my-keys" }, [
        ["ok", "true", "The pair was written"],
        ["private_key", "string", "The private key file (0600)"],
        ["public_key", "string", "The public key file"],
        ["fingerprint", "string", "SHA-256 (hex) of the raw public key"],
      ]),
    ],
  },
  meta: { name: "generate", description: "Generate an Ed25519 key pair for signing receipts" },
  args: {
    "out-dir": { type: "string", default: ".", description: "Directory for the key files (created if missing)" },
    name: { type: "string", default: "bernstein-receipt", description: "Base name: writes <name>.key (private, 0600) and <name>.pub" },
  },
  async run({ args, json }) {
    const name = args.name ?? "bernstein-receipt";
    if (!NAME.test(name) || name === "." || name === "..") {
      throw new UsageError(`invalid key name ${JSON.stringify(name)}: use 1-64 characters from A-Z a-z 0-9 _ . -`);
    }
    const pair = generateKeyPair(args["out-dir"] ?? ".", name);
    if (json) {
      await printJson({ ok: true, ...pair });
    } else {
      await printLines(
        `Wrote private key ${pair.private_key} (PKCS#8 PEM, mode 0600: keep it secret; use with --sign)`,
        `Wrote public key  ${pair.public_key} (SPKI PEM; give it to verifiers for --public-key)`,
        `  fingerprint (sha256 of the raw public key): ${pair.fingerprint}`,
      );
    }
    return 0;
  },
});
