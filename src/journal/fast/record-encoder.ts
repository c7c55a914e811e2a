import { fromWire, type WireError } from "./protocol.ts";
import { workerEntry } from "../../fsutil/worker-entry.ts";

/**
 * `journal record` hands an input line this long, holding an object of
 * this many members (at any depth), to a worker thread (record-worker.ts)
 * to be parsed and encoded, and awaits the row. Sorting and encoding a
 * million members takes seconds of CPU; done on the main thread it would
 * hold off the SIGINT/SIGTERM handler (src/cli/interrupt.ts) until it
 * finished. Other lines are encoded in place, streamed from their bytes
 * (quick even for a dense list near the row limit), without the cost of
 * the worker's second heap.
 */
export const WORKER_LINE_MIN = 1 << 20;
export const WORKER_MEMBERS_MIN = 1 << 15;

export interface EncodeRequest {
  kind: "encode";
  id: number;
  /** The input line (a copy: the worker owns it). */
  bytes: Uint8Array;
  /** Its 1-based line number on stdin. */
  line: number;
  ctx: { index: number; prev: string; ts: number; elapsed: number };
  /** The journal's row limit (a longer row is `row_too_large`). */
  limit: number;
}

export type EncodeReply =
  /** The row line, with its "\n", as bytes; and its event hash. */
  | { kind: "row"; id: number; line: Uint8Array; hash: string }
  /** The line is blank (whitespace only): skipped, as a short one would be. */
  | { kind: "blank"; id: number }
  | { kind: "error"; id: number; error: WireError };

function workerSpecifier(): string {
  return workerEntry("journal/fast/record-worker.ts");
}

/** One worker for the process's life, started on first use; referenced only while a line is being encoded. */
export class RecordEncoder {
  private worker: Worker | null = null;
  private nextId = 0;
  private readonly waiting = new Map<number, { resolve: (r: { line: Uint8Array; hash: string } | null) => void; reject: (e: Error) => void }>();

  private start(): Worker {
    // smol: a small heap, collected often (it holds one long line and its row at a time)
    const w = new Worker(workerSpecifier(), { smol: true } as WorkerOptions);
    w.onmessage = (event: MessageEvent<EncodeReply>) => {
      const msg = event.data;
      const p = this.waiting.get(msg.id);
      if (!p) return;
      this.waiting.delete(msg.id);
      if (this.waiting.size === 0) w.unref();
      if (msg.kind === "row") p.resolve({ line: msg.line, hash: msg.hash });
      else if (msg.kind === "blank") p.resolve(null);
      else p.reject(fromWire(msg.error, "record worker"));
    };
    w.onerror = (event: ErrorEvent) => {
      const err = new Error(`record worker failed: ${event.message}`);
      for (const p of this.waiting.values()) p.reject(err);
      this.waiting.clear();
      this.worker = null;
    };
    return w;
  }

  /** The row of input line `line` (`bytes`, copied) at `ctx`; null for a blank line; or the error the line deserves. */
  encode(bytes: Uint8Array, line: number, ctx: EncodeRequest["ctx"], limit: number): Promise<{ line: Uint8Array; hash: string } | null> {
    const w = (this.worker ??= this.start());
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      w.ref();
      w.postMessage({ kind: "encode", id, bytes, line, ctx, limit } satisfies EncodeRequest);
    });
  }

  /** Let the worker end (it holds nothing). */
  close(): void {
    if (!this.worker) return;
    this.worker.postMessage({ kind: "close" });
    this.worker.unref();
    this.worker = null;
  }
}
