import { floatRepr } from "../../pyjson/float.ts";
import { KernelArena } from "../../wasm/arena.ts";
import { asciiText, compiledOnce, lengthCachedHasher } from "../../wasm/host.ts";
import { KERNEL_WASM_BASE64 } from "./kernel-wasm.ts";

/**
 * The WebAssembly verify kernel (kernel.wat): the fast path of journal
 * verification. Its memory (src/wasm/arena.ts, from the module's exported
 * layout) holds, above the module's own tables, the range's read area (the
 * lines are read straight into it), the previous-hash slot, and the
 * kernel's scratch, payload pre-image and member table.
 */

/** Member entries (16 bytes each) of the objects being assembled, all nesting levels together. */
const MEMBER_SLOTS = 1024;

/** verify()'s modes (the module exports the same values: checked at load). */
export const enum KernelMode {
  /** Rows after a range's first: linked to the previous-hash slot, hashed. */
  Chain = 0,
  /** A range's first row, alone, linked to its own stored prev_hash. */
  First = 1,
  /** Links-only: no hashing, the stored event_hash must be 64 lowercase hex. */
  Links = 2,
  /** With First: a plain stored index is the row's position. */
  Guess = 4,
  /** Past a failure: count the rows in Python's spelling, check nothing. */
  Classify = 8,
  /** Also write each hashed row's 32-byte event digest to `leaves`, in order. */
  Leaves = 16,
}

interface KernelExports {
  setup(scratch: number, scratchEnd: number, out: number, outEnd: number, mt: number, mtEnd: number, leaves: number, leavesEnd: number): void;
  verify(p: number, bound: number, lo: number, hi: number, last: number, flags: number): number;
  rows(): number;
  lastRow(): number;
  field(i: number): number;
}

/** The pieces of a range's first row, after a First call (offsets in the read area). */
export interface FirstRowPieces {
  typeStart: number;
  typeEnd: number;
  prev: number;
  hash: number;
  /** The stored index lexeme, and whether it was taken as the row's position (Guess). */
  indexStart: number;
  indexEnd: number;
  guessed: boolean;
}

const compiled = compiledOnce(KERNEL_WASM_BASE64);

/**
 * The compiled kernel. Compiled once per process: worker threads are handed
 * the main thread's module (useKernelModule), so they share its compiled
 * code, including the optimised tier the engine compiles once the kernel
 * runs hot; instantiating it per verifier is cheap.
 */
export function kernelModule(): WebAssembly.Module {
  return compiled.get();
}

/** Use a module compiled by another thread (see kernelModule). */
export function useKernelModule(module: WebAssembly.Module): void {
  compiled.set(module);
}

export class VerifyKernel {
  /** The read area: `readCap` bytes, then room for the sentinel and word loads past it. */
  readonly lines: Uint8Array;
  /** The previous row's event hash, 64 hex digits: where verify() links from and leaves the last row's. */
  readonly prev: Uint8Array;
  /** The payload hash hex of the last row hashed. */
  readonly payloadHex: Uint8Array;
  /** With Leaves: the event digests of the rows the last call took, 32 bytes each. */
  readonly leaves: Uint8Array;
  private readonly k: KernelExports;
  private readonly linesAt: number;
  private readonly prevAt: number;
  /** Rows taken by the last verify() call, and the start offset of the last of them. */
  rows = 0;
  lastRow = 0;

  /** `readCap`: the read area, which is the longest line verified in place. */
  constructor(readCap: number) {
    const module = kernelModule();
    const mem = new KernelArena(module, compiled.binary(), [
      ["lines", readCap + 8],
      ["prev", 64],
      ["scratch", 2 * readCap],
      ["out", readCap],
      ["members", MEMBER_SLOTS * 16],
      // A row is at least 280 bytes (its envelope alone), so a call takes fewer than readCap / 256 rows.
      ["leaves", 32 * (Math.ceil(readCap / 256) + 1)],
    ]);
    for (const [name, mode] of [
      ["FIRST", KernelMode.First],
      ["LINKS", KernelMode.Links],
      ["GUESS", KernelMode.Guess],
      ["CLASSIFY", KernelMode.Classify],
      ["LEAVES", KernelMode.Leaves],
    ] as const) {
      if (mem.addr(name) !== mode) throw new Error(`kernel mode ${name} is ${mem.addr(name)}, not ${mode}`);
    }
    const u8 = mem.u8;
    this.linesAt = mem.at("lines");
    this.prevAt = mem.at("prev");
    this.lines = u8.subarray(this.linesAt, this.linesAt + readCap + 8);
    this.prev = mem.view("prev");
    this.payloadHex = mem.fixedView("payloadHex", 64);
    this.leaves = mem.view("leaves");

    // The hashes run in Bun's native SHA-256: the payload pre-image starts,
    // and the event pre-image ends, at a fixed address.
    const outAt = mem.at("out");
    const eventEnd = mem.addr("eventEnd");
    const hashPayload = lengthCachedHasher((len) => u8.subarray(outAt, outAt + len), mem.fixedView("payloadDigest", 32));
    const hashEvent = lengthCachedHasher((len) => u8.subarray(eventEnd - len, eventEnd), mem.fixedView("eventDigest", 32));
    // A float the kernel cannot decide by its digits alone (scientific
    // notation, 16+ significant digits, below 1e-4): Python's repr decides.
    let lastFloat = "";
    const floatIsRepr = (s: number, e: number): number => {
      const text = asciiText(u8, s, e);
      if (text === lastFloat) return 1;
      if (floatRepr(Number(text)) !== text) return 0;
      lastFloat = text;
      return 1;
    };
    const instance = new WebAssembly.Instance(module, { env: { memory: mem.memory, hashPayload, hashEvent, floatIsRepr } });
    this.k = instance.exports as unknown as KernelExports;
    const scratch = mem.at("scratch");
    const mt = mem.at("members");
    const leaves = mem.at("leaves");
    this.k.setup(scratch, scratch + 2 * readCap, outAt, outAt + readCap, mt, mt + MEMBER_SLOTS * 16, leaves, leaves + this.leaves.length);
  }

  /**
   * Take consecutive rows from the line start `p` (offsets in `lines`;
   * `bound` is the data's end, where a sentinel line feed must stand), the
   * first at row position `index`, in `mode`. Returns the offset of the
   * first row not taken (or `bound`); `rows` and `lastRow` tell what was
   * taken, and (but in Classify mode) the last one's event hash is then in
   * `prev`.
   */
  verify(p: number, bound: number, index: number, mode: number): number {
    const lo = index % 4294967296;
    const hi = (index - lo) / 4294967296;
    const at = this.linesAt;
    const end = this.k.verify(at + p, at + bound, lo, hi, this.prevAt, mode);
    this.rows = this.k.rows();
    this.lastRow = this.k.lastRow() - at;
    return end - at;
  }

  /** Where the pieces of the row a First call took are. */
  firstRow(): FirstRowPieces {
    const at = this.linesAt;
    const f = (i: number) => this.k.field(i) - at;
    return { typeStart: f(0), typeEnd: f(1), prev: f(2), hash: f(3), indexStart: f(4), indexEnd: f(5), guessed: this.k.field(6) === 1 };
  }
}
