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
