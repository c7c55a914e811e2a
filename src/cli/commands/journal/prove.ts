import { jsonDoc } from "../../../json-fields.ts";
import { UsageError } from "../../../errors/index.ts";
import { writeFileAtomic } from "../../../fsutil/atomic.ts";
import { checkOutputTarget } from "../../../fsutil/output-target.ts";
import { inclusionProofText, proveInclusion } from "../../../tlog/flows.ts";
import { defineCliCommand } from "../../command.ts";
import { printJson, printLines, writeStdout } from "../../output.ts";
import { optionalRunIdArgs, runsDirArgs } from "../../args.ts";

const USAGE = "usage: bernstein journal prove <RUN_ID> --index N [--checkpoint C] [--out PROOF] [--row-out ROW] [--sdd-dir DIR]";

export default defineCliCommand({
  docs: {
    json: [
      jsonDoc({ example: "bernstein journal prove $RUN --index 3 --out inclusion.proof" }, [
        ["ok?", "true", "The proof was built"],
        ["kind", "\"inclusion\"", "An inclusion proof"],
        ["index", "number", "The event's 0-based index"],
        ["size", "number", "The tree size it proves against"],
        ["root", "string", "That tree's Merkle root (base64)"],
        ["hashes", "string[]", "The audit path (base64)"],
        ["row", "object", "The event row"],
        ["path?", "string", "--out: the proof file"],
        ["row_path?", "string", "--out: the row file"],
      ]),
    ],
  },
  meta: { name: "prove", description: "Print an inclusion proof for one event (against the journal now, or an older --checkpoint)" },
  args: {
    ...optionalRunIdArgs,
    index: { type: "string", description: "0-based event index" },
    checkpoint: { type: "string", description: "Prove against this checkpoint's tree size and root" },
    out: { type: "string", description: "Write the proof to this file instead of stdout" },
    "row-out": { type: "string", description: "Write the event row to this file (default <out>.row with --out)" },
    ...runsDirArgs,
  },
  async run({ args, json }) {
    const words = args._.map(String);
    if (words.length !== 1 || args.index === undefined) throw new UsageError(USAGE);
    if (!/^(0|[1-9][0-9]*)$/.test(args.index)) throw new UsageError("--index must be a non-negative integer");
    const rowOut = args["row-out"] ?? (args.out ? `${args.out}.row` : undefined);
    // Both outputs are checked before either is written.
    if (args.out) checkOutputTarget(args.out, "the proof");
    if (rowOut) checkOutputTarget(rowOut, "the row");
    const proof = await proveInclusion(args["sdd-dir"] ?? ".sdd", words[0]!, Number(args.index), args.checkpoint);
    if (args.out) writeFileAtomic(args.out, inclusionProofText(proof));
    if (rowOut) writeFileAtomic(rowOut, proof.row + "\n");
    if (json) await printJson({ ...proof, ...(args.out ? { path: args.out } : {}), ...(rowOut ? { row_path: rowOut } : {}) });
    else if (args.out) await printLines(`inclusion proof of event ${proof.index} in ${proof.size} events: ${args.out} (row: ${rowOut})`);
    else await writeStdout(inclusionProofText(proof));
    return 0;
  },
});
