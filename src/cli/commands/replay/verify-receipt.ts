import { jsonDoc, type CommandDocs } from "../../../json-fields.ts";
import { UsageError } from "../../../errors/index.ts";
import { verifyReceipt, type SignatureState } from "../../../receipts/verify.ts";
import { stepKernelStats } from "../../../steps/kernel.ts";
import { receiptOutcome } from "../../../ci/receipt.ts";
import { ciModeOf } from "../../ci-flags.ts";
import { finishVerify, MULTI_VERDICT_FIELDS, verifyEach, type InputVerdict } from "../../ci-report.ts";
import { withInterrupts } from "../../interrupt.ts";
import { writeVerifyStats } from "../../output.ts";
import type { ReplayContext } from "./context.ts";
import { REPLAY_TARGETS, REPLAY_VERBS } from "./verbs.ts";
import { refuseInapplicableFlags } from "./flags.ts";

const USAGE = "usage: bernstein replay verify <RECEIPT>... [--head HEX] [--public-key KEY] [--format text|github] [--junit FILE]";

// Without --public-key nothing is said about who made the receipt: the prose says so whether or not it is signed.
const SIGNATURE_PROSE: Record<SignatureState, string> = {
  absent: "Signature: none, and NOT checked (no --public-key given); the receipt's origin is unverified",
  unchecked: "Signature: present but NOT checked (no --public-key given); the receipt's origin is unverified",
  valid: "Signature: valid (Ed25519 over the stored manifest bytes, by the --public-key key)",
  invalid: "Signature: INVALID",
};
const MISSING_PROSE = "Signature: MISSING (the receipt is unsigned but --public-key requires a signature)";

/**
 * `bernstein replay verify <RECEIPT>... [--head HEX] [--public-key KEY]`.
 * Exit 0 verified, 1 the chain does not verify or (with --public-key) the
 * signature is missing or invalid, 3 not a receipt / not found; with
 * several receipts, one verdict each and the worst exit code.
 */
export async function runVerifyReceipt(ctx: ReplayContext): Promise<number> {
  refuseInapplicableFlags(ctx, "verify", REPLAY_VERBS.verify!.flags);
  const receipts = ctx.positionals;
  if (receipts.length === 0) throw new UsageError(USAGE);
  if (ctx.args.head !== undefined && receipts.length > 1) {
    throw new UsageError(`--head names one receipt's head, but ${receipts.length} receipts were given`, "flag_not_applicable", { flags: ["--head"] });
  }
  const head = ctx.args.head;
  if (head !== undefined && !/^[0-9a-f]{64}$/.test(head)) {
    // A prefix would fail with two identical-looking shortened hashes in the message.
    throw new UsageError(`--head must be a full 64-hex head (got ${head.length} characters); a prefix is not accepted`);
  }
  const mode = ciModeOf(ctx.args, ctx.json);
  const reports = await verifyEach("receipt", receipts, (receipt) => verifyOne(ctx, receipt), mode.stdinName);
  return finishVerify(reports, { command: "replay verify", json: ctx.json, mode });
}

async function verifyOne(ctx: ReplayContext, receipt: string): Promise<InputVerdict> {
  const guard = { json: ctx.json, command: "replay verify", facts: () => ({ receipt }), doing: () => `verifying ${receipt}` };
  const v = await withInterrupts(guard, () => verifyReceipt(receipt, { expectedHead: ctx.args.head, publicKeyPath: ctx.args["public-key"], allowEmpty: ctx.args["allow-empty"] === true }));
  await writeVerifyStats(`steps by kernel ${stepKernelStats.rows} of ${v.steps}`);
  const sigLine = v.error === "signature_missing" ? MISSING_PROSE : SIGNATURE_PROSE[v.signature];
  const lines = v.ok
    ? [`Receipt verified: head=${v.head_hash} steps=${v.steps}`, sigLine]
    : [`Receipt failed verification (${v.errors.length} error(s)):`, ...v.errors.map((e) => `  - ${e}`), sigLine];
  const failure = v.ok ? {} : { error: v.error, detail: v.detail };
  return {
    ok: v.ok,
    lines,
    doc: {
      ok: v.ok,
      ...failure,
      head_hash: v.head_hash,
      steps: v.steps,
      errors: v.errors,
      signed: v.signed,
      signature: v.signature,
      signature_checked: v.signature_checked,
      bytes_read: v.bytes_read,
    },
    file: receipt,
    outcome: (base) => receiptOutcome(base, v),
  };
}

/** The document `verifyOne` builds (`replay verify --as-json`; docs/cli/replay.md). */
export const VERIFY_RECEIPT_DOCS: CommandDocs = {
  exits: { 0: "every receipt verifies", 1: "a chain, manifest, head or signature that does not verify", 3: "no such receipt, or one that is not a receipt (malformed, empty)" },
  json: [
    jsonDoc({ example: "bernstein replay verify receipt.tar" }, [
      ["ok", "boolean", "The receipt verifies: chain, manifest, head (--head) and signature (--public-key)"],
      ["error?", "string", "The first failed check: signature_missing, signature_invalid, chain_broken, manifest_mismatch or head_mismatch"],
      ["detail?", "string", "One line saying what failed"],
      ["head_hash", "string", "The receipt's step chain head"],
      ["steps", "number", "Steps in it"],
      ["errors", "string[]", "Every finding, one line each"],
      ["signed", "boolean", "The receipt carries a signature"],
      ["signature", "\"absent\" | \"unchecked\" | \"valid\" | \"invalid\"", "What is known of it (unchecked: no --public-key given)"],
      ["signature_checked", "boolean", "A --public-key was given and the signature rule applied"],
      ["bytes_read", "number", "Bytes of the receipt taken in"],
    ]),
    { when: "for more than one RECEIPT", fields: MULTI_VERDICT_FIELDS, example: "bernstein replay verify receipt.tar published.tar" },
  ],
};
