/**
 * What the verify kernels' JavaScript side has in common: the module
 * compiled once per process from its committed base64, and the imports
 * through which a kernel hashes with Bun's native SHA-256 and hands a
 * number lexeme back to be checked as text.
 */

/** Views of this length and longer are not cached. */
const VIEW_CACHE = 16384;

/** A module compiled on first use and then shared (also with worker threads, which are handed it). */
export function compiledOnce(base64: string): { get(): WebAssembly.Module; set(m: WebAssembly.Module): void; binary(): Uint8Array; isCompiled(): boolean } {
  let compiled: WebAssembly.Module | undefined;
  let bytes: Uint8Array | undefined;
  const binary = () => (bytes ??= Buffer.from(base64, "base64"));
  return {
    binary,
    isCompiled: () => compiled !== undefined,
    get: () => (compiled ??= new WebAssembly.Module(binary())),
    set: (m) => {
      compiled = m;
    },
  };
}

/**
 * An import `(len) => void` that hashes the `len` bytes `viewOf(len)` (a
 * pre-image at a fixed place of the kernel's memory) into `digest`. Views
 * are cached by length: allocating one per row shows in the profile.
 */
export function lengthCachedHasher(viewOf: (len: number) => Uint8Array, digest: Uint8Array): (len: number) => void {
  const views: (Uint8Array | undefined)[] = [];
  return (len) => {
    let v = views[len];
    if (v === undefined) {
      v = viewOf(len);
      if (len < VIEW_CACHE) views[len] = v;
    }
    Bun.SHA256.hash(v, digest);
  };
}

