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
 * The module's exported i32 globals by name. Read from a throwaway instance
 * (its imports stubbed, its memory one page): globals are fixed at
 * instantiation, so every later instance has the same values.
 */
export function layoutOf(module: WebAssembly.Module): Readonly<Record<string, number>> {
  let layout = layouts.get(module);
  if (layout !== undefined) return layout;
  const env: Record<string, unknown> = {};
  for (const imp of WebAssembly.Module.imports(module)) {
    env[imp.name] = imp.kind === "memory" ? new WebAssembly.Memory({ initial: 1 }) : () => 0;
  }
  const exports = new WebAssembly.Instance(module, { env } as unknown as ConstructorParameters<typeof WebAssembly.Instance>[1]).exports;
  const found: Record<string, number> = {};
  for (const [name, value] of Object.entries(exports)) {
    if (value instanceof WebAssembly.Global) found[name] = value.value as number;
  }
  if (found.heapBase === undefined) throw new Error("kernel module exports no heapBase");
  layout = Object.freeze(found);
  layouts.set(module, layout);
  return layout;
}

/** Bytes left after each area for small fixed writes and word loads past its end. */
export const AREA_SLACK = 256;

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
  constructor(module: WebAssembly.Module, areas: readonly (readonly [string, number])[]) {
    this.fixed = layoutOf(module);
    let top = this.fixed.heapBase!;
    for (const [name, size] of areas) {
      const at = (top + 63) & ~63;
      this.areas.set(name, { at, size });
      top = at + size + AREA_SLACK;
    }
    this.memory = new WebAssembly.Memory({ initial: Math.ceil(top / 65536) });
    this.u8 = new Uint8Array(this.memory.buffer);
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
