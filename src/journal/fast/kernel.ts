import { isFloatRepr } from "../../pyjson/float.ts";
import { KernelArena } from "../../wasm/arena.ts";
import { compiledOnce, lengthCachedHasher } from "../../wasm/host.ts";
import { asciiText } from "../../codec/bytes.ts";
import { KERNEL_WASM_BASE64 } from "./kernel-wasm.ts";

/**
 * The WebAssembly verify kernel (kernel.wat): the fast path of journal
 * verification. Its memory (src/wasm/arena.ts, from the module's exported
 * layout) holds, above the module's own tables, the range's read area (the
 * lines are read straight into it), the previous-hash slot, and the
 * kernel's scratch, payload pre-image and member table.
 */

/**
 * Member entries (16 bytes each) of the objects being assembled, all
 * nesting levels together; a map of many keys is sorted in the part above
 * them (64 bytes a key: kernel.wat $mergeSort), so a map of some hundreds
 * of keys is sorted there, a larger one by Shell's sort in place.
 */
const MEMBER_SLOTS = 4096;

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
  /** No links, no hashing: append each row's replay fingerprint text (FingerprintKernel). */
  Fprint = 32,
  /** With the hashing: append each verified row's text as Fprint does (what a run receipt embeds of it; VerifyKernel's text area). */
  Text = 64,
  /** With Text: call `onRow` after each row taken, while its member table and facts describe it (VerifyKernel.membersAt, info). */
  Each = 128,
  /** Check each provider_state_mutation row taken (the provider-state gate): VerifyKernel.gateRows, gateEntry. */
  Gate = 256,
}

/** A gate entry's code (kernel.wat $gate): the row's content address does not check, or the host decides the row. */
export const enum GateCode {
  Mismatch = 1,
  Host = 2,
}

interface KernelExports {
  setup(scratch: number, scratchEnd: number, out: number, outEnd: number, mt: number, mtEnd: number, leaves: number, leavesEnd: number): void;
  verify(p: number, bound: number, lo: number, hi: number, last: number, flags: number): number;
  rows(): number;
  lastRow(): number;
  field(i: number): number;
  fingerprintTo(out: number, outEnd: number, info: number): number;
  textSeparator(c: number): void;
  gateRows(): number;
  gateEntries(): number;
  gateArea(at: number, end: number): void;
}

const MODES = [
  ["FIRST", KernelMode.First],
  ["LINKS", KernelMode.Links],
  ["GUESS", KernelMode.Guess],
  ["CLASSIFY", KernelMode.Classify],
  ["LEAVES", KernelMode.Leaves],
  ["FPRINT", KernelMode.Fprint],
  ["TEXT", KernelMode.Text],
  ["EACH", KernelMode.Each],
  ["GATE", KernelMode.Gate],
] as const;

/** The module's memory laid out in `areas`, its modes checked against KernelMode. */
function arenaOf(areas: readonly (readonly [string, number])[]): KernelArena {
  const mem = new KernelArena(kernelModule(), compiled.binary(), areas);
  for (const [name, mode] of MODES) {
    if (mem.addr(name) !== mode) throw new Error(`kernel mode ${name} is ${mem.addr(name)}, not ${mode}`);
  }
  return mem;
}

/**
 * The floatIsRepr import over `u8`: a float the kernel cannot decide by its
 * digits alone (scientific notation, 16+ significant digits, below 1e-4):
 * Python's repr decides.
 */
function floatCheck(u8: Uint8Array): (s: number, e: number) => number {
  let lastFloat = "";
  return (s, e) => {
    const text = asciiText(u8, s, e);
    if (text === lastFloat) return 1;
    if (!isFloatRepr(text)) return 0;
    lastFloat = text;
    return 1;
  };
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
  /** With Text: all of the kernel's memory, and its text area [textAt, textEnd) (textAt 0: none). */
  readonly u8: Uint8Array;
  readonly textAt: number = 0;
  private readonly textEnd: number = 0;
  private readonly infoAt: number = 0;
  /** With Text, during `onRow`: the row's facts as FingerprintKernel leaves them, at `i32[info…]`, and its members (sorted) from `membersAt`. */
  readonly i32: Int32Array;
  readonly info: number = 0;
  readonly membersAt: number;
  /** In Each mode, called after each row taken: its line lines[s, e) (e: the next line's start). It must not call the kernel. */
  onRow: ((s: number, e: number) => void) | null = null;
  private readonly k: KernelExports;
  private readonly linesAt: number;
  private readonly prevAt: number;
  private readonly gateAt: number;
  /** Rows taken by the last verify() call, and the start offset of the last of them. */
  rows = 0;
  lastRow = 0;

  /**
   * `readCap`: the read area, which is the longest line verified in place.
   * `maxRows`: the most rows one call takes (the leaves area's size); by
   * default as many as fit in the read area. `text`: room for the rows'
   * texts of a call (Text mode: a row's text is no longer than its line, so
   * the read area's size), the byte after each `separator`.
   */
  constructor(
    readonly readCap: number,
    maxRows = Math.ceil(readCap / 256),
    text: { separator: number } | null = null,
  ) {
    const module = kernelModule();
    const textCap = text === null ? 0 : readCap + 64;
    const mem = arenaOf([
      ["lines", readCap + 8],
      ["prev", 64],
      ["scratch", 2 * readCap],
      ["out", readCap],
      ["members", MEMBER_SLOTS * 16],
      // A row is at least 280 bytes (its envelope alone), so a call takes fewer than readCap / 256 rows.
      ["leaves", 32 * (maxRows + 1)],
      ["text", textCap],
      ["info", 32],
      // a gate entry per row a call takes, at most
      ["gate", 16 * (maxRows + 1)],
    ]);
    const u8 = mem.u8;
    this.u8 = u8;
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
    const linesAt = this.linesAt;
    const rowTaken = (s: number, e: number): void => this.onRow!(s - linesAt, e - linesAt);
    const instance = new WebAssembly.Instance(module, { env: { memory: mem.memory, hashPayload, hashEvent, floatIsRepr: floatCheck(u8), rowTaken } });
    this.k = instance.exports as unknown as KernelExports;
    const scratch = mem.at("scratch");
    const mt = mem.at("members");
    const leaves = mem.at("leaves");
    this.i32 = new Int32Array(mem.memory.buffer);
    this.membersAt = mt;
    this.k.setup(scratch, scratch + 2 * readCap, outAt, outAt + readCap, mt, mt + MEMBER_SLOTS * 16, leaves, leaves + this.leaves.length);
    this.gateAt = mem.at("gate");
    this.k.gateArea(this.gateAt, this.gateAt + 16 * (maxRows + 1));
    if (text !== null) {
      this.textAt = mem.at("text");
      this.textEnd = this.textAt + textCap;
      this.infoAt = mem.at("info");
      this.info = this.infoAt >> 2;
      this.k.textSeparator(text.separator);
      this.k.fingerprintTo(this.textAt, this.textEnd, this.infoAt);
    }
  }

  /** With Text: the end of the texts appended since textFrom() (they start at textAt). */
  textEndNow(): number {
    return this.k.fingerprintTo(0, 0, 0);
  }

  /** With Text: the next texts go to the text area's start again. */
  textFrom(): void {
    this.k.fingerprintTo(this.textAt, this.textEnd, this.infoAt);
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

  /** Gate: the provider_state_mutation rows the last call took whose content address checked or did not (the rest are entries). */
  gateRows(): number {
    return this.k.gateRows();
  }

  /** Gate: the last call's findings (entries), in row order. */
  gateEntries(): number {
    return this.k.gateEntries();
  }

  /** Gate entry i's row (its place among the last call's rows), its GateCode, and its line's start and end in `lines` (`field` 0-3). */
  gateEntry(i: number, field: 0 | 1 | 2 | 3): number {
    const v = this.i32[((this.gateAt + 16 * i) >> 2) + field]!;
    return field >= 2 ? v - this.linesAt : v;
  }

  /** Where the pieces of the row a First call took are. */
  firstRow(): FirstRowPieces {
    const at = this.linesAt;
    const f = (i: number) => this.k.field(i) - at;
    return { typeStart: f(0), typeEnd: f(1), prev: f(2), hash: f(3), indexStart: f(4), indexEnd: f(5), guessed: this.k.field(6) === 1 };
  }
}

/** FPRINT hashes nothing and hands no row on: those imports are never called. */
function notCalled(): void {
  throw new Error("the fingerprint kernel called an import it never calls");
}

/**
 * The kernel in FPRINT mode, a row a call (the replay display's scan,
 * src/replay/kernel-row.ts): a line in Python's writer spelling with the
 * writer's envelope is validated and its replay fingerprint text appended
 * to the text area; its members (top level, sorted) are then in the member
 * table and its other facts in `info`. All addresses are of `u8`.
 */
export class FingerprintKernel {
  /** All of the kernel's memory. */
  readonly u8: Uint8Array;
  readonly i32: Int32Array;
  /** The read area (lines are read into it, then taken in place). */
  readonly lines: Uint8Array;
  readonly linesAt: number;
  /** The member table's start (16-byte entries: key start, end, value start, end). */
  readonly membersAt: number;
  /** The fingerprint text area [textAt, textEnd). */
  readonly textAt: number;
  readonly textEnd: number;
  /** i32 index (in `i32`) of the facts take() leaves: ts start, end, elapsed_s start, end, member table end, event type token start, end, text end. */
  readonly info: number;
  private readonly infoAt: number;
  private readonly prevAt: number;
  private readonly k: KernelExports;

  constructor(readCap: number, textCap: number, scratchCap: number) {
    const mem = arenaOf([
      ["lines", readCap + 8],
      ["prev", 64],
      ["scratch", scratchCap],
      ["out", 64],
      ["members", MEMBER_SLOTS * 16],
      ["leaves", 32],
      ["text", textCap],
      ["info", 32],
    ]);
    const u8 = mem.u8;
    this.u8 = u8;
    this.i32 = new Int32Array(mem.memory.buffer);
    this.linesAt = mem.at("lines");
    this.lines = u8.subarray(this.linesAt, this.linesAt + readCap + 8);
    this.prevAt = mem.at("prev");
    this.membersAt = mem.at("members");
    this.textAt = mem.at("text");
    this.textEnd = this.textAt + textCap;
    this.infoAt = mem.at("info");
    this.info = this.infoAt >> 2;
    const instance = new WebAssembly.Instance(kernelModule(), { env: { memory: mem.memory, hashPayload: notCalled, hashEvent: notCalled, floatIsRepr: floatCheck(u8), rowTaken: notCalled } });
    this.k = instance.exports as unknown as KernelExports;
    const scratch = mem.at("scratch");
    const out = mem.at("out");
    const leaves = mem.at("leaves");
    this.k.setup(scratch, scratch + scratchCap, out, out + 64, this.membersAt, this.membersAt + MEMBER_SLOTS * 16, leaves, leaves + 32);
    this.textTo(this.textAt);
  }

  /**
   * Take the line lines[s, e) (a line feed at e): true when the kernel
   * validated it and appended its text. The row must end the line (a row
   * ending at a carriage return inside it is declined: another line follows).
   */
  take(s: number, e: number): boolean {
    const at = this.linesAt;
    return this.k.verify(at + s, at + e + 1, 0, 0, this.prevAt, KernelMode.Fprint | KernelMode.First) === at + e + 1;
  }

  /** Where the next row's text goes (the text area's start after its text was hashed, or back after a rollback). */
  textTo(p: number): void {
    this.k.fingerprintTo(p, this.textEnd, this.infoAt);
  }

  /** The end of the text appended so far. */
  textPos(): number {
    return this.k.fingerprintTo(0, 0, 0);
  }
}
