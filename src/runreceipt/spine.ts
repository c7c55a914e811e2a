import { dumps } from "../pyjson/encode.ts";
import { pyEquals, pyInt, pyRepr, pyStr } from "../pyjson/python.ts";
import { PyNum, type PyObject, type PyValue } from "../pyjson/types.ts";
import { sha256Hex } from "../journal/hash.ts";

/**
 * The keyless lineage-spine walk (spec §1.4): recomputes each entry's
 * `entry_hash` from its fields and checks the `prev_hash` links. It cannot
 * check the HMAC tags (keyed), which a receipt drops anyway.
 */

/** The nine fields every embedded entry carries (everything but `hmac`). */
export const SPINE_FIELDS = ["v", "prev_hash", "artifact_path", "content_hash", "actor", "step_id", "model", "timestamp", "entry_hash"] as const;
const STR_FIELDS = ["prev_hash", "artifact_path", "content_hash", "actor", "step_id", "model"] as const;
const TRACE_FIELDS = ["traceparent", "tracestate", "baggage"] as const;
export const V2_PREFIX = "bernstein:lineage:v2";

const ONE = new PyNum("1", false);
const TWO = new PyNum("2", false);

/** CJ-raw (spec §0.1): sorted keys, compact, raw UTF-8. */
export function canonicalRaw(v: PyValue | Record<string, unknown>): string {
  return dumps(v as PyValue, { sortKeys: true, separators: [",", ":"], ensureAscii: false });
}

/** Python's repr of a sorted list of field names: `['model', 'v']`. */
export function missingFieldsRepr(entry: PyObject, fields: readonly string[]): string | null {
  const missing = fields.filter((f) => !entry.has(f)).sort();
  return missing.length ? pyRepr(missing) : null;
}

/**
 * The entry-hash pre-image of an entry, or null when a field cannot be
 * converted the way Python's `str()`/`int()` would (spec §1.4 step 4).
 */
export function entryPreimage(entry: PyObject): string | null {
  const ts = pyInt(entry.get("timestamp"));
  if (ts === null) return null;
  const body = new Map<string, PyValue>();
  for (const f of STR_FIELDS) body.set(f, pyStr(entry.get(f), "None"));
  body.set("timestamp", new PyNum(ts.toString(), false));
  for (const f of TRACE_FIELDS) {
    const v = entry.get(f);
    if (v !== undefined && v !== null) body.set(f, v);
  }
  const prefix = pyEquals(entry.get("v"), TWO) ? V2_PREFIX : "";
  return prefix + canonicalRaw(body);
}

/** `"sha256:" + hex(SHA-256(pre-image))`. */
export function entryHashOf(preimage: string): string {
  return "sha256:" + sha256Hex(preimage);
}

/** One entry at a time; the first failure is kept and stops the walk. */
export class SpineWalker {
  count = 0;
  head = "";
  error: string | null = null;

  push(entry: PyObject): void {
    const i = this.count++;
    if (this.error !== null) return;
    const missing = missingFieldsRepr(entry, SPINE_FIELDS);
    if (missing) {
      this.error = `spine entry ${i}: missing fields ${missing}`;
      return;
    }
    if (pyStr(entry.get("prev_hash"), "None") !== this.head) {
      this.error = `spine entry ${i}: prev_hash break`;
      return;
    }
    const v = entry.get("v")!;
    if (!(v === null || pyEquals(v, ONE) || pyEquals(v, TWO))) {
      this.error = `spine entry ${i}: unsupported scheme version ${pyRepr(v)}`;
      return;
    }
    const pre = entryPreimage(entry);
    if (pre === null) {
      this.error = `spine entry ${i}: unhashable field types`;
      return;
    }
    const stored = pyStr(entry.get("entry_hash"), "None");
    if (stored !== entryHashOf(pre)) {
      this.error = `spine entry ${i}: entry_hash mismatch`;
      return;
    }
    this.head = stored;
  }
}
