import { jsonDoc } from "../../../json-fields.ts";
import { UsageError } from "../../../errors/index.ts";
import { defaultOrigin, writeCheckpoint } from "../../../tlog/flows.ts";
import { defineCliCommand } from "../../command.ts";
import { printJson, printLines } from "../../output.ts";
import { signArgs } from "../../tlog-flags.ts";
import { signersFrom } from "../../tlog-args.ts";
import { optionalRunIdArgs, runsDirArgs } from "../../args.ts";

const USAGE = "usage: bernstein journal checkpoint <RUN_ID> --sign KEY [--origin O] [--key-name N] [--out FILE] [--sdd-dir DIR]";

export default defineCliCommand({
  docs: {
    json: [
      jsonDoc({ example: "bernstein journal checkpoint $RUN --sign keys/bernstein-receipt.key" }, [
        ["ok", "true", "The checkpoint was written"],
        ["run_id", "string", "The run"],
        ["origin", "string", "The log origin line"],
        ["size", "number", "The tree's size (events)"],
        ["root", "string", "Its Merkle root (base64)"],
        ["head", "string", "The journal's head hash"],
        ["path", "string", "The checkpoint file"],
        ["extends_size", "number | null", "The size of the checkpoint it replaced, which it extends"],
      ]),
    ],
  },
  meta: {
    name: "checkpoint",
    description: "Write a signed C2SP checkpoint (origin, size, RFC 6962 root over the recomputed event hashes) to <run_dir>/checkpoint",
  },
  args: {
    ...optionalRunIdArgs,
    ...signArgs,
    out: { type: "string", description: "Checkpoint file (default <run_dir>/checkpoint); an existing one must be a prefix of the new tree" },
    ...runsDirArgs,
  },
  async run({ args, json, rawArgs }) {
    const words = args._.map(String);
    if (words.length !== 1) throw new UsageError(USAGE);
    const runId = words[0]!;
    const origin = args.origin ?? defaultOrigin(runId);
    const signers = signersFrom(rawArgs, origin, args["key-name"]);
    if (signers.length === 0) throw new UsageError(`${USAGE}\n(--sign is required: a checkpoint is a signed note)`);
    const r = await writeCheckpoint(args["sdd-dir"] ?? ".sdd", runId, signers, { origin: args.origin, out: args.out });
    if (json) await printJson(r);
    else {
      await printLines(
        `checkpoint of run ${runId}: ${r.size} events, root ${r.root}${r.extends_size !== null ? ` (extends the previous ${r.extends_size})` : ""}`,
        `checkpoint: ${r.path}`,
      );
    }
    return 0;
  },
});
