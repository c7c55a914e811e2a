import { UsageError } from "../errors.ts";

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
