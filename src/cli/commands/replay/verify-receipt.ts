import { UsageError } from "../../../errors.ts";
import { verifyReceipt, type SignatureState } from "../../../receipts/verify.ts";
import { stepKernelStats } from "../../../steps/kernel.ts";
import { printJson, printLines, writeVerifyStats } from "../../output.ts";
import type { ReplayContext } from "./context.ts";
import { refuseInapplicableFlags } from "./flags.ts";

const USAGE = "usage: bernstein replay verify <RECEIPT> [--head HEX] [--public-key KEY]";

// Without --public-key nothing is said about who made the receipt: the prose says so whether or not it is signed.
const SIGNATURE_PROSE: Record<SignatureState, string> = {
  absent: "Signature: none, and NOT checked (no --public-key given); the receipt's origin is unverified",
  unchecked: "Signature: present but NOT checked (no --public-key given); the receipt's origin is unverified",
  valid: "Signature: valid (Ed25519 over the stored manifest bytes, by the --public-key key)",
  invalid: "Signature: INVALID",
};
const MISSING_PROSE = "Signature: MISSING (the receipt is unsigned but --public-key requires a signature)";

/**
 * `bernstein replay verify <RECEIPT> [--head HEX] [--public-key KEY]`.
 * Exit 0 verified, 1 the chain does not verify or (with --public-key) the
 * signature is missing or invalid, 3 not a receipt / not found.
 */
export async function runVerifyReceipt(ctx: ReplayContext): Promise<number> {
  refuseInapplicableFlags(ctx, "verify", ["head", "public-key"]);
  const [receipt, ...extra] = ctx.positionals;
  if (receipt === undefined || extra.length > 0) throw new UsageError(USAGE);
  const v = await verifyReceipt(receipt, { expectedHead: ctx.args.head, publicKeyPath: ctx.args["public-key"] });
  await writeVerifyStats(`steps by kernel ${stepKernelStats.rows} of ${v.steps}`);
  if (ctx.json) {
    const failure = v.ok ? {} : { error: v.error, detail: v.detail };
    await printJson({
      ok: v.ok,
      ...failure,
      head_hash: v.head_hash,
      steps: v.steps,
      errors: v.errors,
      signed: v.signed,
      signature: v.signature,
      signature_checked: v.signature_checked,
    });
  } else {
    const sigLine = v.error === "signature_missing" ? MISSING_PROSE : SIGNATURE_PROSE[v.signature];
    if (v.ok) await printLines(`Receipt verified: head=${v.head_hash} steps=${v.steps}`, sigLine);
    else await printLines(`Receipt failed verification (${v.errors.length} error(s)):`, ...v.errors.map((e) => `  - ${e}`), sigLine);
  }
  return v.ok ? 0 : 1;
}
