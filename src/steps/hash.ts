import { canonical } from "../pyjson/encode.ts";
import type { PyLike } from "../pyjson/types.ts";
import { sha256Hex } from "../hex.ts";

/** `prev_hash` of the first step. */
export const GENESIS_HASH = "0".repeat(64);

/** The hashed fields of a step (§1.3). `effort` is hashed only when non-null. */
export interface StepHashFields {
  prev_hash: string;
  input_hash: string;
  model: PyLike;
  prompt: PyLike;
  tool_call: PyLike;
  tool_result: PyLike;
  effort?: PyLike;
}

/**
 * The exact pre-image: canonical JSON (sorted keys, compact, ASCII-escaped)
 * of `{prev_hash, input_hash, model, prompt, tool_call, tool_result[, effort]}`.
 * Keys are emitted in their sorted order directly.
 */
export function stepPreimage(f: StepHashFields): string {
  const effort = f.effort === null || f.effort === undefined ? "" : `"effort":${canonical(f.effort)},`;
  return (
    `{${effort}"input_hash":${canonical(f.input_hash)},"model":${canonical(f.model ?? null)},` +
    `"prev_hash":${canonical(f.prev_hash)},"prompt":${canonical(f.prompt ?? null)},` +
    `"tool_call":${canonical(f.tool_call ?? null)},"tool_result":${canonical(f.tool_result ?? null)}}`
  );
}

/** SHA-256 (lowercase hex) of the canonical step payload. */
export function stepHash(f: StepHashFields): string {
  return sha256Hex(stepPreimage(f));
}

export { sha256Hex };
