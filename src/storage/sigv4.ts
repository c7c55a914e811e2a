import { createHash, createHmac } from "node:crypto";
import type { S3Config } from "./config.ts";
import type { S3Ref } from "./ref.ts";

/**
 * AWS Signature Version 4 for the header-signed GET and HEAD requests of
 * the ranged reader (http1.ts), path-style (ENDPOINT/BUCKET/KEY). Only
 * what a bodiless request needs: the payload hash is the empty body's, the
 * signed headers are host, x-amz-content-sha256, x-amz-date (and
 * x-amz-security-token with a session token) and whatever the caller
 * sends itself and wants signed (Range).
 */

const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/** RFC 3986 encoding of one path segment (what S3's canonical URI wants: unreserved characters kept). */
function encodeSegment(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The request path of an object: the endpoint's own path, the bucket, the key (each segment encoded). */
export function objectPath(endpoint: URL, ref: S3Ref): string {
  const prefix = endpoint.pathname.replace(/\/+$/, "");
  return `${prefix}/${encodeSegment(ref.bucket)}/${ref.key.split("/").map(encodeSegment).join("/")}`;
}

function hmac(key: Buffer | string, data: string): Buffer {
  return createHmac("sha256", key).update(data).digest();
}

/** `20261201T150405Z` */
export function amzDate(now: Date): string {
  return now.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");
}

/**
 * The headers to add to `method path` (no query) for `host` to sign it:
 * x-amz-* and authorization. `also` are headers the caller sends itself
 * (names in lower case), signed too. Without credentials nothing is signed
 * (a public bucket answers anonymous requests).
 */
export function signedHeaders(method: string, host: string, path: string, cfg: S3Config, also: Record<string, string> = {}, now = new Date()): Record<string, string> {
  if (!cfg.accessKeyId || !cfg.secretAccessKey) return {};
  const stamp = amzDate(now);
  const day = stamp.slice(0, 8);
  const own: Record<string, string> = { "x-amz-content-sha256": EMPTY_SHA256, "x-amz-date": stamp };
  if (cfg.sessionToken) own["x-amz-security-token"] = cfg.sessionToken;
  const headers: Record<string, string> = { ...also, ...own, host };
  const names = Object.keys(headers).sort();
  const canonical = [method, path, "", ...names.map((n) => `${n}:${headers[n]!.trim()}`), "", names.join(";"), EMPTY_SHA256].join("\n");
  const scope = `${day}/${cfg.region}/s3/aws4_request`;
  const toSign = ["AWS4-HMAC-SHA256", stamp, scope, createHash("sha256").update(canonical).digest("hex")].join("\n");
  const key = hmac(hmac(hmac(hmac(`AWS4${cfg.secretAccessKey}`, day), cfg.region), "s3"), "aws4_request");
  const signature = createHmac("sha256", key).update(toSign).digest("hex");
  return { ...own, authorization: `AWS4-HMAC-SHA256 Credential=${cfg.accessKeyId}/${scope}, SignedHeaders=${names.join(";")}, Signature=${signature}` };
}
