import { KeyTable } from "../codec/row-index.ts";

/**
 * Each named key's id: its place in STEP_ROW_KEYS, from 1 (0: any other
 * key). The step kernel's SPANS slots (steps/kernel.wat `$identify`) use
 * the same ids, and its strict scan of the values the step hash covers is
 * the range PrevHash..Effort: keep that run together.
 */
export const enum StepKey { Other = 0, Seq, StepHash, PrevHash, InputHash, Model, Prompt, ToolCall, ToolResult, Effort, BlobRefs, SchemaVersion, Ts }

/**
 * The step row's named top-level keys: one table, so the codec's index
 * (canonical rows, the agent table, the indexed reader) and the step
 * kernel's spans name a key by the same id.
 */
export const STEP_ROW_KEYS = new KeyTable([
  "seq",
  "step_hash",
  "prev_hash",
  "input_hash",
  "model",
  "prompt",
  "tool_call",
  "tool_result",
  "effort",
  "blob_refs",
  "schema_version",
  "ts",
]);
