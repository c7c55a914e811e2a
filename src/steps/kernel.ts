import { canonicalNumber } from "../pyjson/float.ts";
import { isPythonFloat } from "../codec/row-index.ts";
import { KernelArena } from "../wasm/arena.ts";
import { compiledOnce, lengthCachedHasher } from "../wasm/host.ts";
import { asciiText } from "../codec/bytes.ts";
import { KERNEL_WASM_BASE64 } from "./kernel-wasm.ts";
import type { StepKey } from "./row-keys.ts";

/**
 * The WebAssembly step kernel (kernel.wat), instantiated over a memory that
 * also holds the chain walker's arena, so the kernel reads rows where the
 * archive reader put them: nothing is copied to hand it a chunk. The
 * module's fixed addresses (digest, head, heapBase) are its exported
 * globals; the arena (src/wasm/arena.ts) lays out, above heapBase, the
 * walker's arena (read area, then its scratch) and the pre-image area.
 */

/** A pre-image is the row's hashed values plus the key names (and `null`s) around them. */
const PREIMAGE_SLACK = 512;

interface KernelExports {
  setup(out: number): void;
  setMode(mode: number): void;
  verify(p: number, bound: number, maxLine: number, lo: number, hi: number): number;
  rows(): number;
  crlfs(): number;
  setPublish(at: number, limit: number, redact: number, homeLen: number, always: number): void;
  published(): number;
  renderArm(base: number, o: number, limit: number, next: number, left: number): void;
  renderEnd(): number;
  renderCount(): number;
  renderFull(): number;
  setChunk(addr: number, lo: number, hi: number): void;
  recordArm(o: number, limit: number): void;
  recordEnd(): number;
  recordFeed(at: number, end: number, more: number): void;
  recordsWanted(): number;
}

/** Compiled once per process; each walker instantiates it over its own memory. */
const compiled = compiledOnce(KERNEL_WASM_BASE64);
let enabled = true;

/** Rows taken by any kernel of this process (tests check that it runs, and when it must not). */
export const stepKernelStats = { rows: 0, tsAsked: 0 };

/** Whether walkers made from now on use the kernel (tests compare both ways). */
export function setStepKernelEnabled(on: boolean): void {
  enabled = on;
}

export function stepKernelEnabled(): boolean {
  return enabled;
}

/** `setMode` bits (kernel.wat): take only rows already in export dict form; report each taken row. */
export const KERNEL_DICT_FORM = 1;
export const KERNEL_REPORT = 2;
/** With KERNEL_DICT_FORM: a ts need only be a float lexeme (the display prints it as spelled). */
export const KERNEL_DISPLAY = 4;
/** Stored step hashes are trusted, only links checked: a second pass over rows a first pass verified. */
export const KERNEL_LINKS = 8;
/** With KERNEL_DICT_FORM | KERNEL_DISPLAY: each taken row is also rendered as the agent view's entry (`renderArm`). */
export const KERNEL_RENDER = 16;
/** Each taken row in dict form (KERNEL_DISPLAY: its ts a lexeme) leaves a span record (`recordArm`) for a later pass. */
export const KERNEL_RECORD = 32;
/** With KERNEL_DICT_FORM: each taken row is also redacted and re-chained into the publish area (see `publish`). */
export const KERNEL_PUBLISH = 64;
/** A row whose record is next (`recordFeed`) is not scanned: its spans come from the record. */
export const KERNEL_REPLAY = 128;
/** Bytes of one span record (kernel.wat). */
export const SPAN_RECORD_BYTES = 64;

export class StepKernel {
  /** The walker's arena: `arenaSize` bytes of the kernel's memory. */
  readonly arena: Uint8Array;
  /** The previous step hash the next row must link to (64 hex digits). */
  readonly head: Uint8Array;
  readonly buffer: ArrayBuffer;
  private readonly k: KernelExports;
  private readonly mem: KernelArena;
  /** Rows taken by the last verify(), and how many of them ended in CR LF (the rest in LF). */
  rows = 0;
  crlfs = 0;
  /** The whole memory: the addresses a report hands over index it. */
  readonly u8: Uint8Array;
  /** SPANS as i32s: slot k at [4k, 4k + 3) (start, end, plain string). Valid during `onRow`. */
  readonly spans: Int32Array;
  /** In report mode: each taken row [p, q) of `u8` (q: its line feed), while SPANS holds its spans. */
  onRow: (p: number, q: number) => void = () => {};
  /** Publish mode: the area is full; take its lines (`published()`) now, the kernel then starts it over. */
  onFlush: () => void = () => {};
  /** Publish mode: where `verify` writes the published lines (0: no such area), and the redacted chain's head. */
  readonly publishAt: number = 0;
  readonly publishHead: Uint8Array;
  private readonly publishSize: number;
  private readonly publishHome: number;
  /**
   * In render, record and replay modes: after each kernel call, with
   * whether it stopped for room (`full`: the render or record area); the
   * entries it rendered end at `renderEnd`, its records at `recordEnd`. The
   * host takes them and arms the areas again (feeds records when
   * `recordsWanted`), and returns true to have the walk go on at once.
   * Rendered entries never outlive the verify() that made them.
   */
  onRendered: (full: boolean) => boolean = () => false;
  private rendering = false;
  /** Render mode's area (empty without one). */
  readonly renderArea: Uint8Array;
  /** Record and replay modes' area (a multiple of SPAN_RECORD_BYTES; empty without one). */
  readonly recordArea: Uint8Array;

  /**
   * `readCap`: the longest row the arena's read area holds; `extra`: the
   * bytes of the mode areas to make (publish mode's output, render mode's
   * entries, record and replay modes' records; 0: none).
   */
  constructor(arenaSize: number, readCap: number, extra: { publish?: number; render?: number; records?: number } = {}) {
    const module = compiled.get();
    const publishBytes = extra.publish ?? 0;
    const areas: [string, number][] = [
      ["arena", arenaSize],
      ["preimage", readCap + PREIMAGE_SLACK],
      ["render", extra.render ?? 0],
      ["records", extra.records ?? 0],
    ];
    if (publishBytes > 0) areas.push(["publish", publishBytes]);
    const mem = new KernelArena(module, compiled.binary(), areas);
    this.mem = mem;
    this.renderArea = mem.view("render");
    this.recordArea = mem.view("records");
    this.publishSize = publishBytes;
    if (publishBytes > 0) this.publishAt = mem.at("publish");
    this.publishHead = mem.fixedView("pubHead", 64);
    this.publishHome = mem.addr("pubHome");
    const u8 = mem.u8;
    this.buffer = mem.memory.buffer;
    this.arena = mem.view("arena");
    this.head = mem.fixedView("head", 64);

    // The hash runs in Bun's native SHA-256; the pre-image starts at a fixed address.
    const out = mem.at("preimage");
    const hash = lengthCachedHasher((len) => u8.subarray(out, out + len), mem.fixedView("digest", 32));
    // A float in a hashed field: canonical when Python re-spells it so (the rule scanNumber applies).
    const floatIsCanonical = (s: number, e: number): number => {
      const raw = asciiText(u8, s, e);
      return canonicalNumber(raw, true) === raw ? 1 : 0;
    };
    this.u8 = u8;
    this.spans = new Int32Array(mem.memory.buffer, mem.fixedView("spans", 13 * 16).byteOffset, 13 * 4);
    const row = (p: number, q: number): void => this.onRow(p, q);
    // Dict-form mode: the row's ts is spelled as Python's repr (what export would write).
    // (only for spellings float.wat's test leaves undecided: ties and the like)
    const tsIsCanonical = (s: number, e: number): number => {
      stepKernelStats.tsAsked++;
      return isPythonFloat(u8, s, e) ? 1 : 0;
    };
    const flush = (): void => this.onFlush();
    const instance = new WebAssembly.Instance(module, { env: { memory: mem.memory, hash, floatIsCanonical, row, tsIsCanonical, flush } });
    this.k = instance.exports as unknown as KernelExports;
    this.k.setup(out);
  }

  /** Done with this kernel: its memory goes to the next kernel of its size (KernelArena.release); nothing may use this one again. */
  release(): void {
    this.mem.release();
  }

  /** KERNEL_* bits, or 0 (verify only). */
  setMode(mode: number): void {
    this.k.setMode(mode);
    this.rendering = (mode & (KERNEL_RENDER | KERNEL_RECORD | KERNEL_REPLAY)) !== 0;
  }

  /**
   * Publish mode's policy: the StepKey ids to redact, and the home
   * directory the leak pre-scan looks for at each slash (as canonical JSON
   * spells it; null: none), or `always` to report every row. The output
   * area must exist (constructor's `publishBytes`).
   */
  setPublish(redact: readonly StepKey[], home: Uint8Array | null, always: boolean): void {
    if (this.publishSize === 0) throw new Error("step kernel made without a publish area");
    let ids = 0;
    for (const k of redact) ids |= 1 << k;
    // A home the kernel's 256 bytes cannot hold: every row goes to the host's own check.
    const fits = home !== null && home.length <= 256;
    if (fits) this.u8.set(home, this.publishHome);
    this.k.setPublish(this.publishAt, this.publishAt + this.publishSize, ids, fits ? home.length : 0, always || (home !== null && !fits) ? 1 : 0);
  }

  /** Publish mode: the lines the last `verify` wrote since it started or last flushed (a view of the area, valid until the kernel runs again). */
  published(): Uint8Array {
    return this.u8.subarray(this.publishAt, this.publishAt + this.k.published());
  }

  /** While `onRow` reports a row: how many rows this `verify` took before it. */
  get rowsBefore(): number {
    return this.k.rows();
  }

  /**
   * Render mode: entries go to `u8[o, limit)` in the area that starts at
   * `base`, the first preceded by `,\n` when `next` (else `\n`), at most
   * `left` more of them (rows past that are taken without rendering).
   */
  renderArm(base: number, o: number, limit: number, next: boolean, left: number): void {
    this.k.renderArm(base, o, limit, next ? 1 : 0, Math.min(left, 0x7fffffff));
  }

  /** The bytes at `addr` of the memory are the file's from `offset` (the chunk a walk is given next). */
  setChunk(addr: number, offset: number): void {
    const lo = offset % 4294967296;
    this.k.setChunk(addr, lo, (offset - lo) / 4294967296);
  }

  /** Record mode: records go to `u8[o, limit)`; `recordEnd`: where those made so far end. */
  recordArm(o: number, limit: number): void {
    this.k.recordArm(o, limit);
  }

  get recordEnd(): number {
    return this.k.recordEnd();
  }

  /** Replay mode: the records at `u8[at, end)` are next; `more`: others follow them (recordsWanted then stops a walk). */
  recordFeed(at: number, end: number, more: boolean): void {
    this.k.recordFeed(at, end, more ? 1 : 0);
  }

  get recordsWanted(): boolean {
    return this.k.recordsWanted() !== 0;
  }

  /** The end of the entries rendered since renderArm, and how many. */
  get renderEnd(): number {
    return this.k.renderEnd();
  }

  get renderCount(): number {
    return this.k.renderCount();
  }

  /**
   * Take rows of `buf[start, end)` (a view of the arena) from the line
   * start `start` while they check out, the first carrying seq `expected`
   * and linking to `head`. Returns the offset in `buf` of the first row not
   * taken; `rows` says how many were (`crlfs` of them ended by CR LF, not
   * LF alone), and `head` is then the last one's step hash.
   */
  verify(buf: Uint8Array, start: number, end: number, maxLine: number, expected: number): number {
    const base = buf.byteOffset;
    let p = base + start;
    let rows = 0;
    let crlfs = 0;
    for (;;) {
      const seq = expected + rows;
      const lo = seq % 4294967296;
      p = this.k.verify(p, base + end, Math.min(maxLine, 0x7fffffff), lo, (seq - lo) / 4294967296);
      rows += this.k.rows();
      crlfs += this.k.crlfs();
      // a walk stopped for room goes on from the row that did not fit, once the host made room
      if (!this.rendering || !this.onRendered(this.k.renderFull() !== 0)) break;
    }
    this.rows = rows;
    this.crlfs = crlfs;
    stepKernelStats.rows += rows;
    return p - base;
  }
}
