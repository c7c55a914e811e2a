/** The one progress line (src/cli/progress.ts): TTY only, after a delay, monotonic, erased at the end and on a signal. */
import { describe, expect, test } from "bun:test";
import { byteProgress, clearProgress, progressLine, type ProgressSink } from "../../src/cli/progress.ts";

function fakeTerminal(tty: boolean): ProgressSink & { out: string[] } {
  const out: string[] = [];
  return { out, isTTY: () => tty, write: (s) => void out.push(s) };
}

/** A clock the test moves by hand (ms). */
function clock(): { now: () => number; advance(ms: number): void } {
  let t = 0;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

describe("byteProgress", () => {
  test("draws nothing when stderr is not a terminal", () => {
    const sink = fakeTerminal(false);
    const c = clock();
    const p = byteProgress("verifying", { sink, now: c.now });
    c.advance(5000);
    p.onProgress(50e6, 100e6);
    p.finish();
    expect(sink.out).toEqual([]);
  });

  test("on a terminal: silent for the first second, then bytes, rate and ETA on one rewritten line, erased at the end", () => {
    const sink = fakeTerminal(true);
    const c = clock();
    const p = byteProgress("verifying", { sink, now: c.now });
    p.onProgress(1e6, 100e6);
    expect(sink.out).toEqual([]);
    c.advance(2000);
    p.onProgress(50e6, 100e6);
    expect(sink.out).toEqual(["\rverifying 50 MB / 100 MB (50%), 25 MB/s, ETA 2s\x1b[K"]);
    p.finish();
    expect(sink.out[1]).toBe("\r\x1b[K");
    p.finish();
    expect(sink.out).toHaveLength(2);
  });

  test("monotonic: out-of-order samples from several threads and a growing total never move it back", () => {
    const sink = fakeTerminal(true);
    const c = clock();
    const p = byteProgress("verifying", { sink, now: c.now, delayMs: 0 });
    const shown: number[] = [];
    const samples: [number, number][] = [
      [10e6, 100e6],
      [40e6, 100e6],
      [30e6, 100e6], // a thread's earlier sample arrives late
      [60e6, 100e6],
      [60e6, 120e6], // a redo: the total grows
      [90e6, 120e6],
      [120e6, 120e6],
      [130e6, 120e6], // more than the total: clamped
    ];
    for (const [d, t] of samples) {
      c.advance(250);
      p.onProgress(d, t);
      shown.push(Number(/\((\d+)%\)/.exec(sink.out.at(-1)!)![1]));
    }
    for (let i = 1; i < shown.length; i++) expect(shown[i]!).toBeGreaterThanOrEqual(shown[i - 1]!);
    expect(shown.at(-1)).toBe(100);
    expect(p.done).toBe(120e6);
  });
});

describe("progressLine", () => {
  test("clearProgress erases every line still drawn (a signal), and only those", () => {
    const a = fakeTerminal(true);
    const b = fakeTerminal(true);
    const la = progressLine(a);
    const lb = progressLine(b);
    la.draw("waiting 1s");
    lb.draw("other");
    lb.clear();
    clearProgress();
    expect(a.out).toEqual(["\rwaiting 1s\x1b[K", "\r\x1b[K"]);
    expect(b.out).toEqual(["\rother\x1b[K", "\r\x1b[K"]);
  });
});
