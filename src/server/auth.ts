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

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: string | null): string | null {
  if (!header) return null;
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return m ? m[1]! : null;
}
