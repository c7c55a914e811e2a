import { BernsteinError, isErrorCode, type ExitCodeValue } from "../../errors/index.ts";
import type { RangeResult, RangeTask } from "./range.ts";

/**
 * Messages between the fast-verify coordinator and its worker threads.
 * Both ends are this code base, built into the same binary, so the types
 * are the contract (structured clone carries plain objects and arrays).
 */

/**
 * A verify run: every thread (this one and each worker) claims the next
 * unclaimed range with an atomic add on `next[0]` and verifies it, until
 * none is left. No thread waits for another to hand it work, so a worker
 * keeps going while the main thread is busy with a range of its own.
 */
export interface RunMessage {
  kind: "run";
  id: number;
  tasks: RangeTask[];
  /** Int32Array over it: [0] the next range to claim, [1] the long-line gate (range.ts LONG_LINE_GATE). */
  next: SharedArrayBuffer;
}

export interface InitMessage {
  kind: "init";
  /** Per-worker progress slots (bytes verified in the current range). */
  progress: SharedArrayBuffer;
  slot: number;
  /** The main thread's compiled verify kernel: shared, so no thread compiles it again (see kernel.ts); null for a links-only run, which never hashes. */
  kernel: WebAssembly.Module | null;
}

/** The pool is done with this worker: it ends itself (no terminate() for the process's exit to wait on). */
export interface CloseMessage {
  kind: "close";
}

/** A kept pool's verify is over and another will follow: collect what it left (see VerifyWorkers). */
export interface CollectMessage {
  kind: "collect";
}

export type ToWorker = InitMessage | RunMessage | CloseMessage | CollectMessage;

/** A BernsteinError (or any error) flattened for postMessage. */
export interface WireError {
  name: string;
  message: string;
  code: string | null;
  exitCode: number | null;
  facts: Record<string, unknown>;
}

export type FromWorker =
  /** Range `k` of run `id` is verified. */
  | { kind: "result"; id: number; k: number; result: RangeResult }
  /** Range `k` of run `id` failed with an error (the worker stops claiming). */
  | { kind: "error"; id: number; k: number; error: WireError }
  /** No range of run `id` is left to claim. */
  | { kind: "idle"; id: number };

export function toWire(err: unknown): WireError {
  if (err instanceof BernsteinError) {
    return { name: err.name, message: err.message, code: err.code, exitCode: err.exitCode, facts: err.facts };
  }
  const e = err instanceof Error ? err : new Error(String(err));
  return { name: e.name, message: e.message, code: null, exitCode: null, facts: {} };
}

/** Re-raise a worker's error in the coordinator with its code and exit status intact. */
export function fromWire(w: WireError, worker = "fast verify worker"): Error {
  if (w.code !== null && w.exitCode !== null && isErrorCode(w.code)) {
    const err = new BernsteinError(w.code, w.message, w.exitCode as ExitCodeValue, w.facts);
    err.name = w.name;
    return err;
  }
  const err = new Error(`${worker} failed: ${w.message}`);
  err.name = w.name;
  return err;
}
