import { GENESIS_HASH } from "../steps/hash.ts";
import type { StepKernel } from "../steps/kernel.ts";
import { StepKey } from "../steps/row-keys.ts";
import type { PathLeakScanner } from "./path-leaks.ts";

/**
 * Publish's byte path (§5): the step kernel's publish mode (kernel.wat
 * `$publishRow`) redacts and re-chains each row it takes in dict form
 * from its value spans, without parsing, and writes the published line
 * into its publish area: the policy's non-null fields become
 * `"<<redacted>>"`, `blob_refs` is already empty, `prev_hash` is the
 * redacted head, and the step hash is recomputed over the same pre-image
 * `redactRow` hashes; the line comes out sorted-key canonical, as `rowLine`
 * would write it. Here: that mode's policy, and the head both paths share.
 */

const enc = new TextEncoder();
const latin1 = new TextDecoder("latin1");

/** The kernel's span slot of each redactable field. */
const SLOT: Readonly<Record<string, StepKey>> = { model: StepKey.Model, prompt: StepKey.Prompt, tool_call: StepKey.ToolCall, tool_result: StepKey.ToolResult };

/** The kernel span slots of `fields` (redactable field names). */
export function fieldSlots(fields: Iterable<string>): StepKey[] {
  return [...fields].map((f) => SLOT[f]!);
}

/**
 * The running head of the redacted chain, as the 64 hex digits both
 * publish paths link to: the kernel reads and writes its bytes (once they
 * live in its memory, `moveTo`), the exact path (`redactRow`) reads and
 * sets its text.
 */
export class OutHead {
  private buf: Uint8Array = enc.encode(GENESIS_HASH);
  private cached: string | null = GENESIS_HASH;
  get bytes(): Uint8Array {
    return this.buf;
  }
  get text(): string {
    return (this.cached ??= latin1.decode(this.buf));
  }
  set text(hex: string) {
    enc.encodeInto(hex, this.buf);
    this.cached = hex;
  }
  /** From now on the head is the 64 bytes `at` (the kernel's). */
  moveTo(at: Uint8Array): void {
    at.set(this.buf);
    this.buf = at;
  }
  /** Its bytes were written by the kernel. */
  changed(): void {
    this.cached = null;
  }
}

/**
 * Put the kernel (made with a publish area, in KERNEL_PUBLISH mode) to
 * work for `policy`: the head moves into its memory, and rows whose
 * unredacted fields may hold a path are reported (its `onRow`) for the
 * scanner's exact check.
 */
export function startKernelPublish(k: StepKernel, policy: ReadonlySet<string>, leaks: PathLeakScanner, head: OutHead): void {
  const home = leaks.kernelHome;
  k.setPublish(fieldSlots([...policy]), home.bytes, home.always);
  head.moveTo(k.publishHead);
}
