import { jsonDoc } from "../../../json-fields.ts";
import { UsageError } from "../../../errors/index.ts";
import { writeFileAtomic } from "../../../fsutil/atomic.ts";
import { checkOutputTarget } from "../../../fsutil/output-target.ts";
import { consistencyProofText, proveConsistency } from "../../../tlog/flows.ts";
import { defineCliCommand } from "../../command.ts";
import { printJson, printLines, writeStdout } from "../../output.ts";
import { optionalRunIdArgs, runsDirArgs } from "../../args.ts";

const USAGE = "usage: bernstein journal prove-consistency <RUN_ID> --from OLD_CHECKPOINT [--out PROOF] [--sdd-dir DIR]";

export default defineCliCommand({
  docs: {
    json: [
      jsonDoc({ example: "bernstein journal prove-consistency $RUN --from .sdd/runs/$RUN/seal.note --out consistency.proof" }, [
        ["ok?", "true", "The proof was built"],
        ["kind", "\"consistency\"", "A consistency proof"],
        ["origin", "string", "The log origin line"],
        ["old_size", "number", "The older tree's size"],
        ["new_size", "number", "The tree's size now"],
        ["old_root", "string", "The older root (base64)"],
        ["new_root", "string", "The root now (base64)"],
        ["hashes", "string[]", "The proof (base64)"],
        ["path?", "string", "--out: the proof file"],
      ]),
    ],
  },
  meta: { name: "prove-consistency", description: "Print the RFC 9162 consistency proof from an older checkpoint or seal note to the journal now" },
  args: {
    ...optionalRunIdArgs,
    from: { type: "string", description: "The older checkpoint (or seal.note)" },
    out: { type: "string", description: "Write the proof to this file instead of stdout" },
    ...runsDirArgs,
  },
  async run({ args, json }) {
    const words = args._.map(String);
    if (words.length !== 1 || !args.from) throw new UsageError(USAGE);
    if (args.out) checkOutputTarget(args.out, "the proof");
    const proof = await proveConsistency(args["sdd-dir"] ?? ".sdd", words[0]!, args.from);
    if (args.out) writeFileAtomic(args.out, consistencyProofText(proof));
    if (json) await printJson(args.out ? { ...proof, path: args.out } : proof);
    else if (args.out) await printLines(`consistency proof ${proof.old_size} -> ${proof.new_size} events (${proof.hashes.length} hashes): ${args.out}`);
    else await writeStdout(consistencyProofText(proof));
    return 0;
  },
});
