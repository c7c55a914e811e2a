import { UsageError } from "../../../errors/index.ts";
import { verifyInclusionFiles } from "../../../tlog/flows.ts";
import { defineCliCommand } from "../../command.ts";
import { printJson, printLines } from "../../output.ts";
import { keyArgs, minSignaturesFrom } from "../../tlog-flags.ts";
import { trustedKeysFrom } from "../../tlog-args.ts";

const USAGE = "usage: bernstein journal verify-inclusion CHECKPOINT PROOF ROW [--public-key K] [--vkey V] [--min-signatures N]";

export default defineCliCommand({
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
