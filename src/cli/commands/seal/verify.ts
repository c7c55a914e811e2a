import { jsonDoc } from "../../../json-fields.ts";
import { verifyAnchor } from "../../../anchor/anchor.ts";
import type { ErrorCode } from "../../../errors/index.ts";
import { defineCliCommand } from "../../command.ts";
import { printJson, printLines } from "../../output.ts";
import { runIdArgs } from "../../args.ts";

const CODES: Record<string, ErrorCode> = { mismatched: "anchor_mismatched", unverifiable: "anchor_unverifiable", invalid: "anchor_invalid" };

/** `bernstein seal verify RUN_ID [--rfc3161-trusted-tsa-bundle PEM]`: never opens a socket; exit 0 only for verified. */
export default defineCliCommand({
  docs: {
    exits: { 0: "verified", 1: "mismatched, unverifiable or invalid", 3: "no such run, no seal_anchor.json, or a bundle with no PEM certificate" },
    json: [
      jsonDoc({ example: "bernstein seal verify $RUN --rfc3161-trusted-tsa-bundle tsa-roots.pem" }, [
        ["ok", "boolean", "status is verified"],
        ["error?", "string", "anchor_mismatched, anchor_unverifiable or anchor_invalid"],
        ["detail?", "string", "The first finding"],
        ["run_id", "string", "The run"],
        ["status", "\"verified\" | \"mismatched\" | \"unverifiable\" | \"invalid\"", "The anchor's verdict (unverifiable: no bundle given)"],
        ["head_sha256", "string", "The journal's recomputed head"],
        ["anchored_head_sha256", "string", "The head the anchor commits to"],
        ["gen_time", "string | null", "The token's time"],
        ["tsa_subject", "string | null", "The TSA certificate's subject"],
        ["tsa_url", "string | null", "The TSA recorded"],
        ["errors", "string[]", "Every finding"],
      ]),
    ],
  },
  meta: { name: "verify", description: "Check a run's seal_anchor.json offline against its journal and trusted TSA roots (exit 0 only when verified)" },
  args: {
    ...runIdArgs,
    "sdd-dir": { type: "string", default: ".sdd", description: "State directory (default .sdd)" },
    "rfc3161-trusted-tsa-bundle": { type: "string", description: "PEM bundle of trusted TSA (root) certificates; without it the verdict is unverifiable" },
  },
  async run({ args, json }) {
    const v = await verifyAnchor({ sddDir: args["sdd-dir"] ?? ".sdd", runId: String(args.run_id), bundlePath: args["rfc3161-trusted-tsa-bundle"] });
    const ok = v.status === "verified";
    if (json) {
      await printJson({ ok, ...(ok ? {} : { error: CODES[v.status], detail: v.errors[0] ?? v.status }), ...v });
    } else {
      const lines = [`${v.status.toUpperCase()} anchor for ${v.run_id}`];
      if (v.gen_time && ok) lines.push(`witnessed at ${v.gen_time} by ${v.tsa_subject}`);
      lines.push(...v.errors.map((e) => `  ${e}`));
      await printLines(...lines);
    }
    return ok ? 0 : 1;
  },
});
