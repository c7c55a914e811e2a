/**
 * Worker-thread entry of the fast journal verifier: runs census and verify
 * jobs on byte ranges, one at a time, reusing one RangeVerifier (its
 * buffers) for the thread's life. Listed in scripts/worker-entrypoints.txt
 * so the compiled binary embeds it.
 */
import type { FromWorker, ToWorker } from "./protocol.ts";
import { toWire } from "./protocol.ts";
import { RangeVerifier } from "./range.ts";

declare const self: Worker;

let verifier: RangeVerifier | null = null;
let progress: Float64Array | null = null;
let slot = 0;

function post(msg: FromWorker): void {
  self.postMessage(msg);
}

self.onmessage = (event: MessageEvent<ToWorker>) => {
  const msg = event.data;
  if (msg.kind === "init") {
    progress = new Float64Array(msg.progress);
    slot = msg.slot;
    verifier = new RangeVerifier();
    post({ kind: "ready" });
    return;
  }
  const v = verifier ?? (verifier = new RangeVerifier());
  try {
    if (msg.kind === "census") {
      post({ kind: "census", id: msg.id, census: v.census(msg.task) });
    } else {
      const report = progress
        ? (done: number) => {
            progress![slot] = done;
          }
        : undefined;
      const result = v.run(msg.task, report);
      if (progress) progress[slot] = 0;
      post({ kind: "result", id: msg.id, result });
    }
  } catch (err) {
    post({ kind: "error", id: msg.id, error: toWire(err) });
  }
};
