/**
 * Turns of the event loop for long synchronous work. A SIGINT/SIGTERM
 * handler (src/cli/interrupt.ts), worker messages and timers run only
 * between two turns: a loop that reads a whole journal without awaiting a
 * real turn holds them until it ends. Such a loop asks a TurnPacer now and
 * then and awaits nextTurn() when one is due.
 */

/** One turn of the event loop (an awaited resolved promise is not one: it runs no handler). */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Says when a turn is due: `everyMs` of work since the last, looked at every `checkEvery` calls. */
export class TurnPacer {
  private last = performance.now();
  private calls = 0;

  constructor(
    private readonly everyMs = 100,
    private readonly checkEvery = 1,
  ) {}

  due(): boolean {
    if (++this.calls < this.checkEvery) return false;
    this.calls = 0;
    const now = performance.now();
    if (now - this.last < this.everyMs) return false;
    this.last = now;
    return true;
  }
}

/**
 * A full collection once the resident set grew `growth` bytes since the
 * last one, for a long pass whose garbage the engine collects late (read
 * buffers and copies outside the heap it watches, values made per row).
 * Collecting at every step holds the peak a little lower but marks the
 * whole live heap each time. The growth is counted from the set's low
 * since that collection: the memory it frees is given back to the system
 * after it returns, so the size read right after it stands above the floor.
 */
export class GrowthCollector {
  private mark: number;

  /** `residentSet`: how the set's size is read (tests give their own). */
  constructor(
    private readonly growth = 8 << 20,
    private readonly residentSet: () => number = () => process.memoryUsage.rss(),
  ) {
    this.mark = residentSet();
  }

  /** Collect now if the set grew enough; true when it did. */
  poll(): boolean {
    const rss = this.residentSet();
    if (rss < this.mark) this.mark = rss;
    if (rss <= this.mark + this.growth) return false;
    Bun.gc(true);
    this.mark = this.residentSet();
    return true;
  }
}
