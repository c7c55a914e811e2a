/**
 * Assembles the WebAssembly kernels (src/journal/fast/kernel.wat, the run
 * journal's; src/steps/kernel.wat, the step journal's) with the project's
 * own assembler (src/wasm/wat.ts) and writes each one's bytes as base64 into
 * the kernel-wasm.ts beside it, so the product embeds the kernels without
 * reading files or depending on an assembler at run time.
 *
 *   bun scripts/build-wasm.ts [--check] [in.wat out.ts]
 *
 * Without paths it builds every kernel in KERNELS. With --check nothing is
 * written: it exits 1 if an output is missing or no longer matches its
 * source (a test runs the same comparison).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { kernelModuleSource, readWat } from "../src/wasm/wat.ts";

export { kernelModuleSource };

const ROOT = join(import.meta.dir, "..");
export const KERNEL_WAT = join(ROOT, "src", "journal", "fast", "kernel.wat");
export const KERNEL_WASM_TS = join(ROOT, "src", "journal", "fast", "kernel-wasm.ts");
export const STEP_KERNEL_WAT = join(ROOT, "src", "steps", "kernel.wat");
export const STEP_KERNEL_WASM_TS = join(ROOT, "src", "steps", "kernel-wasm.ts");

/** Every kernel the product embeds: [source, generated module]. */
export const KERNELS: readonly (readonly [string, string])[] = [
  [KERNEL_WAT, KERNEL_WASM_TS],
  [STEP_KERNEL_WAT, STEP_KERNEL_WASM_TS],
];

const USAGE = "usage: bun scripts/build-wasm.ts [--check] [in.wat out.ts]";

/** Build (or with `check`, compare) one kernel; 0 on success, 1 on failure. */
function buildOne(input: string, output: string, check: boolean): number {
  let text: string;
  try {
    text = kernelModuleSource(readWat(input));
  } catch (e) {
    console.error(`build-wasm: ${input}: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
  if (check) {
    if (!existsSync(output)) {
      console.error(`build-wasm: ${output} is missing; run bun scripts/build-wasm.ts`);
      return 1;
    }
    if (readFileSync(output, "utf8") !== text) {
      console.error(`build-wasm: ${output} is stale (does not match ${input}); run bun scripts/build-wasm.ts`);
      return 1;
    }
    console.log(`build-wasm: ${output} is current`);
    return 0;
  }
  writeFileSync(output, text);
  console.log(`build-wasm: wrote ${output}`);
  return 0;
}

function main(argv: string[]): number {
  const check = argv.includes("--check");
  const positional = argv.filter((a) => a !== "--check");
  const unknown = positional.find((a) => a.startsWith("-"));
  if (unknown !== undefined || positional.length === 1 || positional.length > 2) {
    console.error(unknown !== undefined ? `build-wasm: unknown option ${unknown}\n${USAGE}` : USAGE);
    return 2;
  }
  const jobs = positional.length === 2 ? [[positional[0]!, positional[1]!] as const] : KERNELS;
  // Every kernel is built (or checked) even after one fails, so one run reports them all.
  let status = 0;
  for (const [input, output] of jobs) status = Math.max(status, buildOne(input, output, check));
  return status;
}

if (import.meta.main) process.exit(main(process.argv.slice(2)));
