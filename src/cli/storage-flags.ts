import { configureStorage } from "../storage/config.ts";

/** The object-storage flags, declared once for every command that reads or writes s3:// or http(s):// (src/storage/config.ts). */
export const storageArgs = {
  "s3-endpoint": { type: "string", description: "S3 endpoint for s3:// (default: $S3_ENDPOINT, $AWS_ENDPOINT_URL, AWS)" },
  "s3-region": { type: "string", description: "S3 region (default: $S3_REGION, $AWS_REGION, us-east-1)" },
  "s3-deadline": {
    type: "string",
    description: "Seconds for reading one remote object, else s3_timeout (default: $BERNSTEIN_S3_DEADLINE, 600 + 4 per MiB; 0: none)",
  },
  "s3-min-rate": {
    type: "string",
    description: "Slowest transfer accepted, RATE/WINDOW, else s3_timeout (default: $BERNSTEIN_S3_MIN_RATE, 1KiB/30s; 0: none)",
  },
} as const;

/** The storage flags' names (for `replay`'s per-verb flag check). */
export const STORAGE_FLAG_NAMES = Object.keys(storageArgs) as (keyof typeof storageArgs)[];

export function applyStorageFlags(args: { "s3-endpoint"?: string; "s3-region"?: string; "s3-deadline"?: string; "s3-min-rate"?: string }): void {
  configureStorage({ endpoint: args["s3-endpoint"], region: args["s3-region"], deadline: args["s3-deadline"], minRate: args["s3-min-rate"] });
}
