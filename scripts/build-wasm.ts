/**
 * Assembles the verify kernel's WebAssembly text (src/journal/fast/kernel.wat)
 * with the project's own assembler (src/wasm/wat.ts) and writes the bytes as
 * base64 into src/journal/fast/kernel-wasm.ts, so the product embeds the
 * kernel without reading files or depending on an assembler at run time.
 *
 *   bun scripts/build-wasm.ts [--check] [in.wat] [out.ts]
 *
 * With --check nothing is written: it exits 1 if the output is missing or no
 * longer matches the source (a test runs the same comparison).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { kernelModuleSource } from "../src/wasm/wat.ts";

export { kernelModuleSource };

const ROOT = join(import.meta.dir, "..");
export const KERNEL_WAT = join(ROOT, "src", "journal", "fast", "kernel.wat");
export const KERNEL_WASM_TS = join(ROOT, "src", "journal", "fast", "kernel-wasm.ts");

const USAGE = "usage: bun scripts/build-wasm.ts [--check] [in.wat] [out.ts]";

function main(argv: string[]): number {
  const check = argv.includes("--check");
  const positional = argv.filter((a) => a !== "--check");
  const unknown = positional.find((a) => a.startsWith("-"));
  if (unknown !== undefined || positional.length > 2) {
    console.error(unknown !== undefined ? `build-wasm: unknown option ${unknown}\n${USAGE}` : USAGE);
    return 2;
  }
  const input = positional[0] ?? KERNEL_WAT;
  const output = positional[1] ?? KERNEL_WASM_TS;

  let text: string;
  try {
    text = kernelModuleSource(readFileSync(input, "utf8"));
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

if (import.meta.main) process.exit(main(process.argv.slice(2)));
