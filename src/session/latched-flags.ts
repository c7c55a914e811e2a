import { mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { writeFileAtomic } from "../fsutil/atomic.ts";
import { dumps, PyNum, type PyValue } from "../pyjson/index.ts";
import { f, readPyJsonFile, SESSION_FILE_MODE, type LoadStatus } from "./files.ts";

/**
 * Latched session flags: feature flags captured once for a session so a
 * config change mid-run cannot flip behaviour under running agents. The file
 * is one line of Python `json.dumps(..., default=str)` — default spaced
 * separators `", "` / `": "`, ASCII escapes, no trailing newline.
 */
export interface LatchedFlags {
  latched_at: number;
  /** Flag values as parsed (numbers keep their spelling for a faithful re-save). */
  flags: Record<string, PyValue>;
}

/** A flag value to latch: JSON values; anything else is stored as `String(x)` (Python `default=str`). */
export type FlagValue = PyValue | number | bigint | readonly FlagValue[] | { readonly [k: string]: FlagValue } | undefined;

export interface LoadedLatchedFlags {
  /** `{}` when nothing usable is latched (missing, corrupt, or `flags` not an object). */
  flags: Record<string, PyValue>;
  latchedAt: number | null;
  status: LoadStatus;
  warning?: string;
}

export function latchedFlagsPath(sddDir: string): string {
  return join(sddDir, "runtime", "latched_flags.json");
}

/** Convert to py-json: `undefined` inside lists becomes null (Python has no undefined), objects keep order. */
function toPyValue(x: FlagValue | unknown): PyValue {
  if (x === null || x === undefined) return null;
  if (typeof x === "string" || typeof x === "boolean") return x;
  if (x instanceof PyNum) return x;
  if (typeof x === "number") {
    return Number.isInteger(x) && !Object.is(x, -0) ? new PyNum(String(x), false) : f(x);
  }
  if (typeof x === "bigint") return new PyNum(x.toString(), false);
  if (Array.isArray(x)) return x.map(toPyValue);
  if (x instanceof Map) return new Map([...x].map(([k, y]) => [String(k), toPyValue(y)]));
  if (typeof x === "object" && Object.getPrototypeOf(x) === Object.prototype) {
    return new Map(Object.entries(x as Record<string, unknown>).filter(([, y]) => y !== undefined).map(([k, y]) => [k, toPyValue(y)]));
  }
  return String(x); // Python default=str
}

/** Latch `flags` now (atomic, 0600). Returns the path. */
export function saveLatchedFlags(sddDir: string, flags: Record<string, FlagValue | unknown>, now = Date.now() / 1000): string {
  const path = latchedFlagsPath(sddDir);
  mkdirSync(dirname(path), { recursive: true });
  const body = new Map<string, PyValue>([
    ["latched_at", f(now)],
    ["flags", toPyValue(flags)],
  ]);
  writeFileAtomic(path, dumps(body), { mode: SESSION_FILE_MODE });
  return path;
}

/** Load the latched flags; missing, invalid JSON or non-object `flags` give `{}`. */
export function loadLatchedFlags(sddDir: string): LoadedLatchedFlags {
  const path = latchedFlagsPath(sddDir);
  const raw = readPyJsonFile(path);
  if (raw.status !== "ok") return { flags: {}, latchedAt: null, status: raw.status, warning: raw.warning };
  const doc = raw.value;
  const flags = doc instanceof Map ? doc.get("flags") : undefined;
  if (!(doc instanceof Map) || !(flags instanceof Map)) {
    return { flags: {}, latchedAt: null, status: "corrupt", warning: `${path}: 'flags' is not an object` };
  }
  const at = doc.get("latched_at");
  return {
    flags: Object.fromEntries(flags),
    latchedAt: at instanceof PyNum ? at.toNumber() : null,
    status: "ok",
  };
}

/** Release the latch (next session latches afresh). Missing file is fine. */
export function clearLatchedFlags(sddDir: string): void {
  rmSync(latchedFlagsPath(sddDir), { force: true });
}
