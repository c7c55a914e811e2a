import { configureStorage } from "../storage/config.ts";

/** `--s3-endpoint` / `--s3-region`, declared once for every command that reads or writes s3:// (src/storage/config.ts). */
export const storageArgs = {
  "s3-endpoint": { type: "string", description: "S3 endpoint for s3:// (default: $S3_ENDPOINT, $AWS_ENDPOINT_URL, AWS)" },
  "s3-region": { type: "string", description: "S3 region (default: $S3_REGION, $AWS_REGION, us-east-1)" },
} as const;

export function applyStorageFlags(args: { "s3-endpoint"?: string; "s3-region"?: string }): void {
  configureStorage({ endpoint: args["s3-endpoint"], region: args["s3-region"] });
}
