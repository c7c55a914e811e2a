import { floatRepr } from "../../pyjson/float.ts";
import { asciiText, compiledOnce, lengthCachedHasher } from "../../wasm/host.ts";
import { KERNEL_WASM_BASE64 } from "./kernel-wasm.ts";

/**
 * The WebAssembly verify kernel (kernel.wat), instantiated over a memory
 * that also holds the JavaScript scanner's buffers, so the kernel reads the
 * lines where the scanner's reads put them and leaves the previous hash
 * where the scanner keeps it: either one can take any row.
 *
 * Layout of the memory:
 *   [0, 4096)                 the kernel's tables and constants (kernel.wat)
 *   [4096, 4096 + scanner)    the RowScanner's `mem` (read area first)
 *   then                      the kernel's scratch, payload pre-image and member table
 */

/** Where the scanner's memory starts (the kernel's constants are below it). */
const SCANNER_AT = 4096;
/** Fixed addresses in kernel.wat. */
const PAYLOAD_DIGEST = 1600;
const EVENT_DIGEST = 1632;
const EVENT_END = 2722;
/** Member entries (16 bytes each) of the objects being assembled, all nesting levels together. */
const MEMBER_SLOTS = 1024;
/** Bytes reserved beyond each area for small fixed writes (as in scanner.ts). */
const SLACK = 256;

interface KernelExports {
  setup(scratch: number, scratchEnd: number, out: number, outEnd: number, mt: number, mtEnd: number): void;
  verify(p: number, bound: number, lo: number, hi: number, last: number): number;
  rows(): number;
  lastRow(): number;
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
  /** The scanner's memory: a view of the kernel's memory at SCANNER_AT. */
  readonly scannerMem: Uint8Array;
  private readonly k: KernelExports;
  /** Rows verified by the last verify() call, and the start offset of the last of them. */
  rows = 0;
  lastRow = 0;

  /** `scannerSize`: bytes the RowScanner lays out; `readCap`: its read area (the longest line). */
  constructor(scannerSize: number, readCap: number) {
    const kernelAt = (SCANNER_AT + scannerSize + 63) & ~63;
    const scratch = 2 * readCap + SLACK;
    const out = readCap + SLACK;
    const mt = kernelAt + scratch + out;
    const total = mt + MEMBER_SLOTS * 16 + SLACK;
    const memory = new WebAssembly.Memory({ initial: Math.ceil(total / 65536) });
    const u8 = new Uint8Array(memory.buffer);
    this.scannerMem = u8.subarray(SCANNER_AT, SCANNER_AT + scannerSize);

    // The hashes run in Bun's native SHA-256: the payload pre-image starts,
    // and the event pre-image ends, at a fixed address.
    const outAt = kernelAt + scratch;
    const hashPayload = lengthCachedHasher((len) => u8.subarray(outAt, outAt + len), u8.subarray(PAYLOAD_DIGEST, PAYLOAD_DIGEST + 32));
    const hashEvent = lengthCachedHasher((len) => u8.subarray(EVENT_END - len, EVENT_END), u8.subarray(EVENT_DIGEST, EVENT_DIGEST + 32));
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
    const instance = new WebAssembly.Instance(kernelModule(), { env: { memory, hashPayload, hashEvent, floatIsRepr } });
    this.k = instance.exports as unknown as KernelExports;
    this.k.setup(kernelAt, kernelAt + scratch - SLACK, outAt, outAt + out - SLACK, mt, mt + MEMBER_SLOTS * 16);
  }

  /**
   * Verify consecutive rows from the line start `p` (offsets in the
   * scanner's memory; `bound` is the data's sentinel), the first at row
   * position `index`, linked to the 64-hex previous hash at `prevHex`.
   * Returns the offset of the first row not verified (or `bound`); `rows`
   * and `lastRow` tell what was verified, and the last verified row's
   * event hash is then at `prevHex`.
   */
  verify(p: number, bound: number, index: number, prevHex: number): number {
    const lo = index % 4294967296;
    const hi = (index - lo) / 4294967296;
    const end = this.k.verify(SCANNER_AT + p, SCANNER_AT + bound, lo, hi, SCANNER_AT + prevHex);
    this.rows = this.k.rows();
    this.lastRow = this.k.lastRow() - SCANNER_AT;
    return end - SCANNER_AT;
  }
}
