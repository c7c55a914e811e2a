import { UsageError } from "../../../errors.ts";
import { verifyReceipt, type SignatureState } from "../../../receipts/verify.ts";
import { stepKernelStats } from "../../../steps/kernel.ts";
import { printJson, printLines, writeVerifyStats } from "../../output.ts";
import type { ReplayContext } from "./context.ts";
import { refuseInapplicableFlags } from "./flags.ts";

const USAGE = "usage: bernstein replay verify <RECEIPT> [--head HEX] [--public-key KEY]";

const SIGNATURE_PROSE: Record<SignatureState, string> = {
  absent: "Signature: none (the receipt is unsigned)",
  unchecked: "Signature: present but NOT checked (no --public-key given); the receipt's origin is unverified",
  valid: "Signature: valid (Ed25519, manifest)",
  invalid: "Signature: INVALID",
};

/**
 * `bernstein replay verify <RECEIPT> [--head HEX] [--public-key KEY]`.
 * Exit 0 verified, 1 the chain (or signature) does not verify, 3 not a
 * receipt / not found.
 */
export async function runVerifyReceipt(ctx: ReplayContext): Promise<number> {
  refuseInapplicableFlags(ctx, "verify", ["head", "public-key"]);
  const [receipt, ...extra] = ctx.positionals;
  if (receipt === undefined || extra.length > 0) throw new UsageError(USAGE);
  const v = await verifyReceipt(receipt, { expectedHead: ctx.args.head, publicKeyPath: ctx.args["public-key"] });
  await writeVerifyStats(`steps by kernel ${stepKernelStats.rows} of ${v.steps}`);
  if (ctx.json) {
    await printJson({ ok: v.ok, head_hash: v.head_hash, steps: v.steps, errors: v.errors, signed: v.signed, signature: v.signature, bytes_read: v.bytes_read });
  } else if (v.ok) {
    await printLines(`Receipt verified: head=${v.head_hash} steps=${v.steps}`, SIGNATURE_PROSE[v.signature]);
  } else {
    await printLines(`Receipt failed verification (${v.errors.length} error(s)):`, ...v.errors.map((e) => `  - ${e}`), SIGNATURE_PROSE[v.signature]);
  }
  return v.ok ? 0 : 1;
}
