import { closeSync, openSync, readSync, unlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastVerifyResult } from "../journal/fast/engine.ts";

/**
 * The page's sink while its rows are read as the journal is verified (by
 * the verify itself, or beside it on worker threads): the page begins
 * with the verdict's banner, so the chunks made before the verdict is
 * known are held (a page is bounded: generate.ts), then its head and the
 * held chunks are written, and every chunk after them as it comes.
 * Nothing is written if the verify fails, if the rows read are not the
 * verdict's (a writer appended in between, or the verify handed only some:
 * the page is drawn again from the verdict), or if `head` throws (a
 * refusal made before the page's first byte).
 *
 * The first HELD_IN_MEMORY bytes are held in memory, the rest in a spool
 * file (unlinked once open, so nothing is left behind): the table's first
 * events fill megabytes of page at once, and memory held for them would
 * stand on top of the verifying thread's. Without a spool (no temporary
 * directory to write) they are held in memory.
 */
export const HELD_IN_MEMORY = 1 << 20;
/** The spool is read back in pieces of this size. */
const SPOOL_PIECE = 1 << 18;

export class HeldPage {
  private verdict: FastVerifyResult | null = null;
  private failed = false;
  private held: (string | Uint8Array)[] = [];
  private heldBytes = 0;
  private spool: Spool | null = null;
  private state: "holding" | "writing" | "again" | "failed" = "holding";
  /** False once the sink's reader went away. */
  open = true;

  constructor(
    verifying: Promise<FastVerifyResult>,
    /** Whether the rows read are the verdict's (else the page is drawn again: `again`). */
    private readonly rowsAreVerdicts: (verdict: FastVerifyResult) => boolean,
    /** The page's head for the verdict (may throw: nothing is written then). */
    private readonly head: (verdict: FastVerifyResult) => string,
    private readonly sink: (chunk: string | Uint8Array) => void | boolean | Promise<void | boolean>,
    /** Where the spool is made (tests). */
    private readonly spoolDir = tmpdir(),
  ) {
    verifying.then(
      (v) => void (this.verdict = v),
      () => void (this.failed = true),
    );
  }

  /** The rows read are not the verdict's (the caller draws the page again, after the verify). */
  get again(): boolean {
    return this.state === "again";
  }

  /** Whether the page went out (its head written). */
  get started(): boolean {
    return this.state === "writing";
  }

  /** Whether chunks went to a spool file. */
  get spooled(): boolean {
    return this.spool !== null;
  }

  /** The page's sink: false once the pass is to stop (the verify failed, the rows are not the verdict's, the reader went away). */
  readonly put = async (chunk: string | Uint8Array): Promise<boolean> => {
    if (this.state === "holding" && !(await this.begin())) {
      if (this.state === "holding") this.hold(chunk);
      return this.state === "holding";
    }
    if (this.state !== "writing") return false;
    return (this.open &&= (await this.sink(chunk)) !== false);
  };

  /**
   * Between two chunks of the pass: the head and the held chunks go out as
   * soon as the verdict is known, not at the next chunk (a page whose
   * table ended early may make none until its end, holding the spool and
   * reading it back then, on top of the pass's peak). False once the pass
   * is to stop, as `put` says.
   */
  readonly settle = async (): Promise<boolean> => {
    if (this.state === "holding") await this.begin();
    return this.state === "holding" || (this.state === "writing" && this.open);
  };

  /**
   * A chunk made by the pass that makes the verdict (it cannot be known
   * before the pass ends): held at once, as `put` would hold it, so the
   * pass need not wait. False once the page is not held (it failed).
   */
  holdNow(chunk: string | Uint8Array): boolean {
    if (this.state !== "holding" || this.verdict !== null || this.failed) return false;
    this.hold(chunk);
    return true;
  }

  /** Let the spool go (it is unlinked already: its space is freed with it). */
  close(): void {
    this.spool?.close();
    this.spool = null;
  }

  private hold(chunk: string | Uint8Array): void {
    // (a string's length in UTF-16 units: near enough to its bytes for where the spool begins)
    if (this.spool === null && !this.inMemory && this.heldBytes + chunk.length > HELD_IN_MEMORY) {
      this.spool = Spool.create(this.spoolDir);
      this.inMemory = this.spool === null;
    }
    if (this.spool !== null) {
      try {
        this.spool.put(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
        return;
      } catch {
        // a spool that cannot be written (a full disk): what it holds comes back, and the rest is held in memory
        this.held.push(...this.spool.chunks());
        this.close();
        this.inMemory = true;
      }
    }
    this.held.push(chunk);
    this.heldBytes += chunk.length;
  }

  /** Held in memory whatever its size: no spool could be made, or written. */
  private inMemory = false;

  /** Write the head and the held chunks once the verdict is known; whether the page is being written. */
  private async begin(): Promise<boolean> {
    if (this.failed) this.state = "failed";
    if (this.verdict === null) return false;
    if (!this.rowsAreVerdicts(this.verdict)) this.state = "again";
    if (this.state !== "holding") {
      this.held = [];
      this.close();
      return false;
    }
    const head = this.head(this.verdict);
    this.state = "writing";
    this.open = (await this.sink(head)) !== false;
    for (const c of this.held.splice(0)) if (this.open) this.open = (await this.sink(c)) !== false;
    if (this.spool !== null) for (const c of this.spool.pieces()) if (this.open) this.open = (await this.sink(c)) !== false;
    this.close();
    return true;
  }
}

/** Chunks written to an unlinked temporary file, read back whole, in order. */
class Spool {
  private readonly sizes: number[] = [];
  private written = 0;

  private constructor(private fd: number) {}

  /** A spool in `dir`, or null when none can be made there. */
  static create(dir: string): Spool | null {
    const path = join(dir, `bernstein-page-${process.pid}-${Math.random().toString(36).slice(2)}.spool`);
    let fd: number;
    try {
      fd = openSync(path, "wx+", 0o600);
    } catch {
      return null;
    }
    try {
      unlinkSync(path);
    } catch {
      // a system that cannot unlink an open file: removed once closed, and the chunks held in memory instead
      closeSync(fd);
      try {
        unlinkSync(path);
      } catch {
        // nothing more can be done about it here
      }
      return null;
    }
    return new Spool(fd);
  }

  put(bytes: Uint8Array): void {
    let done = 0;
    while (done < bytes.length) done += writeSync(this.fd, bytes, done, bytes.length - done, this.written + done);
    this.written += bytes.length;
    this.sizes.push(bytes.length);
  }

  /**
   * What was put, in order, read back in pieces into one buffer: a piece is
   * the caller's until it asks for the next (the page's sink writes it out
   * before it returns), so the read-back holds no more than one piece.
   */
  *pieces(): Generator<Uint8Array> {
    const buf = new Uint8Array(Math.max(1, Math.min(SPOOL_PIECE, this.written)));
    for (let at = 0; at < this.written; ) {
      const n = readSync(this.fd, buf, 0, Math.min(buf.length, this.written - at), at);
      if (n === 0) throw new Error("the page's spool file ended early");
      at += n;
      yield buf.subarray(0, n);
    }
  }

  /** The chunks as they were put, each read back into a buffer of its own. */
  *chunks(): Generator<Uint8Array> {
    let at = 0;
    for (const size of this.sizes) {
      const buf = new Uint8Array(size);
      let got = 0;
      while (got < size) {
        const n = readSync(this.fd, buf, got, size - got, at + got);
        if (n === 0) throw new Error("the page's spool file ended early");
        got += n;
      }
      at += size;
      yield buf;
    }
  }

  close(): void {
    if (this.fd < 0) return;
    closeSync(this.fd);
    this.fd = -1;
  }
}
