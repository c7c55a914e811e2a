import { join } from "node:path";
import * as v from "valibot";
import { describeIssues, f, readPyJsonFile, toPlain, writePrettyJson, type LoadStatus } from "./files.ts";

/**
 * Startup-gate checkpoints: which optional startup gates (pre-flight checks)
 * were on for a session, where that decision came from, and whether a cached
 * verdict was reused. `.sdd/runtime/startup_gates.json`, a JSON array in
 * Python indent-2 bytes, written atomically.
 */
export const GATE_STATUSES = ["enabled", "disabled", "cached"] as const;
export type GateStatus = (typeof GATE_STATUSES)[number];
export const GATE_PROVENANCES = ["seed", "default", "env"] as const;
export type GateProvenance = (typeof GATE_PROVENANCES)[number];

/** A cached gate verdict older than this is stale and must be re-run. */
export const GATE_CACHE_MAX_AGE_SECONDS = 3600;

export interface StartupGateCheckpoint {
  captured_at: number;
  gate_name: string;
  status: GateStatus;
  cached: boolean;
  cache_age_seconds: number;
  provenance: GateProvenance;
  config_hash: string;
}

/** Unknown enum values read back as the defaults (`enabled`, `default`). */
export const StartupGateCheckpointSchema = v.object({
  captured_at: v.optional(v.number(), 0),
  gate_name: v.string(),
  status: v.optional(v.fallback(v.picklist(GATE_STATUSES), "enabled"), "enabled"),
  cached: v.optional(v.boolean(), false),
  cache_age_seconds: v.optional(v.number(), 0),
  provenance: v.optional(v.fallback(v.picklist(GATE_PROVENANCES), "default"), "default"),
  config_hash: v.optional(v.string(), ""),
});

export function startupGatesPath(sddDir: string): string {
  return join(sddDir, "runtime", "startup_gates.json");
}

export interface GateInputs {
  gateName: string;
  /** Built-in default when neither seed nor environment says anything. */
  defaultEnabled: boolean;
  /** From `bernstein.yaml`, when the seed sets it. */
  seedEnabled?: boolean;
  /** Raw environment value, when set (`1/true/yes/on` or `0/false/no/off`). */
  envValue?: string;
  /** A verdict from an earlier run was reused. */
  cached?: boolean;
  cacheAgeSeconds?: number;
  configHash?: string;
  now?: number;
}

/** Environment spelling of a boolean; anything unrecognised is ignored (falls through to seed/default). */
export function parseEnvBool(raw: string | undefined): boolean | undefined {
  if (raw === undefined) return undefined;
  const s = raw.trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(s)) return true;
  if (["0", "false", "no", "off"].includes(s)) return false;
  return undefined;
}

/**
 * Decide one gate: environment beats seed beats default; a cached verdict
 * turns an enabled gate into `cached` (a disabled gate stays disabled — it
 * does not run, so there is nothing cached to reuse).
 */
export function buildGateCheckpoint(input: GateInputs): StartupGateCheckpoint {
  const fromEnv = parseEnvBool(input.envValue);
  let enabled: boolean;
  let provenance: GateProvenance;
  if (fromEnv !== undefined) {
    enabled = fromEnv;
    provenance = "env";
  } else if (input.seedEnabled !== undefined) {
    enabled = input.seedEnabled;
    provenance = "seed";
  } else {
    enabled = input.defaultEnabled;
    provenance = "default";
  }
  const cached = Boolean(input.cached) && enabled;
  return {
    captured_at: input.now ?? Date.now() / 1000,
    gate_name: input.gateName,
    status: !enabled ? "disabled" : cached ? "cached" : "enabled",
    cached,
    cache_age_seconds: cached ? (input.cacheAgeSeconds ?? 0) : 0,
    provenance,
    config_hash: input.configHash ?? "",
  };
}

/** A cached verdict older than an hour must not be trusted. */
export function isStaleCache(cp: StartupGateCheckpoint): boolean {
  return cp.cached && cp.cache_age_seconds > GATE_CACHE_MAX_AGE_SECONDS;
}

/** Write all gates of this startup (atomic, 0600); returns the path. */
export function saveStartupGates(sddDir: string, gates: readonly StartupGateCheckpoint[]): string {
  return writePrettyJson(
    startupGatesPath(sddDir),
    gates.map((g) => ({
      captured_at: f(g.captured_at),
      gate_name: g.gate_name,
      status: g.status,
      cached: g.cached,
      cache_age_seconds: f(g.cache_age_seconds),
      provenance: g.provenance,
      config_hash: g.config_hash,
    })),
  );
}

export interface LoadedStartupGates {
  /** `[]` when missing or corrupt; items that do not decode are dropped. */
  gates: StartupGateCheckpoint[];
  status: LoadStatus;
  warning?: string;
}

export function loadStartupGates(sddDir: string): LoadedStartupGates {
  const path = startupGatesPath(sddDir);
  const raw = readPyJsonFile(path);
  if (raw.status !== "ok") return { gates: [], status: raw.status, warning: raw.warning };
  const doc = toPlain(raw.value!);
  if (!Array.isArray(doc)) return { gates: [], status: "corrupt", warning: `${path}: not a JSON array` };
  const gates: StartupGateCheckpoint[] = [];
  const problems: string[] = [];
  doc.forEach((item, i) => {
    const r = v.safeParse(StartupGateCheckpointSchema, item);
    if (r.success) gates.push(r.output);
    else problems.push(`item ${i}: ${describeIssues(r.issues)}`);
  });
  if (problems.length > 0) return { gates, status: "ok", warning: `${path}: skipped ${problems.length} item(s) (${problems[0]})` };
  return { gates, status: "ok" };
}
