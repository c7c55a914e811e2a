import { asciiText } from "../codec/bytes.ts";
import { isPythonFloat } from "../codec/row-index.ts";
import { canonical } from "../pyjson/encode.ts";
import { floatRepr } from "../pyjson/float.ts";
import type { CanonicalRow } from "../steps/canonical-row.ts";
import { StepKey } from "../steps/row-keys.ts";
import { pyInt as pyIntOf, pyStr } from "../pyjson/python.ts";
import { materialize } from "../pyjson/parse.ts";
import { PyNum, PyRaw, pyInt, type PyObject, type PyValue } from "../pyjson/types.ts";
import { stepHash } from "../steps/hash.ts";

import { dictForm, RowFormError } from "../steps/dict-form.ts";
export { dictForm, RowFormError };

export const REDACTED = "<<redacted>>";
export const DEFAULT_REDACT = ["prompt", "tool_result"] as const;
export const REDACTABLE = ["model", "prompt", "tool_call", "tool_result"] as const;

/**
 * §5: every policy field that holds a non-null value (any value: `""`, `0`,
 * `false`, `[]`, `{}` included) becomes the literal `<<redacted>>`; null
 * stays null; `blob_refs` is emptied; the row is re-chained onto `prevHash`.
 */
export function redactRow(d: Map<string, PyValue>, policy: ReadonlySet<string>, prevHash: string): Map<string, PyValue> {
  const out = new Map(d);
  for (const f of policy) {
    if (out.has(f) && out.get(f) !== null) out.set(f, REDACTED);
  }
  out.set("prev_hash", prevHash);
  out.set(
    "step_hash",
    stepHash({
      prev_hash: prevHash,
      input_hash: out.get("input_hash") as string,
      model: out.get("model")!,
      prompt: out.get("prompt")!,
      tool_call: out.get("tool_call")!,
      tool_result: out.get("tool_result")!,
      effort: out.get("effort") ?? null,
    }),
  );
  out.set("blob_refs", []);
  return out;
}

export function rowLine(d: Map<string, PyValue>): string {
  return canonical(d) + "\n";
}

const latin1 = new TextDecoder("latin1");
const PLAIN_STRING_LIST = /^\[(?:"[^"\\]*"(?:,"[^"\\]*")*)?\]$/;

function isIntLexeme(line: Uint8Array, s: number, e: number): boolean {
  if (s < 0 || e - s > 18) return false;
  let i = s;
  if (line[i] === 0x2d) i++;
  if (i === e || (line[i] === 0x30 && e - i > 1)) return false;
  if (line[s] === 0x2d && e - s === 2 && line[s + 1] === 0x30) return false; // "-0" re-spells as 0
  for (; i < e; i++) if (line[i]! < 0x30 || line[i]! > 0x39) return false;
  return true;
}

/**
 * Export's fast path: a canonical row that is already exactly its dict form
 * (the eleven keys, `effort` only when non-null, int `seq`/`schema_version`,
 * a float `ts` in Python's spelling, a list of plain strings in
 * `blob_refs`) re-serialises to its own bytes, so they are reused as they
 * are. Anything else returns null and goes through parse + `dictForm`.
 * `scan` is the scanner that saw the line last (a walker's), so a row
 * already scanned is not scanned again.
 */
export function dictFormLine(line: Uint8Array, scan: CanonicalRow): { stepHash: string; refs: string[] } | null {
  if (!scan.scanRow(line)) return null;
  const { spanStart, spanEnd, plainString } = scan;
  const effort = spanStart[StepKey.Effort]!;
  const hasEffort = effort >= 0;
  if (hasEffort && spanEnd[StepKey.Effort]! - effort === 4 && line[effort] === 0x6e) return null;
  if (scan.topKeyCount !== (hasEffort ? 12 : 11)) return null;
  for (const k of [StepKey.Seq, StepKey.PrevHash, StepKey.StepHash, StepKey.InputHash, StepKey.Model, StepKey.Prompt, StepKey.ToolCall, StepKey.ToolResult, StepKey.Ts, StepKey.BlobRefs, StepKey.SchemaVersion]) {
    if (spanStart[k]! < 0) return null;
  }
  for (const k of [StepKey.PrevHash, StepKey.StepHash, StepKey.InputHash]) if (line[spanStart[k]!] !== 0x22) return null;
  if (!isIntLexeme(line, spanStart[StepKey.Seq]!, spanEnd[StepKey.Seq]!)) return null;
  if (!isIntLexeme(line, spanStart[StepKey.SchemaVersion]!, spanEnd[StepKey.SchemaVersion]!)) return null;
  if (!isPythonFloat(line, spanStart[StepKey.Ts]!, spanEnd[StepKey.Ts]!)) return null;
  const rS = spanStart[StepKey.BlobRefs]!;
  const rE = spanEnd[StepKey.BlobRefs]!;
  let refs: string[] = [];
  if (rE - rS !== 2) {
    const refsText = latin1.decode(line.subarray(rS, rE));
    if (!PLAIN_STRING_LIST.test(refsText)) return null;
    refs = JSON.parse(refsText) as string[];
  } else if (line[rS] !== 0x5b) return null;
  const sS = spanStart[StepKey.StepHash]!;
  const sE = spanEnd[StepKey.StepHash]!;
  if (plainString[StepKey.StepHash] !== 1) return null;
  return { stepHash: asciiText(line, sS + 1, sE - 1), refs };
}
