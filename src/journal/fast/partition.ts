import type { OpenInput } from "../../fsutil/input.ts";

/**
 * Split [0, size) of a journal into ranges at line boundaries: every
 * internal boundary is just after a line feed, so no physical line (not even
 * a CRLF pair) spans two ranges.
 */

const WINDOW = 1 << 16;

/** First offset just after a line feed at or after `from`, or `end` when there is none. */
async function nextLineStart(input: OpenInput, from: number, end: number): Promise<number> {
  const buf = new Uint8Array(WINDOW);
  for (let pos = from; pos < end; ) {
    const len = Math.min(WINDOW, end - pos);
    // A remote object's probes are awaited: this thread stays free for a SIGINT/SIGTERM.
    const n = input.readAsync ? await input.readAsync(buf, 0, len, pos) : input.read(buf, 0, len, pos);
    if (n === 0) break;
    const i = buf.subarray(0, n).indexOf(10);
    if (i >= 0) return pos + i + 1;
    pos += n;
  }
  return end;
}

/**
 * Range boundaries [b0 = 0, b1, ..., bn = end] for the given weights; ranges
 * that would be empty (no line feed in their share) are merged away.
 */
export async function partition(input: OpenInput, end: number, weights: readonly number[]): Promise<number[]> {
  const bounds = [0];
  let acc = 0;
  for (let k = 0; k < weights.length - 1; k++) {
    acc += weights[k]!;
    const target = Math.max(bounds[bounds.length - 1]!, Math.floor(end * acc));
    const b = target === 0 ? 0 : await nextLineStart(input, target - 1, end);
    if (b > bounds[bounds.length - 1]! && b < end) bounds.push(b);
  }
  bounds.push(end);
  return bounds;
}
