import { jsonDoc } from "../../../json-fields.ts";
import { UsageError } from "../../../errors/index.ts";
import { verifyInclusionFiles } from "../../../tlog/flows.ts";
import { defineCliCommand } from "../../command.ts";
import { printJson, printLines } from "../../output.ts";
import { keyArgs, minSignaturesFrom } from "../../tlog-flags.ts";
import { trustedKeysFrom } from "../../tlog-args.ts";

const USAGE = "usage: bernstein journal verify-inclusion CHECKPOINT PROOF ROW [--public-key K] [--vkey V] [--min-signatures N]";

export default defineCliCommand({
  docs: {
    exits: { 0: "the row is in the tree", 1: "it is not, or a signature does not verify" },
    json: [
      jsonDoc({ example: "bernstein journal verify-inclusion .sdd/runs/$RUN/checkpoint inclusion.proof inclusion.proof.row --public-key keys/bernstein-receipt.pub" }, [
        ["ok", "boolean", "The row, rehashed at its index, is in the checkpoint's tree"],
        ["error?", "string", "The error code (docs/errors.md), when not ok"],
        ["detail?", "string", "One line saying what failed, when not ok"],
        ["included?", "boolean", "The same, as upstream names it"],
        ["origin?", "string", "The log origin line"],
        ["index?", "number", "The row's index"],
        ["size", "number", "The checkpoint's tree size"],
        ["event_hash?", "string", "The row's hash, recomputed"],
        ["signature?", "object", "The checkpoint's signatures: {signature, signed_by, ignored_signatures}"],
      ]),
    ],
  },
  meta: { name: "verify-inclusion", description: "Check offline that an event row (rehashed at its index) is in a checkpoint's tree" },
  args: { ...keyArgs },
  async run({ args, json, rawArgs }) {
    const words = args._.map(String);
    if (words.length !== 3) throw new UsageError(USAGE);
    const r = verifyInclusionFiles(words[0]!, words[1]!, words[2]!, trustedKeysFrom(rawArgs), {
      minSignatures: minSignaturesFrom(args["min-signatures"]),
    });
    if (json) await printJson(r);
    else {
      const sig = r.signature.signature === "valid" ? `signed by ${r.signature.signed_by.join(", ")}` : "signature unchecked (no --public-key/--vkey given)";
      await printLines(`included: event ${r.index} (${r.event_hash}) is in ${r.origin} at size ${r.size}; ${sig}`);
    }
    return 0;
  },
});
