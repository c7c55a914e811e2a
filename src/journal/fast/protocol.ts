import { BernsteinError, type ExitCodeValue } from "../../errors.ts";
import type { RangeCensus, RangeResult, RangeTask } from "./range.ts";

/**
 * Messages between the fast-verify coordinator and its worker threads.
 * Both ends are this code base, built into the same binary, so the types
 * are the contract (structured clone carries plain objects and arrays).
 */

export type Job = { kind: "census"; id: number; task: RangeTask } | { kind: "verify"; id: number; task: RangeTask };

export interface InitMessage {
  kind: "init";
  /** Per-worker progress slots (bytes verified in the current job). */
  progress: SharedArrayBuffer;
  slot: number;
}

export type ToWorker = InitMessage | Job;

/** A BernsteinError (or any error) flattened for postMessage. */
export interface WireError {
  name: string;
  message: string;
  code: string | null;
  exitCode: number | null;
  facts: Record<string, unknown>;
}

export type FromWorker =
  | { kind: "ready" }
  | { kind: "census"; id: number; census: RangeCensus }
  | { kind: "result"; id: number; result: RangeResult }
  | { kind: "error"; id: number; error: WireError };

export function toWire(err: unknown): WireError {
  if (err instanceof BernsteinError) {
    return { name: err.name, message: err.message, code: err.code, exitCode: err.exitCode, facts: err.facts };
  }
  const e = err instanceof Error ? err : new Error(String(err));
  return { name: e.name, message: e.message, code: null, exitCode: null, facts: {} };
}

/** Re-raise a worker's error in the coordinator with its code and exit status intact. */
export function fromWire(w: WireError): Error {
  if (w.code !== null && w.exitCode !== null) {
    const err = new BernsteinError(w.code, w.message, w.exitCode as ExitCodeValue, w.facts);
    err.name = w.name;
    return err;
  }
  const err = new Error(`fast verify worker failed: ${w.message}`);
  err.name = w.name;
  return err;
}
