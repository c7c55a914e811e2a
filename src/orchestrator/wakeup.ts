/**
 * The tick loop's alarm clock: `sleep(ms)` returns early when `wake()` is
 * called (an attempt finished, a task was created, a stop was requested).
 * A wake that arrives while the loop is busy is remembered, so no event
 * between two sleeps is lost.
 */
export class Wakeup {
  private resolve: (() => void) | null = null;
  private pending = false;

  wake(): void {
    if (this.resolve) {
      const r = this.resolve;
      this.resolve = null;
      r();
    } else {
      this.pending = true;
    }
  }

  /** Forget wakes that arrived before the loop looked at the state again. */
  clear(): void {
    this.pending = false;
  }

  sleep(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((res) => {
      const timer = setTimeout(() => {
        this.resolve = null;
        res();
      }, ms);
      this.resolve = () => {
        clearTimeout(timer);
        res();
      };
    });
  }
}
