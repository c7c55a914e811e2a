/**
 * Counts the WebAssembly memories made until `restore()`: the initial size
 * (pages) of each, in order. The engine runs a full collection about every
 * third memory made, so tests hold the code to reusing them.
 */
export function countMemories(): { made: number[]; restore(): void } {
  const made: number[] = [];
  const Memory = WebAssembly.Memory;
  const counting = function (this: unknown, d: WebAssembly.MemoryDescriptor) {
    made.push(d.initial);
    return new Memory(d);
  } as unknown as typeof WebAssembly.Memory;
  counting.prototype = Memory.prototype;
  (WebAssembly as { Memory: typeof WebAssembly.Memory }).Memory = counting;
  return {
    made,
    restore: () => {
      (WebAssembly as { Memory: typeof WebAssembly.Memory }).Memory = Memory;
    },
  };
}
