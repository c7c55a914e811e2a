import { closeSync, ftruncateSync, readSync, writeSync } from "node:fs";
import { openAnonymousFile } from "../fsutil/anonymous-file.ts";

/**
 * Writes to an fd that may wait on its reader (a pipe, a socket, a
 * terminal), made one after another in the order they were asked for, by
 * an asynchronous `put` (output.ts: what the pipe takes at once from this
 * thread, the rest by the runtime's thread pool). Made from this thread, a
 * write(2) to a reader who stopped reading blocks it, and a SIGINT/SIGTERM
 * handler cannot run until the reader reads again; here the thread only
 * ever awaits.
 *
 * An awaiting writer (`write`) passes a view and gets it back written. A
 * synchronous writer (`hold`: the pieces of a huge row, a progress line)
 * cannot wait: what the fd does not take at once is copied and goes out
 * behind everything before it. Up to `heldMax` bytes are held in memory,
 * in blocks reused once written (no garbage per piece); beyond that they
 * go to an unlinked temporary file and are read back in order, so a huge
 * row rendered faster than the reader reads costs disk, not memory. The displays await a write after each read of the journal,
 * so what is held or spilled is at most one read's output.
 */

/** Held bytes are copied into blocks of this size (at most heldMax of them in all), reused once written. */
const BLOCK_BYTES = 1 << 18;
/** Read back from the spill file this much at a time. */
const SPILL_CHUNK = 1 << 20;

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

/** What is waiting to be written: a caller's bytes, a held block, or a region of the spill file. */
interface Pending {
  /** A waiting caller's view. */
  bytes: Uint8Array | null;
  /** A held block (this queue's own, reused once written) and how much of it is filled. */
  block: Uint8Array | null;
  filled: number;
  /** A region [start, end) of the spill file; `end` grows while more is spilled behind it. */
  spill: { start: number; end: number } | null;
  waiter: Waiter | null;
}

export class OrderedOutput {
  private readonly queue: Pending[] = [];
  private current: Pending | null = null;
  /** Written blocks, ready to hold more. */
  private readonly freeBlocks: Uint8Array[] = [];
  private blocks = 0;
  private readonly blockBytes: number;
  private readonly maxBlocks: number;
  private spillFd: number | null | undefined;
  private spillEnd = 0;
  private spillFailed = false;
  private readBuf: Uint8Array | null = null;
  private gone = false;

  /**
   * `put` writes bytes, awaited. `putNow` (optional) writes what the fd
   * takes at once without waiting and says how much: a piece handed over
   * while nothing is queued goes out at once, in its place among what this
   * thread writes elsewhere (a diagnostic on stderr after it stays after it).
   */
  constructor(
    private readonly put: (bytes: Uint8Array) => Promise<void>,
    private readonly heldMax = 1 << 20,
    private readonly openSpill: () => number = () => openAnonymousFile("stdout"),
    private readonly putNow: ((bytes: Uint8Array) => number) | null = null,
  ) {
    this.blockBytes = Math.max(1, Math.min(BLOCK_BYTES, heldMax));
    this.maxBlocks = Math.max(1, Math.floor(heldMax / this.blockBytes));
  }

  /** True while anything asked for is not yet written. */
  busy(): boolean {
    return this.current !== null || this.queue.length > 0;
  }

  /** Write `bytes` after everything asked for before; resolves once they are written (a view is fine). */
  write(bytes: Uint8Array): Promise<void> {
    if (this.gone) return Promise.resolve();
    return new Promise((resolve, reject) => this.push({ bytes, block: null, filled: 0, spill: null, waiter: { resolve, reject } }));
  }

  /**
   * Hand over `bytes` to be written after everything before, without
   * waiting: what the fd does not take at once is copied into the held
   * blocks (a run of small pieces fills one block: one write), and past
   * them into the spill file.
   */
  hold(bytes: Uint8Array): void {
    if (this.gone || bytes.length === 0) return;
    if (this.putNow !== null && !this.busy()) {
      const n = this.putNow(bytes);
      if (n >= bytes.length) return;
      bytes = bytes.subarray(n);
    }
    while (bytes.length > 0) {
      const last = this.queue[this.queue.length - 1];
      if (last?.block && last.filled < last.block.length) {
        const n = Math.min(bytes.length, last.block.length - last.filled);
        last.block.set(bytes.subarray(0, n), last.filled);
        last.filled += n;
        bytes = bytes.subarray(n);
        continue;
      }
      const free = this.freeBlocks.pop() ?? (this.blocks < this.maxBlocks ? this.newBlock() : null);
      if (free === null && this.spill(bytes)) return;
      // no block free and no spill file: one more block (memory is what is left)
      const block = free ?? this.newBlock();
      // filled before it is queued: an idle queue writes it at once
      const n = Math.min(bytes.length, block.length);
      block.set(bytes.subarray(0, n));
      bytes = bytes.subarray(n);
      this.push({ bytes: null, block, filled: n, spill: null, waiter: null });
    }
  }

  private newBlock(): Uint8Array {
    this.blocks++;
    return new Uint8Array(this.blockBytes);
  }

  /** Resolves once everything asked for so far is written. */
  flush(): Promise<void> {
    if (!this.busy()) return Promise.resolve();
    return this.write(new Uint8Array(0));
  }

  /**
   * Stop waiting for the reader: every writer waiting is let go now, and
   * nothing more is written. (A write(2) under way stays under way: the
   * caller exits the process.)
   */
  abandon(): void {
    this.gone = true;
    const waiting = [this.current, ...this.queue.splice(0)];
    for (const p of waiting) p?.waiter?.resolve();
    this.freeBlocks.length = 0;
    this.closeSpill();
  }

  /** Append `bytes` to the spill file, behind everything queued; false when there is no spill file to be had. */
  private spill(bytes: Uint8Array): boolean {
    if (this.spillFd === undefined) {
      try {
        this.spillFd = this.openSpill();
      } catch {
        this.spillFd = null; // no usable temp directory: hold in memory
      }
    }
    if (this.spillFd === null || this.spillFailed) return false;
    const start = this.spillEnd;
    try {
      for (let w = 0; w < bytes.length; ) w += writeSync(this.spillFd, bytes, w, bytes.length - w, start + w);
    } catch {
      // a full disk: hold in memory from now on (what was spilled before is still read back)
      this.spillFailed = true;
      return false;
    }
    this.spillEnd += bytes.length;
    const last = this.queue[this.queue.length - 1];
    if (last?.spill && last.spill.end === start) last.spill.end = this.spillEnd;
    else this.push({ bytes: null, block: null, filled: 0, spill: { start, end: this.spillEnd }, waiter: null });
    return true;
  }

  private push(p: Pending): void {
    this.queue.push(p);
    if (this.current === null) void this.pump();
  }

  private async pump(): Promise<void> {
    while (!this.gone && this.queue.length > 0) {
      const p = (this.current = this.queue.shift()!);
      try {
        if (p.spill) await this.putSpilled(p.spill);
        else if (p.block) await this.put(p.block.subarray(0, p.filled));
        else if (p.bytes!.length > 0) await this.put(p.bytes!);
        p.waiter?.resolve();
      } catch (err) {
        // a held piece has no one to tell: the failure is the caller's to record (output.ts keeps it)
        p.waiter?.reject(err);
      }
      if (p.block && this.blocks <= this.maxBlocks) this.freeBlocks.push(p.block);
      else if (p.block) this.blocks--;
      this.current = null;
    }
    // everything spilled is written: the file starts over
    if (this.queue.length === 0 && this.spillFd != null && this.spillEnd > 0) {
      try {
        ftruncateSync(this.spillFd, 0);
        this.spillEnd = 0;
      } catch {
        /* the file keeps its bytes; new ones go after them */
      }
    }
  }

  private async putSpilled(region: { start: number; end: number }): Promise<void> {
    const buf = (this.readBuf ??= new Uint8Array(SPILL_CHUNK));
    for (let off = region.start; off < region.end && !this.gone; ) {
      const n = readSync(this.spillFd!, buf, 0, Math.min(buf.length, region.end - off), off);
      if (n <= 0) throw new Error("the spilled output could not be read back");
      await this.put(buf.subarray(0, n));
      off += n;
    }
  }

  private closeSpill(): void {
    if (this.spillFd == null) return;
    try {
      closeSync(this.spillFd);
    } catch {
      /* already gone */
    }
    this.spillFd = null;
  }
}
