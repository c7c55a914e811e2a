/**
 * Values over the run's time in a fixed number of buckets, whatever the
 * run's length: the span starts at 1 s and doubles (pairs of buckets merge)
 * whenever a row lies beyond it, so one pass needs neither the run's end in
 * advance nor memory that grows with the journal.
 */
export const BUCKETS = 512;

export interface SeriesJson {
  /** Milliseconds per bucket. */
  bucket_ms: number;
  events: number[];
  ticks: number[];
  /** Cumulative cost at the end of each bucket (carried forward), null before the first figure. */
  cost: (number | null)[];
  /** Tokens recorded in each bucket (per-bucket sums; the page accumulates them). */
  tokens: number[];
}

export class Series {
  private bucketMs = 1000 / BUCKETS;
  private readonly events = new Float64Array(BUCKETS);
  private readonly ticks = new Float64Array(BUCKETS);
  private readonly tokens = new Float64Array(BUCKETS);
  /** Last cumulative cost seen in each bucket (NaN: none). */
  private readonly cost = new Float64Array(BUCKETS).fill(NaN);
  private maxT = 0;

  add(t: number, f: { tick: boolean; cost: number | null; tokens: number }): void {
    const i = this.slot(t);
    this.events[i]!++;
    if (f.tick) this.ticks[i]!++;
    if (f.tokens) this.tokens[i]! += f.tokens;
    if (f.cost !== null) this.cost[i] = Math.max(Number.isNaN(this.cost[i]!) ? -Infinity : this.cost[i]!, f.cost);
  }

  private slot(t: number): number {
    const ms = Number.isFinite(t) && t > 0 ? t : 0;
    this.maxT = Math.max(this.maxT, ms);
    while (ms >= this.bucketMs * BUCKETS) this.widen();
    return Math.min(BUCKETS - 1, Math.floor(ms / this.bucketMs));
  }

  private widen(): void {
    for (const a of [this.events, this.ticks, this.tokens]) {
      for (let i = 0; i < BUCKETS / 2; i++) a[i] = a[2 * i]! + a[2 * i + 1]!;
      a.fill(0, BUCKETS / 2);
    }
    const c = this.cost;
    for (let i = 0; i < BUCKETS / 2; i++) {
      const [x, y] = [c[2 * i]!, c[2 * i + 1]!];
      c[i] = Number.isNaN(y) ? x : Number.isNaN(x) ? y : Math.max(x, y);
    }
    c.fill(NaN, BUCKETS / 2);
    this.bucketMs *= 2;
  }

  toJson(): SeriesJson {
    // Only the buckets up to the last row; the cost curve carries its last figure forward.
    const used = Math.min(BUCKETS, Math.floor(this.maxT / this.bucketMs) + 1);
    const cost: (number | null)[] = [];
    let last: number | null = null;
    for (let i = 0; i < used; i++) {
      const v = this.cost[i]!;
      if (!Number.isNaN(v)) last = last === null ? v : Math.max(last, v);
      cost.push(last);
    }
    return {
      bucket_ms: this.bucketMs,
      events: Array.from(this.events.subarray(0, used)),
      ticks: Array.from(this.ticks.subarray(0, used)),
      cost,
      tokens: Array.from(this.tokens.subarray(0, used)),
    };
  }
}
