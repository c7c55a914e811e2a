/**
 * The specifier of a worker entry point, named by its path under src/
 * (`journal/fast/worker.ts`): in the compiled binary the entry points are
 * embedded relative to their common root (src/, which is where this
 * module's own directory resolves there); in a source run, the file itself.
 * Each entry point is listed in scripts/worker-entrypoints.txt.
 */
export function workerEntry(underSrc: string): string {
  const here = import.meta.url;
  if (here.startsWith("file:///$bunfs/") || here.startsWith("file:///B:/~BUN/")) return `${import.meta.dir}/${underSrc}`;
  return new URL(`../${underSrc}`, here).href;
}
