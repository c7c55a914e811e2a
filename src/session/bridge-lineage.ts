import { join } from "node:path";
import * as v from "valibot";
import { f, toPlain } from "./files.ts";
import { appendJsonLine, readJsonLines, type AppendOptions, type ReadRowsResult } from "./jsonl-log.ts";

/**
 * Bridge lineage: one row per connect/disconnect/rebuild/credential refresh
 * of a remote bridge session, so a gap in a remote agent's work can be
 * explained afterwards. `.sdd/runtime/bridge_lineage.jsonl`, rotated at 10 MiB.
 */
export const BRIDGE_REASONS = ["credential_refresh", "timeout", "network_error", "explicit_reconnect", "unknown"] as const;
export type BridgeReason = (typeof BRIDGE_REASONS)[number];

/** Documented event types; others are kept as written (the Python field is a free string). */
export const BRIDGE_EVENT_TYPES = ["connect", "disconnect", "rebuild", "credential_refresh"] as const;

export interface BridgeLineageEvent {
  session_id: string;
  event_type: string;
  reason: BridgeReason;
  ts: number;
  remote_url: string;
  /** Epoch seconds when the bridge credential expires, when known. */
  credential_expiry: number | null;
  /** Seconds the bridge was down before this event, when known. */
  gap_seconds: number | null;
}

/** An unknown reason reads back as `unknown` (the enum's default). */
const reasonSchema = v.fallback(v.picklist(BRIDGE_REASONS), "unknown");

export const BridgeLineageEventSchema = v.object({
  session_id: v.string(),
  event_type: v.string(),
  reason: v.optional(reasonSchema, "unknown"),
  ts: v.number(),
  remote_url: v.optional(v.string(), ""),
  credential_expiry: v.optional(v.nullable(v.number()), null),
  gap_seconds: v.optional(v.nullable(v.number()), null),
});

export function bridgeLineagePath(sddDir: string): string {
  return join(sddDir, "runtime", "bridge_lineage.jsonl");
}

export type NewBridgeEvent = Pick<BridgeLineageEvent, "session_id" | "event_type"> & Partial<Omit<BridgeLineageEvent, "session_id" | "event_type">>;

/** Append one event (ts defaults to now, reason to `unknown`); returns the row written. */
export function recordBridgeEvent(sddDir: string, event: NewBridgeEvent, options: AppendOptions = {}): BridgeLineageEvent {
  const row: BridgeLineageEvent = {
    session_id: event.session_id,
    event_type: event.event_type,
    reason: v.parse(reasonSchema, event.reason ?? "unknown"),
    ts: event.ts ?? Date.now() / 1000,
    remote_url: event.remote_url ?? "",
    credential_expiry: event.credential_expiry ?? null,
    gap_seconds: event.gap_seconds ?? null,
  };
  appendJsonLine(
    bridgeLineagePath(sddDir),
    {
      session_id: row.session_id,
      event_type: row.event_type,
      reason: row.reason,
      ts: f(row.ts),
      remote_url: row.remote_url,
      credential_expiry: row.credential_expiry === null ? null : f(row.credential_expiry),
      gap_seconds: row.gap_seconds === null ? null : f(row.gap_seconds),
    },
    options,
  );
  return row;
}

/** Every readable event, oldest first; optionally only one session's. */
export function readBridgeLineage(sddDir: string, sessionId?: string): ReadRowsResult<BridgeLineageEvent> {
  const read = readJsonLines(bridgeLineagePath(sddDir), (row) => {
    const r = v.safeParse(BridgeLineageEventSchema, toPlain(row));
    return r.success ? r.output : null;
  });
  return sessionId === undefined ? read : { ...read, rows: read.rows.filter((r) => r.session_id === sessionId) };
}
