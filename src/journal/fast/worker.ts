/**
 * Worker-thread entry of the fast journal verifier: claims ranges of a run
 * from the shared counter and verifies them, one at a time, reusing one
 * RangeVerifier (its buffers) for the thread's life. Listed in
 * scripts/worker-entrypoints.txt so the compiled binary embeds it.
 */
import type { FromWorker, RunMessage, ToWorker } from "./protocol.ts";
import { useKernelModule } from "./kernel.ts";
import { toWire } from "./protocol.ts";
import { RangeVerifier } from "./range.ts";

declare const self: Worker;

let verifier: RangeVerifier | null = null;
let progress: Float64Array | null = null;
let slot = 0;

function post(msg: FromWorker): void {
  self.postMessage(msg);
}

function run(msg: RunMessage): void {
  const v = verifier ?? (verifier = new RangeVerifier());
  const next = new Int32Array(msg.next);
  // The slot holds this worker's bytes of the whole run (finished ranges
  // plus the current one), so the sum the main thread reads never goes back
  // when a range ends, even while its event loop cannot take our results.
  let finished = 0;
  const report = progress
    ? (done: number) => {
        progress![slot] = finished + done;
      }
    : undefined;
  for (;;) {
    const k = Atomics.add(next, 0, 1);
    if (k >= msg.tasks.length) break;
    try {
      const task = msg.tasks[k]!;
      const result = v.run(task, report, next);
      finished += task.end - task.start;
      if (progress) progress[slot] = finished;
      post({ kind: "result", id: msg.id, k, result });
    } catch (err) {
      v.settle();
      post({ kind: "error", id: msg.id, k, error: toWire(err) });
      return;
    }
  }
  v.settle();
  post({ kind: "idle", id: msg.id });
}

self.onmessage = (event: MessageEvent<ToWorker>) => {
  const msg = event.data;
  if (msg.kind === "init") {
    progress = new Float64Array(msg.progress);
    slot = msg.slot;
    if (msg.kernel) useKernelModule(msg.kernel);
    verifier = new RangeVerifier();
    return;
  }
  if (msg.kind === "close") {
    (self as unknown as { close(): void }).close();
    return;
  }
  if (msg.kind === "collect") {
    Bun.gc(true);
    return;
  }
  run(msg);
};
