import { readFileSync } from "node:fs";
import { ensurePrivateDir } from "../server/paths.ts";
import { dirname } from "node:path";
import * as v from "valibot";
import { writeFileAtomic } from "../fsutil/atomic.ts";
import { unreadableWarning } from "../fsutil/input.ts";
import { dumps, parse, PyNum, pyFloat, type PyLike, type PyValue } from "../pyjson/index.ts";

/**
 * Shared I/O for the session primitives. Every reader follows one rule from
 * the issue: a missing or corrupt file loads as "none" with a warning, never
 * a crash, so a damaged `.sdd/` never stops a command from working.
 */
export type LoadStatus = "ok" | "missing" | "corrupt";

export interface Loaded<T> {
  value: T | null;
  status: LoadStatus;
  /** One line saying why nothing was loaded (set when status is corrupt). */
  warning?: string;
}

/** Session files hold task ids, goals and titles: owner-only, like Python's atomic writer. */
export const SESSION_FILE_MODE = 0o600;

/** Read and parse a JSON file with Python `json.loads` semantics. */
export function readPyJsonFile(path: string): Loaded<PyValue> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { value: null, status: "missing" };
    return { value: null, status: "corrupt", warning: unreadableWarning(path, err) };
  }
  try {
    return { value: parse(text), status: "ok" };
  } catch (err) {
    return { value: null, status: "corrupt", warning: `${path}: not JSON (${(err as Error).message})` };
  }
}

/**
 * A parsed py-json value as plain JS for schema validation: objects become
 * plain objects (own `__proto__` keys stay data), numbers JS numbers. Only
 * records whose numbers are all floats or small ints go through here;
 * values whose spelling matters (latched flags) stay `PyValue`.
 */
export function toPlain(value: PyValue): unknown {
  if (value instanceof PyNum) return value.toNumber();
  if (Array.isArray(value)) return value.map(toPlain);
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, x]) => [k, toPlain(x)]));
  return value;
}

/** Valibot issues as one line: `field 'x': message; ...`. */
export function describeIssues(issues: readonly v.BaseIssue<unknown>[]): string {
  return issues
    .slice(0, 3)
    .map((i) => {
      const path = v.getDotPath(i);
      return path ? `field '${path}': ${i.message}` : i.message;
    })
    .join("; ");
}

/** Decode a JSON-object file against a schema; missing/corrupt/invalid give `value: null` and a warning. */
export function decodeFile<S extends v.GenericSchema>(path: string, schema: S): Loaded<v.InferOutput<S>> {
  const raw = readPyJsonFile(path);
  if (raw.status !== "ok") return { value: null, status: raw.status, warning: raw.warning };
  // valibot's object() also accepts arrays; a record file must be an object.
  if (!(raw.value instanceof Map)) return { value: null, status: "corrupt", warning: `${path}: not a JSON object` };
  const result = v.safeParse(schema, toPlain(raw.value as PyValue));
  if (!result.success) return { value: null, status: "corrupt", warning: `${path}: ${describeIssues(result.issues)}` };
  return { value: result.output, status: "ok" };
}

/**
 * Python `json.dumps(obj, indent=2)` bytes (no trailing newline), written
 * atomically with the parent directory created. Returns the path.
 */
export function writePrettyJson(path: string, value: PyLike, mode = SESSION_FILE_MODE): string {
  ensurePrivateDir(dirname(path));
  writeFileAtomic(path, dumps(value, { indent: 2 }), { mode });
  return path;
}

/** A Python float for the encoder: `1.0`, never `1`. */
export function f(n: number): PyNum {
  return pyFloat(n);
}

/**
 * Schemas for the coercions Python's `from_dict` methods apply:
 * `float(x)` accepts ints and bools, `str(x)` on list items.
 */
export const pyFloatSchema = v.pipe(
  v.union([v.number(), v.boolean()]),
  v.transform((x) => Number(x)),
);
export const pyStrListSchema = v.pipe(
  v.array(v.union([v.string(), v.number()])),
  v.transform((xs) => xs.map(String)),
);
