import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** A fresh bearer token: 32 random bytes, URL-safe base64. */
export function generateToken(): string {
  return randomBytes(32).toString("base64url");
}

/**
 * Compare a presented token with the expected one in constant time. Both
 * sides are hashed first so that neither the content nor the length of the
 * expected token leaks through timing.
 */
export function tokenMatches(presented: string, expected: string): boolean {
  const a = createHash("sha256").update(presented, "utf8").digest();
  const b = createHash("sha256").update(expected, "utf8").digest();
  return timingSafeEqual(a, b);
}

export type PresentedToken = { kind: "token"; token: string } | { kind: "missing" } | { kind: "malformed" };

/**
 * The token of an `Authorization: Bearer <token>` header. A header that is
 * there but not of that shape (`Bearer a b`, `Basic …`, `Bearer`) is
 * `malformed`, told apart from no header at all.
 */
export function bearerToken(header: string | null): PresentedToken {
  if (header === null || header.trim() === "") return { kind: "missing" };
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return m ? { kind: "token", token: m[1]! } : { kind: "malformed" };
}
