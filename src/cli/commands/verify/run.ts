import { jsonDoc } from "../../../json-fields.ts";
import { join } from "node:path";
import { UsageError } from "../../../errors/index.ts";
import { loadOrCreateAuditKey } from "../../../runreceipt/audit.ts";
import { buildRunReceipt } from "../../../runreceipt/build.ts";
import { resolveSigningKey } from "../../../runreceipt/signing-key.ts";
import { defineCliCommand } from "../../command.ts";
import { withInterrupts } from "../../interrupt.ts";
import { printJson, printLines } from "../../output.ts";
import { runIdArgs } from "../../args.ts";

const short = (h: string) => `${h.slice(0, 16)}\u2026`;

/** `bernstein verify run RUN_ID --signing-key-path K`: write a signed run-receipt.json of one of our runs. */
export default defineCliCommand({
  docs: {
    exits: { 0: "written", 2: "refused: a journal or spine that does not verify is never signed", 3: "no such run or key" },
    json: [
      jsonDoc({ example: "bernstein verify run $RUN --signing-key-path keys/bernstein-receipt.key" }, [
        ["ok", "true", "The signed run receipt was written"],
        ["path", "string", "The run-receipt.json"],
        ["run_id", "string", "The run"],
        ["journal_head", "string", "The journal's head hash"],
        ["journal_events", "number", "Journal rows embedded"],
        ["spine_head", "string", "The lineage spine's head (\"\" when none)"],
        ["spine_entries", "number", "Spine entries embedded"],
        ["audit_range_head", "string | null", "--include-audit-range: the audit range's head"],
        ["audit_events", "number | null", "--include-audit-range: its events"],
        ["receipt_sha256", "string", "SHA-256 of the receipt file"],
        ["key_id", "string", "The signing key's id"],
      ]),
    ],
  },
  meta: { name: "run", description: "Write a signed run-receipt.json of a run (journal, lineage spine, optional audit range)" },
  args: {
    ...runIdArgs,
    workdir: { type: "string", alias: ["w"], description: "Project root; its .sdd is used (default .)" },
    "sdd-dir": { type: "string", description: "State directory (default <workdir>/.sdd)" },
    "signing-key-path": { type: "string", description: "Ed25519 private key file: PEM PKCS#8 or a raw 32-byte seed" },
    "signing-env-var": { type: "string", description: "Name of an environment variable holding a PEM Ed25519 private key" },
    "signing-key-id": { type: "string", description: "Key id (JWK kid) written into the receipt (default run-receipt-key)" },
    "include-audit-range": { type: "boolean", description: "Embed the audit events of [--audit-since, --audit-until), re-chained (needs the audit key)" },
    "audit-since": { type: "string", description: "ISO-8601 lower bound (inclusive) of the audit range" },
    "audit-until": { type: "string", description: "ISO-8601 upper bound (exclusive) of the audit range" },
    output: { type: "string", alias: ["o"], description: "Output file (default <sdd-dir>/runs/<RUN_ID>/run-receipt.json)" },
  },
  async run({ args, json }) {
    const since = args["audit-since"];
    const until = args["audit-until"];
    if (args["include-audit-range"] && (!since || !until)) throw new UsageError("--include-audit-range requires --audit-since and --audit-until.");
    if (!args["include-audit-range"] && (since || until)) throw new UsageError("--audit-since/--audit-until apply only with --include-audit-range", "flag_not_applicable");
    const { key, keyId } = resolveSigningKey({ path: args["signing-key-path"], envVar: args["signing-env-var"], keyId: args["signing-key-id"] });
    const sddDir = args["sdd-dir"] ?? join(args.workdir ?? ".", ".sdd");
    const audit = args["include-audit-range"] ? { since: since!, until: until!, key: loadOrCreateAuditKey() } : null;
    const runId = String(args.run_id);
    const r = await withInterrupts({ json, command: "verify run", facts: () => ({ run_id: runId, written: false }), doing: () => "reading the journal to sign its receipt" }, () =>
      buildRunReceipt({ sddDir, runId, key, keyId, audit, out: args.output }),
    );
    if (json) {
      await printJson({ ok: true, ...r });
      return 0;
    }
    await printLines(
      "",
      "Run Receipt: WRITTEN",
      `  Run ID            ${r.run_id}`,
      `  Journal head      ${short(r.journal_head)}`,
      `  Spine head        ${r.spine_head ? short(r.spine_head) : "(no spine entries)"}`,
      ...(r.audit_range_head ? [`  Audit range head  ${short(r.audit_range_head)}`] : []),
      `  Receipt SHA-256   ${short(r.receipt_sha256)}`,
      `  Receipt           ${r.path}`,
      `  Verify offline with: bernstein verify receipt ${r.path} [--public-key PEM]`,
      "",
    );
    return 0;
  },
});
