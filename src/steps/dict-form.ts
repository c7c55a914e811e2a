import { floatRepr } from "../pyjson/float.ts";
import { pyInt as pyIntOf, pyStr } from "../pyjson/python.ts";
import { materialize } from "../pyjson/parse.ts";
import { PyNum, PyRaw, pyInt, type PyObject, type PyValue } from "../pyjson/types.ts";

/**
 * The entry -> dict form of §1.2/§2.4: what export writes for each row
 * (export re-serialises, it does not copy bytes: legacy rows gain
 * `schema_version: 1`, an int `ts` becomes a float, `blob_refs: null`
 * becomes `[]`). A value Python's coercions would crash on is refused.
 */
export class RowFormError extends Error {}

/** Python `float(x)` for the values a row can hold. */
function pyFloatOf(v: PyValue, what: string): PyNum {
  if (v === true) return new PyNum("1.0", true);
  if (v === false) return new PyNum("0.0", true);
  if (v instanceof PyNum) return v.isFloat ? v : new PyNum(floatRepr(Number(v.raw)), true);
  if (typeof v === "string") {
    const t = v.trim().replace(/(?<=\d)_(?=\d)/g, "").toLowerCase();
    if (/^[+-]?(inf|infinity)$/.test(t)) return new PyNum(t.startsWith("-") ? "-Infinity" : "Infinity", true);
    if (/^[+-]?nan$/.test(t)) return new PyNum("NaN", true);
    if (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(t)) return new PyNum(floatRepr(Number(t)), true);
  }
  throw new RowFormError(`${what} is not a number`);
}

/** Python `list(value or [])`. */
function listOf(v: PyValue | undefined, what: string): PyValue[] {
  if (v === undefined || v === null || v === false || v === "") return [];
  if (Array.isArray(v)) return v;
  if (v instanceof PyRaw) return listOf(materialize(v), what); // a huge row's large value (src/pyjson/row.ts)
  if (typeof v === "string") return [...v];
  if (v instanceof Map) return [...v.keys()];
  if (v instanceof PyNum && Number(v.raw) === 0) return [];
  throw new RowFormError(`${what} is not a list`);
}

export function dictForm(row: PyObject): Map<string, PyValue> {
  const seq = pyIntOf(row.get("seq"));
  if (seq === null) throw new RowFormError("seq is not an integer");
  const sv = row.has("schema_version") ? pyIntOf(row.get("schema_version")) : 1n;
  if (sv === null) throw new RowFormError("schema_version is not an integer");
  const out = new Map<string, PyValue>();
  out.set("seq", pyInt(seq));
  out.set("prev_hash", pyStr(row.get("prev_hash"), ""));
  out.set("input_hash", pyStr(row.get("input_hash"), ""));
  out.set("model", row.get("model") ?? null);
  out.set("prompt", row.get("prompt") ?? null);
  out.set("tool_call", row.get("tool_call") ?? null);
  out.set("tool_result", row.get("tool_result") ?? null);
  const effort = row.get("effort");
  if (effort !== undefined && effort !== null) out.set("effort", effort);
  out.set("step_hash", pyStr(row.get("step_hash"), ""));
  out.set("ts", row.has("ts") ? pyFloatOf(row.get("ts")!, "ts") : new PyNum("0.0", true));
  out.set("blob_refs", listOf(row.get("blob_refs"), "blob_refs"));
  out.set("schema_version", pyInt(sv));
  return out;
}
