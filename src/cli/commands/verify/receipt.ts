import { jsonDoc } from "../../../json-fields.ts";
import { receiptOutcome, verifyRunReceipt } from "../../../runreceipt/verify.ts";
import { defineCliCommand } from "../../command.ts";
import { withInterrupts } from "../../interrupt.ts";
import { printJson, printLines, writeStderr } from "../../output.ts";

/**
 * `bernstein verify receipt PATH [--public-key PEM]`: offline verification
 * of a run-receipt.json. Prose as upstream prints it; exit 0 ok, 1 tampered
 * (or a failed check of the full list), 3 malformed.
 */
export default defineCliCommand({
  docs: {
    exits: { 0: "the receipt verifies", 1: "tampered, or a check failed", 3: "malformed: not a run receipt" },
    json: [
      jsonDoc({ example: "bernstein verify receipt .sdd/runs/$RUN/run-receipt.json" }, [
        ["ok", "boolean", "Every check passed (status ok)"],
        ["error?", "string", "The error code (docs/errors.md), when not ok"],
        ["detail?", "string", "One line saying what failed, when not ok"],
        ["status", "\"ok\" | \"tampered\" | \"malformed\"", "Upstream's verdict"],
        ["run_id", "string | null", "The run the receipt is of"],
        ["journal_events", "number", "Journal rows in it"],
        ["spine_entries", "number", "Spine entries in it"],
        ["divergent_step", "number | null", "Tampered: the first journal step that does not check out"],
        ["errors", "string[]", "Every finding"],
        ["verdict", "string", "bernstein-mcp's verdict over the checks"],
        ["failing_check", "string | null", "The first check that failed"],
        ["summary", "object", "What the receipt says: run_id, schema_version, hash_profile, counts, key_id, producer …"],
        ["receipt_sha256", "string", "SHA-256 of the canonical bytes + newline"],
        ["receipt_canonical_sha256", "string", "SHA-256 of the canonical bytes"],
        ["binding", "object", "The binding block: {block, bytes_b64, sha256, pae_sha256}"],
        ["checks", "object[]", "Each check: {name, outcome: ok | fail | unverifiable | skipped, detail}"],
        ["key_trust", "string", "Where the verifying key came from (embedded, --public-key)"],
      ]),
    ],
  },
  meta: { name: "receipt", description: "Verify a run-receipt.json offline: embedded journal, spine, audit range, binding and Ed25519 signature" },
  args: {
    path: { type: "positional", required: true, description: "The run-receipt.json (- for standard input)" },
    "public-key": { type: "string", description: "PEM Ed25519 public key the embedded key must equal (else: trust on first use)" },
    vector: { type: "boolean", description: "PATH is a bernstein-mcp golden vector ({name, input, expected, ...}): verify its input" },
  },
  async run({ args, json }) {
    const path = String(args.path);
    const v = await withInterrupts({ json, command: "verify receipt", facts: () => ({ path }), doing: () => "reading the receipt" }, () =>
      verifyRunReceipt(path, { publicKeyPath: args["public-key"], vector: args.vector === true }),
    );
    const o = receiptOutcome(v);
    if (json) {
      const { ok, failure_code: _code, ...rest } = v;
      await printJson({ ok, ...(o.error ? { error: o.error, detail: o.detail } : {}), ...rest });
      return o.exitCode;
    }
    const lines = ["", `Run receipt run=${v.run_id ?? "(unknown)"} journal_events=${v.journal_events} spine_entries=${v.spine_entries}`];
    if (v.status === "ok" && v.ok) lines.push("OK -- every head recomputes from the embedded ranges; signature valid.");
    else if (v.status === "malformed") lines.push("MALFORMED -- the receipt cannot be checked:", ...v.errors.map((e) => `  - ${e}`));
    else if (v.status === "tampered") {
      lines.push("TAMPER DETECTED:", ...v.errors.map((e) => `  - ${e}`));
      if (v.divergent_step !== null) lines.push(`  first divergent journal step: ${v.divergent_step}`);
    } else lines.push("CHECK FAILED:", ...v.checks.filter((c) => c.outcome === "fail").map((c) => `  - ${c.name}: ${c.detail}`));
    await printLines(...lines);
    if (v.ok && v.key_trust === "embedded") {
      writeStderr("note: the signature was checked against the key embedded in the receipt (trust on first use); pass --public-key PEM to pin the signer\n");
    }
    return o.exitCode;
  },
});
