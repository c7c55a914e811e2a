import type { BulkProbe } from "../fsutil/lines.ts";
import type { ChainWalker } from "./walk.ts";

/**
 * A `LineSplitter` bulk probe over a chain walker's kernel that also tells
 * its reader what was taken: each run of rows the kernel verified,
 * `buf[start, to)` (whole lines, `rows` of them, `crlfs` of those ended by
 * `\r\n` and the rest by `\n`), while the bytes are still there. Rows the kernel reports while it takes them
 * (`ChainWalker.stepKernel.onRow`) are numbered by `rowLine`.
 */
export class TakenRuns implements BulkProbe {
  /** Line number of the first row of the run being taken. */
  private firstLine = 1;
  constructor(
    private readonly walker: ChainWalker,
    private readonly linesSoFar: () => number,
    private readonly onRun: (buf: Uint8Array, start: number, to: number, rows: number, crlfs: number) => void,
  ) {}

  /** The line number of the row the kernel reports after taking `before` rows of this run (StepKernel.rowsBefore). */
  rowLine(before: number): number {
    return this.firstLine + before;
  }

  get taken(): number {
    return this.walker.taken;
  }

  take(buf: Uint8Array, start: number, end: number, maxLineBytes: number): number {
    this.firstLine = this.linesSoFar() + 1;
    const to = this.walker.take(buf, start, end, maxLineBytes);
    if (to > start) this.onRun(buf, start, to, this.walker.taken, this.walker.takenCrlfs);
    return to;
  }
}
