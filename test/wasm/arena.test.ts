import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { KERNEL_WASM_BASE64 } from "../../src/steps/kernel-wasm.ts";
import { verifyStepJournal } from "../../src/steps/index.ts";
import { KernelArena } from "../../src/wasm/arena.ts";
import { compiledOnce } from "../../src/wasm/host.ts";
import { VECTORS } from "../helpers/cli.ts";
import { countMemories } from "../helpers/wasm-memories.ts";

const stepModule = compiledOnce(KERNEL_WASM_BASE64);
const arena = (bytes: number) => new KernelArena(stepModule.get(), stepModule.binary(), [["area", bytes]]);

/** The WebAssembly memories made while a test runs. */
let counted: ReturnType<typeof countMemories>;
let made: number[] = [];
beforeEach(() => {
  counted = countMemories();
  made = counted.made;
});
afterEach(() => counted.restore());

describe("KernelArena.release", () => {
  // An odd size, so no memory another test file released has its page count.
  const ODD = 37 * 65536 + 123;

  test("the next arena of the same size takes the released memory, zeroed as a new one is", () => {
    const a = arena(ODD);
    expect(made.length).toBe(1);
    a.view("area").fill(0xab);
    a.u8.fill(0xcd, 0, 64);
    a.release();
    a.release(); // twice: still one memory to hand out, not two
    const b = arena(ODD);
    expect(made.length).toBe(1);
    expect(b.memory).toBe(a.memory);
    expect(b.u8.every((v) => v === 0)).toBe(true);
    const c = arena(ODD);
    expect(made.length).toBe(2);
    expect(c.memory).not.toBe(b.memory);
  });

  test("an arena of another size makes its own; one over 8 MiB is not kept", () => {
    arena(ODD).release();
    arena(ODD + 3 * 65536);
    expect(made.length).toBe(2);
    const big = arena(9 << 20);
    big.release();
    arena(9 << 20);
    expect(made.length).toBe(4);
  });
});

describe("step journal walks hand their kernel memory on", () => {
  const bucket = join(VECTORS, "agent-journal", "sdd", "runtime", "journal", "agent-a", "000000.jsonl");

  test("a second verify makes no memory and gives the same verdict", async () => {
    const first = await verifyStepJournal(bucket);
    expect(first.ok).toBe(true);
    const before = made.length;
    expect(await verifyStepJournal(bucket)).toEqual(first);
    expect(made.length).toBe(before);
  });
});
