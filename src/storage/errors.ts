import { InputError, type ErrorCode } from "../errors/index.ts";
import { redactUrl, whereOf, type RemoteRef } from "./ref.ts";

/**
 * The typed failures of object storage (all exit 3), each with the
 * endpoint, bucket and key (or the URL without its query) in its facts:
 *  - s3_not_found: no such key or bucket (404);
 *  - s3_access_denied: the credentials are refused (403, a bad signature, an unknown key id, 401);
 *  - s3_unreachable: no answer from the endpoint (refused, DNS, reset, timeout);
 *  - s3_request_failed: any other answer (a 5xx, a short body, a 416);
 *  - s3_timeout: an answer, but too slow (the whole-object deadline or the minimum rate missed, config.ts).
 */
export type StorageErrorKind = "not_found" | "access_denied" | "unreachable" | "request_failed" | "timeout";

const CODES: Record<StorageErrorKind, ErrorCode> = {
  not_found: "s3_not_found",
  access_denied: "s3_access_denied",
  unreachable: "s3_unreachable",
  request_failed: "s3_request_failed",
  timeout: "s3_timeout",
};

const NOT_FOUND = new Set(["NoSuchKey", "NoSuchBucket", "NotFound", "404"]);
const DENIED = new Set([
  "AccessDenied",
  "SignatureDoesNotMatch",
  "InvalidAccessKeyId",
  "InvalidToken",
  "ExpiredToken",
  "AllAccessDisabled",
  "InvalidSecurity",
  "MissingSecurityHeader",
  "AuthorizationHeaderMalformed",
  "Forbidden",
  "403",
  "401",
]);
const UNREACHABLE = /ConnectionRefused|ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_|EHOSTUNREACH|ENETUNREACH|ConnectionClosed|Timeout|TimedOut|ETIMEDOUT|FailedToOpenSocket|Unable to connect|DNS/i;

/** The kind of a failure thrown by Bun.s3 or fetch. */
export function kindOf(err: unknown): StorageErrorKind {
  const e = err as { code?: unknown; name?: unknown; message?: unknown };
  const code = typeof e?.code === "string" ? e.code : "";
  if (NOT_FOUND.has(code)) return "not_found";
  if (DENIED.has(code)) return "access_denied";
  if (UNREACHABLE.test(code) || UNREACHABLE.test(String(e?.message ?? "")) || UNREACHABLE.test(String(e?.name ?? ""))) return "unreachable";
  return "request_failed";
}

export function kindOfStatus(status: number): StorageErrorKind {
  if (status === 404) return "not_found";
  if (status === 401 || status === 403) return "access_denied";
  return "request_failed";
}

const WHAT: Record<StorageErrorKind, string> = {
  not_found: "object not found",
  access_denied: "access denied",
  unreachable: "storage endpoint unreachable",
  request_failed: "storage request failed",
  timeout: "storage read too slow",
};

/** The error a command reports (plain data, so a worker can hand it to the thread that waits). */
export interface StorageFailure {
  kind: StorageErrorKind;
  message: string;
  facts: Record<string, unknown>;
}

export function storageFailure(kind: StorageErrorKind, ref: RemoteRef, endpoint: string | null, why: string, more: Record<string, unknown> = {}): StorageFailure {
  const where = whereOf(ref, endpoint);
  const at = ref.kind === "s3" ? `${ref.url} (endpoint ${endpoint})` : redactUrl(ref.url);
  return { kind, message: `${WHAT[kind]}: ${at}${why ? `: ${why}` : ""}`, facts: { ...where, reason: why, ...more } };
}

export function failureOf(err: unknown, ref: RemoteRef, endpoint: string | null): StorageFailure {
  const e = err as { code?: unknown; message?: unknown };
  const why = [typeof e?.code === "string" ? e.code : "", typeof e?.message === "string" ? e.message : String(err)].filter(Boolean).join(": ");
  return storageFailure(kindOf(err), ref, endpoint, why);
}

export function toError(f: StorageFailure): InputError {
  return new InputError(CODES[f.kind], f.message, f.facts);
}
