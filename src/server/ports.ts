import { UsageError } from "../errors.ts";

/** Parse a `--port` value: an integer 0-65535 (0 = any free port). */
export function parsePort(raw: string, flag = "--port"): number {
  if (!/^\d{1,5}$/.test(raw.trim()) || Number(raw) > 65535) {
    throw new UsageError(`${flag} must be an integer between 0 and 65535, got '${raw}'`);
  }
  return Number(raw);
}
