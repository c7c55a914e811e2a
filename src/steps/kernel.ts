import { canonicalNumber } from "../pyjson/float.ts";
import { KernelArena } from "../wasm/arena.ts";
import { isReprFloat } from "./lexeme.ts";
import { asciiText, compiledOnce, lengthCachedHasher } from "../wasm/host.ts";
import { KERNEL_WASM_BASE64 } from "./kernel-wasm.ts";

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
  prettyRow(next: number, o: number, limit: number): number;
  setPublish(at: number, limit: number, redact: number, homeLen: number, always: number): void;
  published(): number;
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
/** With KERNEL_DICT_FORM: each taken row is also redacted and re-chained into the publish area (see `publish`). */
export const KERNEL_PUBLISH = 64;

/** SPANS slots of kernel.wat: per key id, value start and end (absolute addresses; start -1: absent) and a plain-string flag. */
export const enum SpanKey {
  Seq = 1,
  StepHash = 2,
  PrevHash = 3,
  InputHash = 4,
  Model = 5,
  Prompt = 6,
  ToolCall = 7,
  ToolResult = 8,
  Effort = 9,
  BlobRefs = 10,
  SchemaVersion = 11,
  Ts = 12,
}

export class StepKernel {
  /** The walker's arena: `arenaSize` bytes of the kernel's memory. */
  readonly arena: Uint8Array;
  /** The previous step hash the next row must link to (64 hex digits). */
  readonly head: Uint8Array;
  readonly buffer: ArrayBuffer;
  private readonly k: KernelExports;
  /** Rows taken by the last verify(). */
  rows = 0;
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

  /** `readCap`: the longest row the arena's read area holds; `publishBytes`: publish mode's output area (0: none). */
  constructor(arenaSize: number, readCap: number, publishBytes = 0) {
    const module = compiled.get();
    const areas: [string, number][] = [
      ["arena", arenaSize],
      ["preimage", readCap + PREIMAGE_SLACK],
    ];
    if (publishBytes > 0) areas.push(["publish", publishBytes]);
    const mem = new KernelArena(module, compiled.binary(), areas);
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
    // (only for spellings the kernel's own clock-reading test leaves undecided)
    const tsIsCanonical = (s: number, e: number): number => {
      stepKernelStats.tsAsked++;
      return isReprFloat(u8, s, e) ? 1 : 0;
    };
    const flush = (): void => this.onFlush();
    const instance = new WebAssembly.Instance(module, { env: { memory: mem.memory, hash, floatIsCanonical, row, tsIsCanonical, flush } });
    this.k = instance.exports as unknown as KernelExports;
    this.k.setup(out);
  }

  /** KERNEL_* bits, or 0 (verify only). */
  setMode(mode: number): void {
    this.k.setMode(mode);
  }

  /**
   * Publish mode's policy: the SpanKey ids to redact, and the home
   * directory the leak pre-scan looks for at each slash (as canonical JSON
   * spells it; null: none), or `always` to report every row. The output
   * area must exist (constructor's `publishBytes`).
   */
  setPublish(redact: readonly SpanKey[], home: Uint8Array | null, always: boolean): void {
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
   * While `onRow` reports a row: the agent view's entry for it (kernel.wat
   * `prettyRow`), after its separator (`,\n` when `next`, else `\n`), at
   * `o` of `u8`: its end, or -1 when it may not fit below `limit` or needs
   * the exact path (a lone surrogate).
   */
  prettyRow(next: boolean, o: number, limit: number): number {
    return this.k.prettyRow(next ? 1 : 0, o, limit);
  }

  /**
   * Take rows of `buf[start, end)` (a view of the arena) from the line
   * start `start` while they check out, the first carrying seq `expected`
   * and linking to `head`. Returns the offset in `buf` of the first row not
   * taken; `rows` says how many were, and `head` is then the last one's
   * step hash.
   */
  verify(buf: Uint8Array, start: number, end: number, maxLine: number, expected: number): number {
    const lo = expected % 4294967296;
    const hi = (expected - lo) / 4294967296;
    const base = buf.byteOffset;
    const to = this.k.verify(base + start, base + end, Math.min(maxLine, 0x7fffffff), lo, hi) - base;
    this.rows = this.k.rows();
    stepKernelStats.rows += this.rows;
    return to;
  }
}
