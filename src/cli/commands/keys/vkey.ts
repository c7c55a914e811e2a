import { jsonDoc } from "../../../json-fields.ts";
import { UsageError } from "../../../errors/index.ts";
import { formatVerifierKey, NoteError } from "../../../tlog/note.ts";
import { defineCliCommand } from "../../command.ts";
import { printJson, printLines } from "../../output.ts";
import { publicKeyOfFile } from "../../tlog-args.ts";

/** `bernstein keys vkey --key K --name N`: the C2SP verifier key text of a key. */
export default defineCliCommand({
  docs: {
    json: [
      jsonDoc({ example: "bernstein keys vkey --key keys/bernstein-receipt.pub --name bernstein/$RUN" }, [
        ["ok", "true", "The key was read"],
        ["name", "string", "The key name given"],
        ["vkey", "string", "The verifier key: name+id+base64"],
      ]),
    ],
  },
  meta: { name: "vkey", description: "Print the C2SP verifier key (name+id+base64) of a key, for --vkey and witnesses" },
  args: {
    key: { type: "string", description: "Private or public Ed25519 key file" },
    name: { type: "string", description: "Key name (for checkpoints: the log origin, e.g. bernstein/<RUN_ID>)" },
  },
  async run({ args, json }) {
    if (!args.key || !args.name) throw new UsageError("usage: bernstein keys vkey --key FILE --name NAME");
    let vkey: string;
    try {
      vkey = formatVerifierKey(args.name, publicKeyOfFile(args.key));
    } catch (err) {
      if (err instanceof NoteError) throw new UsageError(err.message);
      throw err;
    }
    if (json) await printJson({ ok: true, name: args.name, vkey });
    else await printLines(vkey);
    return 0;
  },
});
