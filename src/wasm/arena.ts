/**
 * The memory of one verify-kernel instance. A kernel module declares its
 * fixed addresses (tables, digests, pre-image pieces) as exported immutable
 * i32 globals, the last of them `heapBase`, the first byte it leaves to its
 * host; the arena reads them from the module (layoutOf) and hands out named
 * areas above `heapBase`, so no address is written twice.
 */

/** Addresses a module exports as immutable i32 globals, read once per module. */
const layouts = new WeakMap<WebAssembly.Module, Readonly<Record<string, number>>>();

/**
 * The module's exported immutable i32 globals by name, read from its binary
 * (the global and export sections): no instance is made for it, since an
 * instance over a throwaway memory costs the engine memory of its own.
 */
export function layoutOf(module: WebAssembly.Module, binary: Uint8Array): Readonly<Record<string, number>> {
  let layout = layouts.get(module);
  if (layout !== undefined) return layout;
  let p = 8; // magic and version
  const u32 = (): number => {
    let v = 0;
    let shift = 0;
    for (;;) {
      const b = binary[p++]!;
      v += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if ((b & 0x80) === 0) return v;
    }
  };
  const i32 = (): number => {
    let v = 0;
    let shift = 0;
    let b: number;
    do {
      b = binary[p++]!;
      v |= (b & 0x7f) << shift;
      shift += 7;
    } while (b & 0x80);
    return shift < 32 && b & 0x40 ? v | (-1 << shift) : v;
  };
  const values: (number | null)[] = [];
  const found: Record<string, number> = {};
  while (p < binary.length) {
    const id = binary[p++]!;
    const end = u32() + p;
    if (id === 6) {
      for (let n = u32(); n > 0; n--) {
        const type = binary[p++]!;
        const mutable = binary[p++]!;
        // An immutable i32 whose initialiser is one i32.const (0x41 n 0x0b): an address.
        if (type === 0x7f && mutable === 0 && binary[p] === 0x41) {
          p++;
          values.push(i32());
        } else {
          values.push(null);
          while (binary[p] !== 0x0b) p++;
        }
        p++; // end
      }
    } else if (id === 7) {
      for (let n = u32(); n > 0; n--) {
        const len = u32();
        const name = new TextDecoder().decode(binary.subarray(p, p + len));
        p += len;
        const kind = binary[p++]!;
        const index = u32();
        const v = kind === 3 ? values[index] : undefined;
        if (v !== undefined && v !== null) found[name] = v;
      }
    }
    p = end;
  }
  if (found.heapBase === undefined) throw new Error("kernel module exports no heapBase");
  layout = Object.freeze(found);
  layouts.set(module, layout);
  return layout;
}

/** Bytes left after each area for small fixed writes and word loads past its end. */
export const AREA_SLACK = 256;

/**
 * Memories handed back (KernelArena.release), for the next arena of the same
 * size on this thread. The engine runs a full collection about every third
 * WebAssembly memory made, so a long-lived process that walks many journals
 * (the test suite) paid one every walk or two.
 */
const idleMemories: WebAssembly.Memory[] = [];
const IDLE_MEMORIES_MAX = 4;
const IDLE_MEMORY_BYTES = 8 << 20;

/** A memory of exactly `pages` pages: an idle one zeroed (as a new one is), else a new one. */
function memoryOf(pages: number): WebAssembly.Memory {
  const bytes = pages * 65536;
  const i = idleMemories.findIndex((m) => m.buffer.byteLength === bytes);
  if (i < 0) return new WebAssembly.Memory({ initial: pages });
  const m = idleMemories.splice(i, 1)[0]!;
  new Uint8Array(m.buffer).fill(0);
  return m;
}

export class KernelArena {
  readonly memory: WebAssembly.Memory;
  /** All of the memory. */
  readonly u8: Uint8Array;
  private readonly areas = new Map<string, { at: number; size: number }>();
  private readonly fixed: Readonly<Record<string, number>>;

  /**
   * `areas`: name -> size in bytes, laid out in order from the module's
   * `heapBase`, each 64-byte aligned and followed by AREA_SLACK bytes.
   */
  constructor(module: WebAssembly.Module, binary: Uint8Array, areas: readonly (readonly [string, number])[]) {
    this.fixed = layoutOf(module, binary);
    let top = this.fixed.heapBase!;
    for (const [name, size] of areas) {
      const at = (top + 63) & ~63;
      this.areas.set(name, { at, size });
      top = at + size + AREA_SLACK;
    }
    this.memory = memoryOf(Math.ceil(top / 65536));
    this.u8 = new Uint8Array(this.memory.buffer);
  }

  /**
   * Done with this arena: its memory goes back for the next arena of its
   * size, so nothing may read or write it through this arena, its views or
   * the instance over it again. One that grew large is let go, not kept.
   */
  release(): void {
    if (idleMemories.length < IDLE_MEMORIES_MAX && this.memory.buffer.byteLength <= IDLE_MEMORY_BYTES && !idleMemories.includes(this.memory)) idleMemories.push(this.memory);
  }

  /** A fixed address the module exports (a digest, the end of a pre-image). */
  addr(name: string): number {
    const a = this.fixed[name];
    if (a === undefined) throw new Error(`kernel module exports no ${name}`);
    return a;
  }

  /** The start of a named area. */
  at(name: string): number {
    const a = this.areas.get(name);
    if (a === undefined) throw new Error(`no kernel area ${name}`);
    return a.at;
  }

  /** A named area's bytes (its slack excluded). */
  view(name: string): Uint8Array {
    const a = this.at(name);
    return this.u8.subarray(a, a + this.areas.get(name)!.size);
  }

  /** `len` bytes at an exported fixed address. */
  fixedView(name: string, len: number): Uint8Array {
    const a = this.addr(name);
    return this.u8.subarray(a, a + len);
  }
}
