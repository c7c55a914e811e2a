import { canonical, canonicalPart, sha256Parts, type PreimagePart } from "../pyjson/encode.ts";
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
  return stepParts(f)
    .map((p) => (typeof p === "string" ? p : canonical(p)))
    .join("");
}

/** The pre-image in pieces: a huge row's large values (`PyRaw`) are hashed from their bytes. */
function stepParts(f: StepHashFields): PreimagePart[] {
  const parts: PreimagePart[] = [];
  if (f.effort !== null && f.effort !== undefined) parts.push(`{"effort":`, canonicalPart(f.effort), `,"input_hash":`);
  else parts.push(`{"input_hash":`);
  parts.push(canonical(f.input_hash), `,"model":`, canonicalPart(f.model ?? null), `,"prev_hash":`, canonical(f.prev_hash));
  parts.push(`,"prompt":`, canonicalPart(f.prompt ?? null), `,"tool_call":`, canonicalPart(f.tool_call ?? null));
  parts.push(`,"tool_result":`, canonicalPart(f.tool_result ?? null), "}");
  return parts;
}

/** SHA-256 (lowercase hex) of the canonical step payload. */
export function stepHash(f: StepHashFields): string {
  return sha256Parts(stepParts(f));
}

export { sha256Hex };
