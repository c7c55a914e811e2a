import type { ReceiptVerdict } from "../receipts/verify.ts";
import { untrusted, type CiOutcome, type OutcomeBase } from "./outcome.ts";

/** A receipt's verdict as a CI outcome: each verification error is one problem on the archive as a whole. */
export function receiptOutcome(base: OutcomeBase, v: ReceiptVerdict): CiOutcome {
  const errors = v.errors.map((e) => untrusted(e, 500));
  const verdict = v.ok
    ? `verified: ${v.steps} steps, head ${v.head_hash || "(empty)"}; signature ${v.signature}`
    : `FAILED (${errors.length} error${errors.length === 1 ? "" : "s"}): ${errors[0] ?? "verification failed"}`;
  return {
    ...base,
    status: v.ok ? "verified" : "failed",
    exitCode: v.ok ? 0 : 1,
    verdict,
    head: v.head_hash,
    count: v.steps,
    problems: errors.map((message) => ({ title: "Receipt verification failed", message, line: null })),
    error: null,
  };
}
