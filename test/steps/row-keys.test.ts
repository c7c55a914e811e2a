/** steps/row-keys.ts: each StepKey id names its key in the one table, and the step kernel's span slots use the same ids. */
import { expect, test } from "bun:test";
import { STEP_ROW_KEYS, StepKey } from "../../src/steps/row-keys.ts";
import { indexRow, RowIndex } from "../../src/codec/row-index.ts";
import { GENESIS_HASH } from "../../src/steps/hash.ts";
import { KERNEL_DICT_FORM, KERNEL_REPORT, StepKernel } from "../../src/steps/kernel.ts";
import { dictFormRow } from "../helpers/step-journals.ts";

const NAMED: [StepKey, string][] = [
  [StepKey.Seq, "seq"],
  [StepKey.StepHash, "step_hash"],
  [StepKey.PrevHash, "prev_hash"],
  [StepKey.InputHash, "input_hash"],
  [StepKey.Model, "model"],
  [StepKey.Prompt, "prompt"],
  [StepKey.ToolCall, "tool_call"],
  [StepKey.ToolResult, "tool_result"],
  [StepKey.Effort, "effort"],
  [StepKey.BlobRefs, "blob_refs"],
  [StepKey.SchemaVersion, "schema_version"],
  [StepKey.Ts, "ts"],
];

test("StepKey ids are the places of their names in STEP_ROW_KEYS", () => {
  for (const [id, name] of NAMED) expect(STEP_ROW_KEYS.names[id - 1]).toBe(name);
  expect(STEP_ROW_KEYS.size).toBe(NAMED.length);
});

test("the step kernel's span slot for each StepKey is the value the codec's index finds under that key", () => {
  const k = new StepKernel(1 << 20, 1 << 19);
  k.setMode(KERNEL_DICT_FORM | KERNEL_REPORT);
  const line = `${dictFormRow(0, GENESIS_HASH, { model: "m-1", prompt: "say", tool_call: { name: "edit" }, tool_result: [1, 2], effort: "high" }, "1796137431.4230797").line}\n`;
  const bytes = new TextEncoder().encode(line);
  k.arena.set(bytes, 0);
  k.head.set(new TextEncoder().encode(GENESIS_HASH));
  const seen: [number, number][][] = [];
  k.onRow = () => seen.push(NAMED.map(([id]) => [k.spans[4 * id]! - k.arena.byteOffset, k.spans[4 * id + 1]! - k.arena.byteOffset]));
  expect(k.verify(k.arena, 0, bytes.length, 1 << 19, 0)).toBe(bytes.length);
  const ix = new RowIndex();
  expect(indexRow(bytes, 0, bytes.length - 1, ix, STEP_ROW_KEYS, true)).toBe(true);
  const want = NAMED.map(([id]): [number, number] => [ix.start(ix.valueOf(id)), ix.end(ix.valueOf(id))]);
  expect(seen).toEqual([want]);
  // every key was found (a kernel or table that numbered keys otherwise would put a span under the wrong id)
  expect(want.every(([s]) => s > 0)).toBe(true);
});
