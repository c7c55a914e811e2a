import { jsonDoc } from "../../../json-fields.ts";
import { UsageError } from "../../../errors/index.ts";
import { publishAnchor } from "../../../anchor/anchor.ts";
import { defineCliCommand } from "../../command.ts";
import { printJson, printLines, writeStderr } from "../../output.ts";
import { runIdArgs } from "../../args.ts";

/** `bernstein seal publish RUN_ID (--tsa-url URL | --token FILE)`: write <run>/seal_anchor.json. */
export default defineCliCommand({
  docs: {
    exits: { 0: "anchored", 1: "the TSA refused or could not be reached", 2: "refused (anchor_refused): the journal does not verify, disagrees with its seal.json, or the token witnesses another head", 3: "no such run, or a --token that is not a time-stamp token" },
    json: [
      jsonDoc({ example: "bernstein seal publish $RUN --token token.tsr" }, [
        ["ok", "true", "The anchor record was written"],
        ["anchor_kind", "\"rfc3161\"", "An RFC 3161 time-stamp"],
        ["head_sha256", "string", "The journal's recomputed head, the token's imprint"],
        ["rfc3161_token_b64", "string", "The time-stamp token (base64 DER)"],
        ["rfc3161_tsa_url", "string | null", "The TSA asked (null for --token without --tsa-url)"],
        ["run_id", "string", "The run"],
        ["schema_version", "string", "The record's schema"],
        ["path", "string", "The seal_anchor.json written"],
      ]),
    ],
  },
  meta: { name: "publish", description: "Anchor a run's recomputed journal head: ask a time-stamping authority (--tsa-url) or store a token (--token)" },
  args: {
    ...runIdArgs,
    "sdd-dir": { type: "string", default: ".sdd", description: "State directory (default .sdd)" },
    "tsa-url": { type: "string", description: "RFC 3161 time-stamping authority (http or https): the only network access; with --token only recorded" },
    token: { type: "string", description: "A DER TimeStampResp or TimeStampToken obtained elsewhere (offline)" },
    timeout: { type: "string", default: "30", description: "Seconds to wait for the TSA (default 30)" },
  },
  async run({ args, json }) {
    const timeout = Number(args.timeout ?? "30");
    if (!Number.isFinite(timeout) || timeout <= 0) throw new UsageError(`--timeout must be a positive number of seconds (got ${JSON.stringify(args.timeout)})`);
    const r = await publishAnchor({ sddDir: args["sdd-dir"] ?? ".sdd", runId: String(args.run_id), tsaUrl: args["tsa-url"], tokenPath: args.token, timeoutSeconds: timeout });
    if (r.note) writeStderr(r.note + "\n");
    if (json) {
      await printJson({ ok: true, ...r.record, path: r.path });
      return 0;
    }
    await printLines(`ANCHORED ${r.record.run_id} head ${r.record.head_sha256}`, `stored: ${r.path}`, `Confirm it with: bernstein seal verify ${r.record.run_id} --rfc3161-trusted-tsa-bundle <roots.pem>`);
    return 0;
  },
});
