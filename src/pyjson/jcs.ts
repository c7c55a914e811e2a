import { materialize } from "./parse.ts";
import { PyNum, PyRaw, type PyLike } from "./types.ts";

/**
 * RFC 8785 (JCS) text of a py-json value: keys in UTF-16 code-unit order,
 * ECMAScript number spelling, strings escaped only where JSON requires.
 * (The canonical form of the `jcs-v2` hash profile: src/journal/hash-profiles.ts.)
 */
export function jcs(v: PyLike): string {
  if (v === null || v === undefined) return "null";
  if (v === true) return "true";
  if (v === false) return "false";
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number" || typeof v === "bigint") return String(Number(v));
  if (v instanceof PyNum) return String(Number(v.raw));
  if (Array.isArray(v)) return "[" + v.map(jcs).join(",") + "]";
  if (v instanceof PyRaw) return jcs(materialize(v));
  const m: Map<string, PyLike> = v instanceof Map ? (v as Map<string, PyLike>) : new Map(Object.entries(v).filter(([, x]) => x !== undefined));
  const keys = [...m.keys()].sort();
  return "{" + keys.map((k) => JSON.stringify(k) + ":" + jcs(m.get(k)!)).join(",") + "}";
}
