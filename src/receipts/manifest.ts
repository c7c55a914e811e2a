import * as v from "valibot";
import { canonical } from "../pyjson/encode.ts";
import { parse } from "../pyjson/parse.ts";
import { pyInt as pyIntOf, pyRepr, pyStr } from "../pyjson/python.ts";
import { pyInt, type PyLike, type PyValue } from "../pyjson/types.ts";
import { VERSION } from "../version.ts";

/**
 * `manifest.json` (§2.2), newest layout. The bytes in the receipt are the
 * canonical JSON of these fields (sorted keys, compact, no newline), and the
 * signature is made over exactly those bytes (as the Python exporter does).
 * The verifier checks it over the bytes stored in the archive, not over a
 * re-encoding of the parsed fields, so no edit of the member can pass.
 */
export const UNAUTHENTICATED_FIELDS = ["ts", "elapsed_s", "index", "prev_hash", "payload_hash", "event_hash"] as const;
export const FORMAT_VERSION = 1;

export const ManifestSchema = v.object({
  agent_id: v.string(),
  head_hash: v.string(),
  steps: v.pipe(v.number(), v.integer(), v.minValue(0)),
  bernstein_version: v.string(),
  created_at: v.string(),
  blob_digests: v.array(v.string()),
  format_version: v.number(),
  unauthenticated_fields: v.array(v.string()),
});
/** A manifest this tool writes (always validated against the schema before writing). */
export type Manifest = v.InferOutput<typeof ManifestSchema>;

/** `%Y-%m-%dT%H:%M:%SZ`, UTC, second precision. */
export function utcStamp(d = new Date()): string {
  return d.toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function buildManifest(f: { agent_id: string; head_hash: string; steps: number; blob_digests: string[] }): Manifest {
  return v.parse(ManifestSchema, {
    agent_id: f.agent_id,
    head_hash: f.head_hash,
    steps: f.steps,
    bernstein_version: VERSION,
    created_at: utcStamp(),
    blob_digests: f.blob_digests,
    format_version: FORMAT_VERSION,
    unauthenticated_fields: [...UNAUTHENTICATED_FIELDS],
  });
}

export function manifestBytes(m: Manifest | ParsedManifest["fields"]): Uint8Array {
  return new TextEncoder().encode(canonical(m as PyLike));
}

/**
 * A manifest read from a receipt, with the reference's coercions: required
 * `agent_id`/`head_hash` (str()) and `steps` (int()); the optional fields
 * default (an old manifest without `unauthenticated_fields` is read as if
 * it had the constant list, as the newest reference does).
 */
export interface ParsedManifest {
  agent_id: string;
  head_hash: string;
  steps: bigint;
  /** The fields with the reference's defaults applied (what the manifest says, normalised). */
  fields: Record<string, PyLike>;
}

export class ManifestError extends Error {}

// Keep a BOM: Python's "utf-8" codec does, and json.loads then refuses the text.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

export function parseManifest(bytes: Uint8Array): ParsedManifest {
  let data: PyValue;
  try {
    data = parse(utf8.decode(bytes));
  } catch (err) {
    const msg = err instanceof TypeError ? "'utf-8' codec can't decode the manifest bytes" : (err as Error).message;
    throw new ManifestError(`manifest is not valid JSON: ${msg}`);
  }
  if (!(data instanceof Map)) throw new ManifestError("manifest missing required fields: the manifest is not a JSON object");
  for (const k of ["agent_id", "head_hash", "steps"]) {
    if (!data.has(k)) throw new ManifestError(`manifest missing required fields: '${k}'`);
  }
  const rawSteps = data.get("steps")!;
  const steps = pyIntOf(rawSteps);
  if (steps === null) throw new ManifestError(`manifest missing required fields: steps is not an integer (got ${pyRepr(rawSteps)})`);
  const agent_id = pyStr(data.get("agent_id"));
  const head_hash = pyStr(data.get("head_hash"));
  const m = data;
  const getOr = (k: string, dflt: PyValue): PyValue => (m.has(k) ? m.get(k)! : dflt);
  const fv = getOr("format_version", pyInt(FORMAT_VERSION));
  const fvInt = pyIntOf(fv);
  return {
    agent_id,
    head_hash,
    steps,
    fields: {
      agent_id,
      head_hash,
      steps: pyInt(steps),
      bernstein_version: pyStr(getOr("bernstein_version", "unknown")),
      created_at: pyStr(getOr("created_at", "")),
      blob_digests: getOr("blob_digests", []),
      format_version: fvInt === null ? fv : pyInt(fvInt),
      unauthenticated_fields: getOr("unauthenticated_fields", [...UNAUTHENTICATED_FIELDS]),
    },
  };
}
