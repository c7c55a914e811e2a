import { hkdfSync } from "node:crypto";
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { InputError, RefusalError } from "../errors/index.ts";
import { stripBytes } from "../receipts/keys.ts";
import { randomHex } from "../hex.ts";

/**
 * The audit (master) key that tags lineage-spine rows (upstream-parity
 * §2.3, §2.7), loaded read-only: a verifier never creates one.
 *
 * Path: $BERNSTEIN_AUDIT_KEY_PATH (with `~` expanded), else
 * $XDG_STATE_HOME/bernstein/audit.key, else ~/.local/state/bernstein/audit.key.
 * The key is the file's bytes with surrounding ASCII whitespace stripped
 * (a generated key is 64 hex characters, used as ASCII, not decoded).
 */

export interface AuditKey {
  path: string;
  /** True when the path came from BERNSTEIN_AUDIT_KEY_PATH. */
  explicit: boolean;
  master: Uint8Array;
}

type Env = Record<string, string | undefined>;

function expandHome(p: string): string {
  return p === "~" || p.startsWith("~/") ? join(homedir(), p.slice(1)) : p;
}

export function auditKeyPath(env: Env = process.env): { path: string; explicit: boolean } {
  const set = env.BERNSTEIN_AUDIT_KEY_PATH?.trim();
  if (set) return { path: expandHome(set), explicit: true };
  const state = env.XDG_STATE_HOME?.trim();
  return { path: join(state ? state : join(homedir(), ".local", "state"), "bernstein", "audit.key"), explicit: false };
}

/**
 * The audit key, or null when none is configured and the default file does
 * not exist (the spine is then checked without its tags). A key named by
 * BERNSTEIN_AUDIT_KEY_PATH must exist: a check the user asked for never
 * silently degrades. Group/other permission bits are refused as upstream
 * refuses them (`AuditKeyPermissionError`).
 */
export function loadAuditKey(env: Env = process.env): AuditKey | null {
  const { path, explicit } = auditKeyPath(env);
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT" && !explicit) return null;
    throw new InputError("audit_key_unreadable", `cannot read the audit key ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { path });
  }
  if (process.platform !== "win32" && (mode & 0o077) !== 0) {
    const octal = (mode & 0o7777).toString(8).padStart(4, "0");
    throw new RefusalError("audit_key_insecure", `Audit key ${path} has insecure permissions ${octal}; required 0600 (owner-only).`, { path, mode: octal });
  }
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    throw new InputError("audit_key_unreadable", `cannot read the audit key ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { path });
  }
  const master = stripBytes(bytes);
  if (master.length === 0) throw new InputError("audit_key_unreadable", `the audit key ${path} is empty`, { path });
  return { path, explicit, master };
}

/** The v2 spine key: HKDF-SHA256(IKM = master, no salt, info = "lineage", 32 bytes). */
export function lineageKey(master: Uint8Array): Uint8Array {
  return new Uint8Array(hkdfSync("sha256", master, new Uint8Array(0), "lineage", 32));
}

/**
 * The audit key for sealing a run into its spine: the configured key, or
 * null when none is (no BERNSTEIN_AUDIT_KEY_PATH and no default key file —
 * a run never creates a secret the user did not ask for). A key file that
 * BERNSTEIN_AUDIT_KEY_PATH names but that does not exist yet is created as
 * upstream's load_or_create_audit_key creates it: 64 hex characters, mode
 * 0600, its folder 0700; a concurrent creator's key is adopted.
 */
export function auditKeyForSealing(env: Env = process.env): AuditKey | null {
  const { path, explicit } = auditKeyPath(env);
  if (explicit && !existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    let fd: number;
    try {
      fd = openSync(path, "wx", 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
        throw new InputError("audit_key_unreadable", `cannot create the audit key ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { path });
      }
      return loadAuditKey(env);
    }
    try {
      writeSync(fd, randomHex(32));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
  return loadAuditKey(env);
}
