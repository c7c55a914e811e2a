/**
 * A JIT hint for the verifier's hot code (JavaScriptCore, via bun:jsc).
 *
 * Every verifying thread is its own VM and JIT-compiles the scanner afresh;
 * on two cores that compile time competes with the verifying itself. JSC
 * FTL-compiles even tiny helpers on their own (~1-5 ms each), although the
 * hot callers inline them. Keeping such helpers at the DFG tier saves that
 * compile time (measured: ~50 ms of CPU per thread, ~5% of a two-thread
 * verify of a 221 MB journal) and changes no result: it only decides which
 * compiler optimises a function, and their callers still inline them.
 */
type Jsc = { noFTL?: (fn: unknown) => unknown };

let jsc: Jsc | null | undefined;

export function keepOutOfFTL(fns: readonly unknown[]): void {
  if (jsc === undefined) {
    try {
      jsc = require("bun:jsc") as Jsc;
    } catch {
      jsc = null;
    }
  }
  const noFTL = jsc?.noFTL;
  if (typeof noFTL !== "function") return;
  for (const fn of fns) if (typeof fn === "function") noFTL(fn);
}
