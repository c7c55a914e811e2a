import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import * as v from "valibot";
import { writeFileAtomic } from "../fsutil/atomic.ts";
import { dumps } from "../pyjson/encode.ts";
import { parse } from "../pyjson/parse.ts";
import { pyStr, pyStrip } from "../pyjson/python.ts";
import { PyNum, pyFloat, type PyValue } from "../pyjson/types.ts";
import { METADATA_FILE_NAME } from "./paths.ts";

/**
 * `<sdd>/runs/<run_id>/metadata.json` (spec §2): written once when the run's
 * journal is created; read by the run displays.
 */
export interface RunMetadata {
  run_id: string;
  /** Unix time (seconds, float) the run started. */
  started_at: number;
  git_sha: string;
  git_branch: string;
  /** SHA-256 hex of the seed file (`bernstein.yaml`), or "". */
  config_hash: string;
  seed_path: string | null;
}

export const RunMetadataSchema = v.object({
  run_id: v.string(),
  started_at: v.pipe(v.number(), v.finite()),
  git_sha: v.string(),
  git_branch: v.string(),
  config_hash: v.string(),
  seed_path: v.nullable(v.string()),
});

/** The file bytes: `json.dumps(asdict(m), indent=2)`, no trailing newline. */
export function metadataText(m: RunMetadata): string {
  v.parse(RunMetadataSchema, m);
  const ordered = new Map<string, PyValue>([
    ["run_id", m.run_id],
    ["started_at", pyFloat(m.started_at)],
    ["git_sha", m.git_sha],
    ["git_branch", m.git_branch],
    ["config_hash", m.config_hash],
    ["seed_path", m.seed_path],
  ]);
  return dumps(ordered, { indent: 2 });
}

/** Write metadata.json atomically with mode 0600. */
export function writeMetadata(runDirPath: string, m: RunMetadata): void {
  writeFileAtomic(join(runDirPath, METADATA_FILE_NAME), metadataText(m), { mode: 0o600 });
}

// Python float(str): optional sign, digits with single underscores between
// them, optional fraction/exponent, or inf/infinity/nan in any case.
const PY_FLOAT = /^[+-]?(?:(?:\d(?:_?\d)*)?\.\d(?:_?\d)*|\d(?:_?\d)*\.?)(?:[eE][+-]?\d(?:_?\d)*)?$/;
const PY_FLOAT_SPECIAL = /^([+-]?)(inf|infinity|nan)$/i;

/** Python `float(value)` for a parsed JSON value, or null where Python raises. */
function pyFloatOf(x: PyValue): number | null {
  if (x === true) return 1;
  if (x === false) return 0;
  if (x instanceof PyNum) return x.toNumber();
  if (typeof x === "string") {
    const t = pyStrip(x);
    const special = PY_FLOAT_SPECIAL.exec(t);
    if (special) {
      const neg = special[1] === "-";
      if (special[2]!.toLowerCase() === "nan") return Number.NaN;
      return neg ? -Infinity : Infinity;
    }
    if (!PY_FLOAT.test(t)) return null;
    return Number(t.replaceAll("_", ""));
  }
  return null;
}

function truthy(x: PyValue | undefined): boolean {
  if (x === undefined || x === null || x === false) return false;
  if (typeof x === "string") return x.length > 0;
  if (x instanceof PyNum) return x.toNumber() !== 0; // NaN is truthy in Python too
  if (Array.isArray(x)) return x.length > 0;
  if (x instanceof Map) return x.size > 0;
  return true;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Read metadata.json with Python's coercions (`str()` of each field,
 * `float(started_at or 0.0)`). Missing, unparsable or non-object files give
 * null (Python raises AttributeError for a JSON array; here it is null too).
 */
export function readMetadata(runDirPath: string): RunMetadata | null {
  let raw: PyValue;
  try {
    raw = parse(strictUtf8.decode(readFileSync(join(runDirPath, METADATA_FILE_NAME))));
  } catch {
    return null;
  }
  if (!(raw instanceof Map)) return null;
  const started = raw.get("started_at");
  const startedAt = truthy(started) ? pyFloatOf(started!) : 0;
  if (startedAt === null) return null;
  const seed = raw.get("seed_path");
  return {
    run_id: pyStr(raw.get("run_id"), basename(runDirPath)),
    started_at: startedAt,
    git_sha: pyStr(raw.get("git_sha"), ""),
    git_branch: pyStr(raw.get("git_branch"), ""),
    config_hash: pyStr(raw.get("config_hash"), ""),
    seed_path: truthy(seed) ? pyStr(seed) : null,
  };
}
