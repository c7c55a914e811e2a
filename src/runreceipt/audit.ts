import { createHmac } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, writeSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { auditKeyPath, loadAuditKey } from "../lineage/key.ts";
import { InputError } from "../errors/index.ts";
import { canonical } from "../pyjson/encode.ts";
import type { PyObject, PyValue } from "../pyjson/types.ts";
import { AUDIT_GENESIS } from "./facts.ts";
import { strictObjects } from "./strict-lines.ts";
import { RefusalError } from "../errors/index.ts";

/**
 * The opt-in audit range of a run receipt (spec §1.5): the events of
 * `<sdd>/audit/*.jsonl` in [since, until), re-chained from 64 zeros with a
 * fresh HMAC per event. Upstream's exact window selection and re-chain HMAC
 * are unconfirmed; we choose (and document): events whose `timestamp`
 * string, read as an ISO-8601 instant, lies in the window, in file-name then
 * line order; `hmac = hex(HMAC-SHA256(audit key, CJ(event without "hmac")))`.
 * A verifier can check neither choice without the key, and needs neither.
 */

export interface AuditRange {
  since: string;
  until: string;
  events: PyObject[];
  head_hmac: string;
  head_sha256: string;
}

/**
 * The create-if-absent loader (`load_or_create_audit_key`): a missing key
 * file is created (0600, 64 hex characters) with O_EXCL, so a concurrent
 * creator's key is adopted; then it is read as the lineage verifier reads
 * it (../lineage/key.ts: same path rules, same refusal of group/other bits).
 */
export function loadOrCreateAuditKey(env: Record<string, string | undefined> = process.env): Uint8Array {
  const { path } = auditKeyPath(env);
  if (!existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    try {
      const fd = openSync(path, "wx", 0o600);
      try {
        writeSync(fd, Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex"));
      } finally {
        closeSync(fd);
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw new InputError("audit_key_unreadable", `cannot create audit key ${path}: ${(err as Error).message}`, { path });
    }
  }
  // The file exists now, so the reader's "no key configured" (null) cannot happen.
  return loadAuditKey({ ...env, BERNSTEIN_AUDIT_KEY_PATH: path })!.master;
}

/** An ISO-8601 instant as microseconds since the epoch, or null. */
export function isoMicros(s: string): bigint | null {
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(?:\.(\d{1,6}))?(Z|[+-]\d{2}:?\d{2})?$/.exec(s.trim());
  if (!m) return null;
  const ms = Date.parse(`${m[1]}T${m[2]!.length === 5 ? m[2] + ":00" : m[2]}${m[4] ? (m[4] === "Z" ? "Z" : m[4].replace(/^([+-]\d{2})(\d{2})$/, "$1:$2")) : "Z"}`);
  if (Number.isNaN(ms)) return null;
  return BigInt(ms) * 1000n + BigInt((m[3] ?? "").padEnd(6, "0") || "0");
}

function hmacHex(key: Uint8Array, text: string): string {
  return createHmac("sha256", key).update(text).digest("hex");
}

/** Select and re-chain the audit events of the window (see the module comment). */
export function readAuditRange(sddDir: string, since: string, until: string, key: Uint8Array): AuditRange {
  const lo = isoMicros(since);
  const hi = isoMicros(until);
  if (lo === null || hi === null) throw new RefusalError("run_receipt_refused", `--audit-since/--audit-until must be ISO-8601 instants (got ${JSON.stringify(since)}, ${JSON.stringify(until)})`);
  const dir = join(resolve(sddDir), "audit");
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort() : [];
  const events: PyObject[] = [];
  const hasher = new Bun.CryptoHasher("sha256");
  let prev = AUDIT_GENESIS;
  for (const f of files) {
    const path = join(dir, f);
    for (const { row } of strictObjects(path, (n, what) => new RefusalError("run_receipt_refused", `audit log ${path} line ${n} ${what}; a receipt is never signed over a partial audit range`))) {
      const ts = row.get("timestamp");
      const at = typeof ts === "string" ? isoMicros(ts) : null;
      if (at === null || at < lo || at >= hi) continue;
      const details = row.get("details");
      const d = new Map<string, PyValue>(details instanceof Map ? details : []);
      d.set("_original_hmac", row.get("hmac") ?? null);
      const ev = new Map<string, PyValue>();
      for (const k of ["timestamp", "event_type", "actor", "resource_type", "resource_id"]) ev.set(k, row.get(k) ?? null);
      ev.set("details", d);
      ev.set("prev_hmac", prev);
      prev = hmacHex(key, canonical(ev));
      ev.set("hmac", prev);
      hasher.update(canonical(ev) + "\n");
      events.push(ev);
    }
  }
  return { since, until, events, head_hmac: prev, head_sha256: hasher.digest("hex") };
}
