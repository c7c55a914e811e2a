import { UsageError } from "../errors/index.ts";

/**
 * How to reach S3: the usual variables, with `--s3-endpoint` / `--s3-region`
 * (configureStorage) over them. The region is always set explicitly (Bun's
 * default "auto" is refused by servers other than R2, Swift among them):
 * when none is given it is us-east-1. Requests are path-style
 * (ENDPOINT/BUCKET/KEY), which every S3-compatible server accepts.
 */
export interface S3Config {
  endpoint: string;
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
}

export interface StorageFlags {
  endpoint?: string;
  region?: string;
  /** `--s3-deadline`: seconds for the whole object (0: none); unset: DEFAULT_DEADLINE. */
  deadline?: string;
  /** `--s3-min-rate`: RATE[/WINDOW], e.g. `1KiB/30s` (0: none); unset: DEFAULT_MIN_RATE. */
  minRate?: string;
}

/**
 * How long reading one object may take, and how slowly. A server that
 * answers but trickles (1 byte/s) never trips the 30 s no-answer stall,
 * so two more bounds end such a read with s3_timeout (exit 3):
 *  - the whole-object deadline, from the first request for the object (its
 *    size) to its last byte: by default 10 minutes plus 4 s per MiB (as if
 *    the object came at 256 KiB/s after the first 10 minutes: 78 min for
 *    1 GiB); `--s3-deadline S` sets a fixed S seconds;
 *  - the minimum rate of each ranged GET, averaged over the last WINDOW
 *    seconds spent waiting on it (time the reader spends verifying, with
 *    the socket paused, does not count): by default 1 KiB/s over 30 s.
 * 0 turns either off. Flags over BERNSTEIN_S3_DEADLINE / BERNSTEIN_S3_MIN_RATE.
 */
export interface ReadLimits {
  /** Fixed seconds for the whole object, or null for the default scaled by its size; Infinity: none. */
  deadlineS: number | null;
  /** Bytes per second; 0: none. */
  minRate: number;
  windowS: number;
}

export const DEFAULT_DEADLINE = { baseS: 600, perMiBS: 4 } as const;
export const DEFAULT_MIN_RATE = { bytesPerS: 1024, windowS: 30 } as const;

/** The whole-object deadline in seconds for an object of `size` bytes (size unknown yet: the base). */
export function deadlineFor(limits: ReadLimits, size: number | null): number {
  if (limits.deadlineS !== null) return limits.deadlineS;
  return DEFAULT_DEADLINE.baseS + (DEFAULT_DEADLINE.perMiBS * (size ?? 0)) / (1 << 20);
}

const UNITS: Record<string, number> = { "": 1, b: 1, k: 1024, kib: 1024, m: 1 << 20, mib: 1 << 20 };

/** `--s3-deadline`: seconds (a decimal ≥ 0); null when malformed. */
export function parseDeadline(raw: string): number | null {
  if (!/^\s*\d+(\.\d+)?\s*s?\s*$/i.test(raw)) return null;
  const s = Number.parseFloat(raw);
  return s === 0 ? Infinity : s;
}

/** `--s3-min-rate`: RATE[UNIT][/WINDOW[s]] (UNIT: B, K/KiB, M/MiB per second); null when malformed. */
export function parseMinRate(raw: string): { bytesPerS: number; windowS: number } | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|k|kib|m|mib)?(?:\/s)?\s*(?:\/\s*(\d+(?:\.\d+)?)\s*s?)?\s*$/i.exec(raw);
  if (!m) return null;
  const bytesPerS = Number.parseFloat(m[1]!) * UNITS[(m[2] ?? "").toLowerCase()]!;
  const windowS = m[3] === undefined ? DEFAULT_MIN_RATE.windowS : Number.parseFloat(m[3]);
  if (!(windowS > 0)) return null;
  return { bytesPerS, windowS };
}

/** The read limits in force: flags over the environment over the defaults (already validated by configureStorage). */
export function readLimits(f: StorageFlags = flags, env: Record<string, string | undefined> = process.env): ReadLimits {
  const d = f.deadline ?? first(env, ["BERNSTEIN_S3_DEADLINE"]);
  const r = f.minRate ?? first(env, ["BERNSTEIN_S3_MIN_RATE"]);
  const rate = r === undefined ? null : parseMinRate(r);
  return {
    deadlineS: d === undefined ? null : parseDeadline(d),
    minRate: rate?.bytesPerS ?? DEFAULT_MIN_RATE.bytesPerS,
    windowS: rate?.windowS ?? DEFAULT_MIN_RATE.windowS,
  };
}

let flags: StorageFlags = {};

/** The command line's `--s3-endpoint` / `--s3-region` (validated here, exit 2 when malformed). */
export function configureStorage(f: StorageFlags): void {
  if (f.endpoint !== undefined && !/^https?:\/\/[^/]/i.test(f.endpoint)) {
    throw new UsageError(`--s3-endpoint must be an http:// or https:// URL, got ${JSON.stringify(f.endpoint)}`, "storage_url_invalid", { url: f.endpoint });
  }
  if (f.region !== undefined && !/^[a-z0-9-]+$/i.test(f.region)) {
    throw new UsageError(`--s3-region must be a region name such as us-east-1, got ${JSON.stringify(f.region)}`, "storage_url_invalid", { region: f.region });
  }
  const env = process.env;
  for (const [name, raw, ok, example] of [
    ["--s3-deadline", f.deadline ?? first(env, ["BERNSTEIN_S3_DEADLINE"]), (v: string) => parseDeadline(v) !== null, "600 (seconds; 0: none)"],
    ["--s3-min-rate", f.minRate ?? first(env, ["BERNSTEIN_S3_MIN_RATE"]), (v: string) => parseMinRate(v) !== null, "1KiB/30s (bytes per second over a window of seconds; 0: none)"],
  ] as const) {
    if (raw !== undefined && !ok(raw)) {
      const from = raw === (name === "--s3-deadline" ? f.deadline : f.minRate) ? name : `${name} (from $BERNSTEIN_S3_${name === "--s3-deadline" ? "DEADLINE" : "MIN_RATE"})`;
      throw new UsageError(`${from} must be like ${example}, got ${JSON.stringify(raw)}`, "usage", { flag: name, value: raw });
    }
  }
  flags = { ...f };
}

export function storageFlags(): StorageFlags {
  return flags;
}

function first(env: Record<string, string | undefined>, names: string[]): string | undefined {
  for (const n of names) {
    const v = env[n];
    if (v !== undefined && v !== "") return v;
  }
  return undefined;
}

export function s3Config(f: StorageFlags = flags, env: Record<string, string | undefined> = process.env): S3Config {
  const region = f.region ?? first(env, ["S3_REGION", "AWS_REGION", "AWS_DEFAULT_REGION"]) ?? "us-east-1";
  const endpoint = f.endpoint ?? first(env, ["S3_ENDPOINT", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"]) ?? `https://s3.${region}.amazonaws.com`;
  return {
    endpoint: endpoint.replace(/\/+$/, ""),
    region,
    accessKeyId: first(env, ["S3_ACCESS_KEY_ID", "AWS_ACCESS_KEY_ID"]),
    secretAccessKey: first(env, ["S3_SECRET_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY"]),
    sessionToken: first(env, ["S3_SESSION_TOKEN", "AWS_SESSION_TOKEN"]),
  };
}
