import { jsonDoc } from "../../../json-fields.ts";
import { UsageError } from "../../../errors/index.ts";
import { verifyConsistencyFiles } from "../../../tlog/flows.ts";
import { defineCliCommand } from "../../command.ts";
import { printJson, printLines } from "../../output.ts";
import { keyArgs, minSignaturesFrom } from "../../tlog-flags.ts";
import { trustedKeysFrom } from "../../tlog-args.ts";

const USAGE = "usage: bernstein journal verify-consistency OLD_CHECKPOINT NEW_CHECKPOINT PROOF [--public-key K] [--vkey V] [--min-signatures N] [--remember]";

export default defineCliCommand({
  docs: {
    exits: { 0: "NEW extends OLD", 1: "it does not (forked, truncated), or a signature does not verify" },
    json: [
      jsonDoc({ example: "bernstein journal verify-consistency .sdd/runs/$RUN/seal.note .sdd/runs/$RUN/checkpoint consistency.proof --public-key keys/bernstein-receipt.pub" }, [
        ["ok", "boolean", "NEW extends OLD and both carry enough trusted signatures"],
        ["error?", "string", "The error code (docs/errors.md), when not ok"],
        ["detail?", "string", "One line saying what failed, when not ok"],
        ["consistency", "\"extends\" | \"forked\" | \"truncated\" | null", "How NEW relates to OLD"],
        ["origin", "string", "The log origin line"],
        ["old_size", "number", "OLD's tree size"],
        ["new_size", "number", "NEW's tree size"],
        ["old", "object", "OLD's signatures: {signature, signed_by, ignored_signatures}"],
        ["new", "object", "NEW's signatures, the same"],
        ["remembered", "boolean", "--remember: NEW was kept as the last verified checkpoint"],
      ]),
    ],
  },
  meta: { name: "verify-consistency", description: "Check offline that NEW extends OLD (two checkpoints and a consistency proof; no journal needed)" },
  args: {
    ...keyArgs,
    remember: { type: "boolean", description: "Keep NEW as the last verified checkpoint of its origin and refuse later ones not consistent with it" },
  },
  async run({ args, json, rawArgs }) {
    const words = args._.map(String);
    if (words.length !== 3) throw new UsageError(USAGE);
    const r = verifyConsistencyFiles(words[0]!, words[1]!, words[2]!, trustedKeysFrom(rawArgs), {
      minSignatures: minSignaturesFrom(args["min-signatures"]),
      remember: Boolean(args.remember),
    });
    if (json) await printJson(r);
    else {
      const sig = r.new.signature === "valid" ? `signed by ${r.new.signed_by.join(", ")}` : "signatures unchecked (no --public-key/--vkey given)";
      await printLines(`consistent: ${r.origin} grew from ${r.old_size} to ${r.new_size} events (append-only between these two checkpoints); ${sig}`);
    }
    return 0;
  },
});
