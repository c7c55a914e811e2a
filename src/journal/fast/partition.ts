import { readSync } from "node:fs";

/**
 * Split [0, size) of a journal into ranges at line boundaries: every
 * internal boundary is just after a line feed, so no physical line (not even
 * a CRLF pair) spans two ranges.
 *
 * In a full verify, range k > 0 must first learn how many rows precede it
 * (a newline census of range k-1, about ten times faster than verifying),
 * so later ranges get slightly less to verify: with r = verify speed /
 * census speed, sizes follow s_k = s_0 - r * s_(k-1), which makes every
 * thread finish at about the same time. Links-only needs no census: equal
 * sizes.
 */

/** Relative sizes of `n` ranges (sum 1). `ratio` = verify speed / census speed (0 = equal sizes). */
export function rangeWeights(n: number, ratio: number): number[] {
  const w: number[] = [1];
  for (let k = 1; k < n; k++) w.push(Math.max(0.05, 1 - ratio * w[k - 1]!));
  const sum = w.reduce((a, b) => a + b, 0);
  return w.map((x) => x / sum);
}

const WINDOW = 1 << 16;

/** First offset just after a line feed at or after `from`, or `end` when there is none. */
function nextLineStart(fd: number, from: number, end: number): number {
  const buf = new Uint8Array(WINDOW);
  for (let pos = from; pos < end; ) {
    const n = readSync(fd, buf, 0, Math.min(WINDOW, end - pos), pos);
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
export function partition(fd: number, end: number, weights: readonly number[]): number[] {
  const bounds = [0];
  let acc = 0;
  for (let k = 0; k < weights.length - 1; k++) {
    acc += weights[k]!;
    const target = Math.max(bounds[bounds.length - 1]!, Math.floor(end * acc));
    const b = target === 0 ? 0 : nextLineStart(fd, target - 1, end);
    if (b > bounds[bounds.length - 1]! && b < end) bounds.push(b);
  }
  bounds.push(end);
  return bounds;
}
