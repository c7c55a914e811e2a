import { UsageError } from "../errors/index.ts";

/**
 * Inputs and outputs that live in object storage instead of on this
 * machine: `s3://bucket/key` (signed requests, credentials from the
 * environment, see config.ts) and `https://…` / `http://…` (a presigned or
 * public URL, read with plain ranged GETs).
 */
export interface S3Ref {
  kind: "s3";
  /** As given: s3://bucket/key. */
  url: string;
  bucket: string;
  key: string;
}

export interface HttpRef {
  kind: "http";
  url: string;
}

export type RemoteRef = S3Ref | HttpRef;

const REMOTE = /^(s3|https?):\/\//i;

/** True for a word that names an object in storage rather than a local path. */
export function isRemotePath(word: string): boolean {
  return REMOTE.test(word);
}

/**
 * Parse `s3://bucket/key` or an http(s) URL. The bucket is always the one
 * in the URL (an S3_BUCKET/AWS_BUCKET in the environment never overrides
 * it), and the key is taken literally, as the AWS CLI does.
 */
export function parseRemote(word: string): RemoteRef {
  if (/^https?:\/\//i.test(word)) {
    try {
      new URL(word);
    } catch {
      throw invalid(word, "not a valid URL");
    }
    return { kind: "http", url: word };
  }
  const m = /^s3:\/\/([^/]+)\/(.+)$/i.exec(word);
  if (!m) throw invalid(word, "expected s3://BUCKET/KEY");
  return { kind: "s3", url: word, bucket: m[1]!, key: m[2]! };
}

function invalid(word: string, why: string): UsageError {
  return new UsageError(`invalid storage URL ${JSON.stringify(redactUrl(word))}: ${why}`, "storage_url_invalid", { url: redactUrl(word) });
}

/** A URL for messages: a presigned URL's query (its signature) is never printed. */
export function redactUrl(url: string): string {
  const q = url.indexOf("?");
  return q < 0 ? url : `${url.slice(0, q)}?…`;
}

/** Where a request went, for the facts of an error: endpoint and key, never a secret. */
export function whereOf(ref: RemoteRef, endpoint: string | null): Record<string, string> {
  if (ref.kind === "http") return { url: redactUrl(ref.url) };
  return { endpoint: endpoint ?? "", bucket: ref.bucket, key: ref.key, url: ref.url };
}
