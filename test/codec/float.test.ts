/**
 * src/codec/float.wat decides, in the kernels and the row scanner, whether a float lexeme is
 * Python's repr of its value: 1, -1, or 0 to leave it to the host's exact
 * test (pyjson/float.ts isFloatRepr, itself held to Python by the pyjson
 * tests). Every decision it makes must be the host's, and it must make
 * most of them (else the kernels ask the host after all).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { assembleWat } from "../../scripts/build-wasm.ts";
import { floatRepr, isFloatRepr } from "../../src/pyjson/float.ts";
import { ROOT } from "../helpers/cli.ts";

/** float.wat in a module of its own, its decision exported (the kernels keep theirs inside). */
async function decider(): Promise<(lexeme: string) => number> {
  const wat = readFileSync(join(ROOT, "src", "codec", "float.wat"), "utf8");
  const text = `(module (memory (export "mem") 1)\n${wat}\n(func (export "decide") (param i32 i32) (result i32) (call $floatRepr (local.get 0) (local.get 1))))`;
  const x = new WebAssembly.Instance(new WebAssembly.Module(await assembleWat("float-test.wat", text)), {}).exports as {
    mem: WebAssembly.Memory;
    decide(s: number, e: number): number;
  };
  const enc = new TextEncoder();
  return (lexeme) => {
    const b = enc.encode(lexeme);
    const mem = new Uint8Array(x.mem.buffer);
    mem.set(b, 16);
    mem[16 + b.length] = 0x7d; // what follows a value in a row
    return x.decide(16, 16 + b.length);
  };
}

/** A seeded xorshift in [0, 1). */
function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}

/** The lexeme, Python's spelling and near misses of it: a digit off, one more or fewer, the other notation, the exponent respelt. */
function variants(v: number, rnd: () => number): string[] {
  const t = floatRepr(v);
  const out = [t, String(v), v.toPrecision(16), v.toPrecision(17), t + String(1 + Math.floor(rnd() * 9))];
  const mant = t.split("e")[0]!;
  const last = mant.charCodeAt(mant.length - 1) - 48;
  for (const d of [-2, -1, 1, 2]) if (last + d >= 1 && last + d <= 9) out.push(mant.slice(0, -1) + (last + d) + t.slice(mant.length));
  if (mant.includes(".") && mant.indexOf(".") < mant.length - 2) out.push(mant.slice(0, -1) + t.slice(mant.length));
  if (t.includes("e")) {
    const [m, x] = t.split("e") as [string, string];
    out.push(t.replace("e", "E"), t.replace(/e([-+])0(\d)$/, "e$1$2"), t.replace(/e([-+])/, "e$10"), t.replace("e+", "e"), (m.includes(".") ? m : m + ".") + "0e" + x);
    const fixed = Math.abs(Number(x)) < 90 ? v.toFixed(Math.max(0, Math.min(100, 3 - Number(x)))) : null;
    if (fixed !== null) out.push(fixed);
  }
  // the neighbouring doubles, in their own spelling
  const f = new Float64Array([v]);
  const u = new BigUint64Array(f.buffer);
  for (const d of [-1n, 1n]) {
    u[0] = u[0]! + d;
    if (Number.isFinite(f[0]!)) out.push(floatRepr(f[0]!));
    u[0] = u[0]! - d;
  }
  return out.filter((s) => /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(s));
}

describe("float.wat", () => {
  test("every lexeme it decides, it decides as the host does; it decides most of those the kernels used to ask about", async () => {
    const decide = await decider();
    const rnd = rng(0x5eed);
    let decided = 0;
    let undecided = 0;
    let hard = 0;
    let hardDecided = 0;
    const wrong: string[] = [];
    const check = (lexeme: string): void => {
      const r = decide(lexeme);
      const digits = lexeme.replace(/^-/, "").replace(/e.*$/i, "").replace(".", "").replace(/^0+/, "").length;
      // what the kernels' own digit tests leave over: 16-17 digits, or scientific notation
      const isHard = digits >= 16 || /[eE]/.test(lexeme);
      if (isHard) hard++;
      if (r === 0) {
        undecided++;
        return;
      }
      decided++;
      if (isHard) hardDecided++;
      if ((r === 1) !== isFloatRepr(lexeme) && wrong.length < 10) wrong.push(`${lexeme}: ${r}`);
    };
    for (let i = 0; i < 40_000; i++) {
      // fixed notation's range, timestamps, and the whole range of doubles
      const pick = rnd();
      let v: number;
      if (pick < 0.4) v = (1 + rnd() * 9) * 10 ** (Math.floor(rnd() * 20) - 4);
      else if (pick < 0.6) v = Math.floor(rnd() * 2e9) + rnd();
      else if (pick < 0.7) v = rnd();
      else if (pick < 0.8) {
        // 16 or 17 random digits anywhere in the range: where two spellings can read as one double
        let m = String(1 + Math.floor(rnd() * 9));
        for (let k = 16 + Math.floor(rnd() * 2); k > 1; k--) m += String(Math.floor(rnd() * 10));
        v = Number(`${m[0]}.${m.slice(1)}e${Math.floor(rnd() * 600) - 300}`);
      } else v = Number((1 + rnd() * 9).toPrecision(1 + Math.floor(rnd() * 17))) * 10 ** (Math.floor(rnd() * 640) - 320);
      if (!Number.isFinite(v) || v === 0) continue;
      for (const lexeme of variants(rnd() < 0.2 ? -v : v, rnd)) check(lexeme);
    }
    // powers of two (a binade's bottom, where the spacing halves) and named edges
    for (let e = -14; e < 54; e++) for (const v of [2 ** e, 2 ** e * (1 + 2 ** -52), 2 ** e * (1 - 2 ** -53)]) for (const l of variants(v, rnd)) check(l);
    for (const l of ["1e-05", "1e+16", "1e16", "1.0e-05", "0.00001", "0.0001", "10000000000000000.0", "1000000000000000.0", "9999999999999998.0", "1.7976931348623157e+308", "1e+308", "2e+308", "5e-324", "2.2250738585072014e-308", "1e-307", "1e-308", "0.00010000000000000001", "123456789012345678.5", "0.30000000000000004", "0.1", "-0.0"]) check(l);
    expect(wrong).toEqual([]);
    expect(decided).toBeGreaterThan(300_000);
    // it pays only if it takes most of what the digit tests leave over
    expect(hardDecided / hard).toBeGreaterThan(0.6);
    expect(undecided / (decided + undecided)).toBeLessThan(0.35);
  });

  test("16 and 17 digits from 1e-11 to 1e40, fixed and scientific: decided as the host decides, nearly all of them", async () => {
    // metrics, scores and durations: what a run records most (before, every scientific one and every fixed one
    // below 0.01 with 17 digits went to the host, a string made and parsed per float); smaller and larger
    // ones, whose scaled values pass 2^125, still go to the host
    const decide = await decider();
    const rnd = rng(0xf10a7);
    let reprs = 0;
    let reprsDecided = 0;
    let others = 0;
    let othersDecided = 0;
    const wrong: string[] = [];
    for (let i = 0; i < 60_000; i++) {
      const v = (1 + rnd() * 9) * 10 ** (Math.floor(rnd() * 52) - 11);
      const t = floatRepr(v);
      for (const lexeme of variants(rnd() < 0.2 ? -v : v, rnd)) {
        const digits = lexeme.replace(/^-/, "").replace(/e.*$/i, "").replace(".", "").replace(/^0+/, "").replace(/0+$/, "").length;
        // a float's lexeme (an integer's is never asked about) in the range, of 16 digits or more
        const a = Math.abs(Number(lexeme));
        if (digits < 16 || !/[.eE]/.test(lexeme) || a < 1e-11 || a > 1e40) continue;
        const r = decide(lexeme);
        const isRepr = lexeme === t || lexeme === `-${t}`;
        if (isRepr) reprs++;
        else others++;
        if (r === 0) continue;
        if (isRepr) reprsDecided++;
        else othersDecided++;
        if ((r === 1) !== isFloatRepr(lexeme) && wrong.length < 10) wrong.push(`${lexeme}: ${r}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(reprs).toBeGreaterThan(40_000);
    expect(reprsDecided / reprs).toBeGreaterThan(0.99);
    expect(others).toBeGreaterThan(100_000);
    expect(othersDecided / others).toBeGreaterThan(0.99);
  });
});
