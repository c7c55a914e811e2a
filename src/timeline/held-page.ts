import type { FastVerifyResult } from "../journal/fast/engine.ts";

/**
 * The page's sink while its rows are read as the journal is verified on
 * worker threads: the page begins with the verdict's banner, so the
 * chunks made before the verdict is known are held (a page is bounded:
 * generate.ts), then its head and the held chunks are written, and every
 * chunk after them as it comes. Nothing is written if the verify fails,
 * if its snapshot is not the one the rows were read to (a writer appended
 * in between: the page is drawn again from the verdict), or if `head`
 * throws (a refusal made before the page's first byte).
 */
export class HeldPage {
  private verdict: FastVerifyResult | null = null;
  private failed = false;
  private held: (string | Uint8Array)[] = [];
  private state: "holding" | "writing" | "again" | "failed" = "holding";
  /** False once the sink's reader went away. */
  open = true;

  constructor(
    verifying: Promise<FastVerifyResult>,
    /** The bytes the rows are read to. */
    private readonly end: number,
    /** The page's head for the verdict (may throw: nothing is written then). */
    private readonly head: (verdict: FastVerifyResult) => string,
    private readonly sink: (chunk: string | Uint8Array) => void | boolean | Promise<void | boolean>,
  ) {
    verifying.then(
      (v) => void (this.verdict = v),
      () => void (this.failed = true),
    );
  }

  /** The verify's snapshot is not the rows' (the caller draws the page again, after the verify). */
  get again(): boolean {
    return this.state === "again";
  }

  /** Whether the page went out (its head written). */
  get started(): boolean {
    return this.state === "writing";
  }

  /** The page's sink: false once the pass is to stop (the verify failed, the snapshots differ, the reader went away). */
  readonly put = async (chunk: string | Uint8Array): Promise<boolean> => {
    if (this.state === "holding" && !(await this.begin())) {
      if (this.state === "holding") this.held.push(chunk);
      return this.state === "holding";
    }
    if (this.state !== "writing") return false;
    return (this.open &&= (await this.sink(chunk)) !== false);
  };

  /** Write the head and the held chunks once the verdict is known; whether the page is being written. */
  private async begin(): Promise<boolean> {
    if (this.failed) this.state = "failed";
    if (this.verdict === null) return false;
    if (this.verdict.snapshot_bytes !== this.end) this.state = "again";
    if (this.state !== "holding") {
      this.held = [];
      return false;
    }
    const head = this.head(this.verdict);
    this.state = "writing";
    this.open = (await this.sink(head)) !== false;
    for (const c of this.held.splice(0)) if (this.open) this.open = (await this.sink(c)) !== false;
    return true;
  }
}
