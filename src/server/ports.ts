import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { UsageError } from "../errors/index.ts";

/**
 * `auto` (the default of `bernstein server` and `bernstein run`): the port
 * derived from the state directory, or any free port when that one is
 * taken. Two runs on one machine (two CI jobs on one runner) never collide
 * on a fixed port, and a state directory keeps its port across restarts
 * while it is free. Clients find the real port in server.json.
 */
export type PortChoice = number | "auto";

/** Derived ports live in [20000, 30000): below Linux's ephemeral range (32768+) and clear of the usual dev ports. */
export const DERIVED_PORT_BASE = 20000;
export const DERIVED_PORT_SPAN = 10000;

/** Parse a `--port` value: `auto`, or an integer 0-65535 (0 = any free port). */
export function parsePort(raw: string, flag = "--port"): PortChoice {
  if (raw.trim() === "auto") return "auto";
  if (!/^\d{1,5}$/.test(raw.trim()) || Number(raw) > 65535) {
    throw new UsageError(`${flag} must be 'auto' or an integer between 0 and 65535, got '${raw}'`);
  }
  return Number(raw);
}

/** The port `auto` tries first for this state directory (stable for its real path). */
export function derivedPort(sddDir: string): number {
  let path = resolve(sddDir);
  try {
    path = realpathSync(path);
  } catch {
    /* not created yet: its resolved path */
  }
  const h = createHash("sha256").update(path, "utf8").digest();
  return DERIVED_PORT_BASE + (h.readUInt32BE(0) % DERIVED_PORT_SPAN);
}
