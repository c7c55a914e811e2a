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

  /** One event at `t` (its facts as arguments: an object per row would be garbage). */
  add(t: number, tick: boolean, cost: number | null, tokens: number): void {
    const i = this.slot(t);
    this.events[i]!++;
    if (tick) this.ticks[i]!++;
    if (tokens) this.tokens[i]! += tokens;
    if (cost !== null) this.cost[i] = Math.max(Number.isNaN(this.cost[i]!) ? -Infinity : this.cost[i]!, cost);
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

export interface DensityJson {
  /** Milliseconds per bucket (the same clock as the run's series). */
  bucket_ms: number;
  /** How attempts are grouped into lanes: role, agent or model. */
  by: string;
  /** One entry per lane, in order of first appearance. */
  lanes: { key: string; attempts: number; busy: number[]; failed: number[] }[];
  /** Attempts of lanes beyond the lane bound, drawn in the "(other)" lane. */
  folded_attempts: number;
}

/**
 * Attempts as curves, one lane per role (agent, model), in a fixed number
 * of buckets with the same doubling span as `Series`: per bucket, how busy
 * the lane was (attempt-milliseconds, drawn as the mean number of attempts
 * running at once) and how many of its attempts that started there did not
 * end done. Memory and output are bounded by `maxLanes × BUCKETS` whatever
 * the number of attempts; lanes beyond `maxLanes` fold into "(other)".
 */
export class LaneDensity {
  private bucketMs = 1000 / BUCKETS;
  private maxT = 0;
  private readonly lanes = new Map<string, { attempts: number; busy: Float64Array; failed: Float64Array }>();
  private folded = 0;

  constructor(
    readonly by: string,
    private readonly maxLanes: number,
  ) {}

  add(key: string, start: number, end: number, failed: boolean): void {
    const s = Number.isFinite(start) && start > 0 ? start : 0;
    const e = Math.max(s, Number.isFinite(end) ? end : s);
    this.maxT = Math.max(this.maxT, e);
    while (e >= this.bucketMs * BUCKETS) this.widen();
    const lane = this.lane(key);
    lane.attempts++;
    const first = Math.min(BUCKETS - 1, Math.floor(s / this.bucketMs));
    if (failed) lane.failed[first]!++;
    const last = Math.min(BUCKETS - 1, Math.floor(e / this.bucketMs));
    for (let i = first; i <= last; i++) {
      const lo = Math.max(s, i * this.bucketMs);
      const hi = Math.min(e, (i + 1) * this.bucketMs);
      if (hi > lo) lane.busy[i]! += hi - lo;
    }
  }

  private lane(key: string): { attempts: number; busy: Float64Array; failed: Float64Array } {
    const have = this.lanes.get(key);
    if (have) return have;
    if (this.lanes.size >= this.maxLanes - 1 && key !== OTHER_LANE) {
      this.folded++;
      return this.lane(OTHER_LANE);
    }
    const lane = { attempts: 0, busy: new Float64Array(BUCKETS), failed: new Float64Array(BUCKETS) };
    this.lanes.set(key, lane);
    return lane;
  }

  /** Carry the span on to `t` (the run's end), so the lanes share the run's time axis. */
  extend(t: number): void {
    const ms = Number.isFinite(t) && t > 0 ? t : 0;
    this.maxT = Math.max(this.maxT, ms);
    while (ms >= this.bucketMs * BUCKETS) this.widen();
  }

  private widen(): void {
    for (const lane of this.lanes.values()) {
      for (const a of [lane.busy, lane.failed]) {
        for (let i = 0; i < BUCKETS / 2; i++) a[i] = a[2 * i]! + a[2 * i + 1]!;
        a.fill(0, BUCKETS / 2);
      }
    }
    this.bucketMs *= 2;
  }

  toJson(): DensityJson {
    const used = Math.min(BUCKETS, Math.floor(this.maxT / this.bucketMs) + 1);
    const lanes = [...this.lanes].map(([key, l]) => ({
      key,
      attempts: l.attempts,
      // Mean attempts running at once over the bucket, to two decimals.
      busy: Array.from(l.busy.subarray(0, used), (v) => Math.round((v / this.bucketMs) * 100) / 100),
      failed: Array.from(l.failed.subarray(0, used)),
    }));
    return { bucket_ms: this.bucketMs, by: this.by, lanes, folded_attempts: this.folded };
  }
}

/** The lane that holds attempts of lanes beyond the bound. */
export const OTHER_LANE = "(other)";
