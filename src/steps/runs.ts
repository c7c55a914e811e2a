import type { BulkProbe } from "../fsutil/lines.ts";
import type { ChainWalker } from "./walk.ts";

/**
 * A `LineSplitter` bulk probe over a chain walker's kernel that also tells
 * its reader what was taken: each run of rows the kernel verified,
 * `buf[start, to)` (whole `\n`-terminated lines, `rows` of them), while the
 * bytes are still there. With the walker's kernel in report mode the rows
 * come one by one first (`ChainWalker.stepKernel.onRow`); `nextRowLine()`
 * then numbers them.
 */
export class TakenRuns implements BulkProbe {
  /** Line number of the first row of the run being taken, and of the rows reported in it so far. */
  private firstLine = 1;
  private reported = 0;
  constructor(
    private readonly walker: ChainWalker,
    private readonly linesSoFar: () => number,
    private readonly onRun: (buf: Uint8Array, start: number, to: number, rows: number) => void,
  ) {}

  /** In report mode: the line number of the row being reported (call once per row). */
  nextRowLine(): number {
    return this.firstLine + this.reported++;
  }

  get taken(): number {
    return this.walker.taken;
  }

  take(buf: Uint8Array, start: number, end: number, maxLineBytes: number): number {
    this.firstLine = this.linesSoFar() + 1;
    this.reported = 0;
    const to = this.walker.take(buf, start, end, maxLineBytes);
    if (to > start) this.onRun(buf, start, to, this.walker.taken);
    return to;
  }
}
