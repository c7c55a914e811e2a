/**
 * The WAT-subset assembler: modules are assembled and RUN in Bun's engine
 * (an engine accepting the bytes and computing the right values is the proof
 * that opcodes and encodings are right), plus exact-byte checks of the LEB128
 * edge cases and the errors' line numbers and tokens.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assembleWat, kernelModuleSource, readWat, sleb128, uleb128 } from "../../src/wasm/wat.ts";

// Each test module exports its own functions, globals and memories.
type Exports = Record<string, any>;

function run(wat: string, imports: ConstructorParameters<typeof WebAssembly.Instance>[1] = {}): Exports {
  return new WebAssembly.Instance(new WebAssembly.Module(assembleWat(wat)), imports).exports as Exports;
}

function readU32(bytes: Uint8Array, at: number): { value: number; next: number } {
  let value = 0;
  let shift = 0;
  let i = at;
  for (;;) {
    const b = bytes[i++]!;
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if ((b & 0x80) === 0) return { value, next: i };
  }
}

/** The module's sections as (id, content) in file order. */
function sections(bytes: Uint8Array): { id: number; content: Uint8Array }[] {
  expect(Array.from(bytes.subarray(0, 8))).toEqual([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
  const out: { id: number; content: Uint8Array }[] = [];
  let i = 8;
  while (i < bytes.length) {
    const id = bytes[i]!;
    const size = readU32(bytes, i + 1);
    out.push({ id, content: bytes.subarray(size.next, size.next + size.value) });
    i = size.next + size.value;
  }
  return out;
}

/** The bodies (local declarations, instructions, end) of the defined functions. */
function bodies(bytes: Uint8Array): number[][] {
  const code = sections(bytes).find((s) => s.id === 10)!.content;
  const count = readU32(code, 0);
  const out: number[][] = [];
  let i = count.next;
  for (let n = 0; n < count.value; n++) {
    const size = readU32(code, i);
    out.push(Array.from(code.subarray(size.next, size.next + size.value)));
    i = size.next + size.value;
  }
  return out;
}

/** The instruction bytes of a one-function module whose function has no locals (drops the 0 local count and final end). */
function instrs(funcBody: string, header = "", fields = ""): number[] {
  const body = bodies(assembleWat(`(module ${fields} (func ${header} ${funcBody}))`))[0]!;
  expect(body[0]).toBe(0); // no local runs
  expect(body[body.length - 1]).toBe(0x0b);
  return body.slice(1, -1);
}

function errorOf(wat: string): string {
  try {
    assembleWat(wat);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("expected the assembler to throw");
}

/** Asserts the error names the line and the token (JSON-quoted in the message). */
function expectError(wat: string, line: number, token: string, words?: string): void {
  const message = errorOf(wat);
  expect(message).toContain(`line ${line}:`);
  expect(message).toContain(JSON.stringify(token));
  if (words) expect(message).toContain(words);
}

describe("LEB128", () => {
  test("unsigned", () => {
    expect(uleb128(0)).toEqual([0]);
    expect(uleb128(127)).toEqual([0x7f]);
    expect(uleb128(128)).toEqual([0x80, 0x01]);
    expect(uleb128(624485)).toEqual([0xe5, 0x8e, 0x26]);
    expect(uleb128(0xffffffff)).toEqual([0xff, 0xff, 0xff, 0xff, 0x0f]);
    expect(() => uleb128(-1)).toThrow();
    expect(() => uleb128(2 ** 32)).toThrow();
  });

  test("signed", () => {
    expect(sleb128(0n)).toEqual([0]);
    expect(sleb128(-1n)).toEqual([0x7f]);
    expect(sleb128(63n)).toEqual([0x3f]);
    expect(sleb128(64n)).toEqual([0xc0, 0x00]);
    expect(sleb128(-64n)).toEqual([0x40]);
    expect(sleb128(-65n)).toEqual([0xbf, 0x7f]);
    expect(sleb128(-123456n)).toEqual([0xc0, 0xbb, 0x78]);
  });

  test("i32.const edge values: exact bytes and run results", () => {
    const cases: [string, number[], number][] = [
      ["-1", [0x7f], -1],
      ["0", [0x00], 0],
      ["63", [0x3f], 63],
      ["64", [0xc0, 0x00], 64],
      ["-64", [0x40], -64],
      ["-65", [0xbf, 0x7f], -65],
      ["0x7fffffff", [0xff, 0xff, 0xff, 0xff, 0x07], 0x7fffffff],
      ["2147483647", [0xff, 0xff, 0xff, 0xff, 0x07], 0x7fffffff],
      ["-0x80000000", [0x80, 0x80, 0x80, 0x80, 0x78], -0x80000000],
      ["0x80000000", [0x80, 0x80, 0x80, 0x80, 0x78], -0x80000000],
      ["0xffffffff", [0x7f], -1],
      ["4_294_967_295", [0x7f], -1],
      ["+12", [0x0c], 12],
      ["0xDEAD_beef", sleb128(BigInt(0xdeadbeef | 0)), 0xdeadbeef | 0],
    ];
    for (const [text, leb, value] of cases) {
      expect(instrs(`i32.const ${text}`, "(result i32)")).toEqual([0x41, ...leb]);
      expect(run(`(module (func (export "f") (result i32) (i32.const ${text})))`).f()).toBe(value);
    }
  });

  test("i64.const edge values: exact bytes and run results", () => {
    const cases: [string, number[], bigint][] = [
      ["-1", [0x7f], -1n],
      ["0x8000000000000000", [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f], -(2n ** 63n)],
      ["-0x8000000000000000", [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f], -(2n ** 63n)],
      ["0x7fffffffffffffff", [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00], 2n ** 63n - 1n],
      ["0xffffffffffffffff", [0x7f], -1n],
      ["18446744073709551615", [0x7f], -1n],
      ["0xffffffff", [0xff, 0xff, 0xff, 0xff, 0x0f], 0xffffffffn],
      ["-0x80000001", sleb128(-0x80000001n), -0x80000001n],
      ["1_000_000_000_000", sleb128(10n ** 12n), 10n ** 12n],
    ];
    for (const [text, leb, value] of cases) {
      expect(instrs(`i64.const ${text}`, "(result i64)")).toEqual([0x42, ...leb]);
      expect(run(`(module (func (export "f") (result i64) i64.const ${text}))`).f()).toBe(value);
    }
  });

  test("constants out of range or malformed are errors", () => {
    const f = (c: string) => `(module\n (func (result i32)\n  ${c}))`;
    expectError(f("i32.const 0x100000000"), 3, "0x100000000", "out of range");
    expectError(f("i32.const 4294967296"), 3, "4294967296", "out of range");
    expectError(f("i32.const -0x80000001"), 3, "-0x80000001", "out of range");
    expectError(f("i32.const +0x80000000"), 3, "+0x80000000", "out of range");
    expectError(f("i32.const abc"), 3, "abc", "bad i32 constant");
    expectError(f("i32.const 1__0"), 3, "1__0");
    expectError(f("i32.const _1"), 3, "_1");
    expectError(f("i32.const 0x"), 3, "0x");
    expectError(f("i32.const 1.5"), 3, "1.5");
    expectError(f("i64.const 0x10000000000000000"), 3, "0x10000000000000000", "out of range");
    expectError(f("i64.const -0x8000000000000001"), 3, "-0x8000000000000001", "out of range");
  });
});

describe("numeric instructions computed by the engine", () => {
  const I32_VALUES = [0, 1, -1, 2, 7, 31, 32, 33, 255, 256, 0x8000, 0x7fffffff, -0x80000000, 0x12345678, -123456789];
  const u = (x: number) => x >>> 0;
  const popcnt32 = (x: number) => {
    let n = 0;
    for (let v = x >>> 0; v !== 0; v >>>= 1) n += v & 1;
    return n;
  };
  const I32_BINARY: Record<string, (a: number, b: number) => number> = {
    eq: (a, b) => +(a === b),
    ne: (a, b) => +(a !== b),
    lt_s: (a, b) => +(a < b),
    lt_u: (a, b) => +(u(a) < u(b)),
    gt_s: (a, b) => +(a > b),
    gt_u: (a, b) => +(u(a) > u(b)),
    le_s: (a, b) => +(a <= b),
    le_u: (a, b) => +(u(a) <= u(b)),
    ge_s: (a, b) => +(a >= b),
    ge_u: (a, b) => +(u(a) >= u(b)),
    add: (a, b) => (a + b) | 0,
    sub: (a, b) => (a - b) | 0,
    mul: (a, b) => Math.imul(a, b),
    div_s: (a, b) => Math.trunc(a / b) | 0,
    div_u: (a, b) => Math.trunc(u(a) / u(b)) | 0,
    rem_s: (a, b) => (a % b) | 0,
    rem_u: (a, b) => u(a) % u(b) | 0,
    and: (a, b) => a & b,
    or: (a, b) => a | b,
    xor: (a, b) => a ^ b,
    shl: (a, b) => a << b,
    shr_s: (a, b) => a >> b,
    shr_u: (a, b) => (a >>> b) | 0,
    rotl: (a, b) => (a << (b & 31)) | (a >>> ((32 - (b & 31)) & 31)),
    rotr: (a, b) => (a >>> (b & 31)) | (a << ((32 - (b & 31)) & 31)),
  };
  const I32_UNARY: Record<string, (a: number) => number> = {
    eqz: (a) => +(a === 0),
    clz: (a) => Math.clz32(a),
    ctz: (a) => (a === 0 ? 32 : 31 - Math.clz32(a & -a)),
    popcnt: popcnt32,
    extend8_s: (a) => (a << 24) >> 24,
    extend16_s: (a) => (a << 16) >> 16,
  };
  const traps = (op: string, a: number | bigint, b: number | bigint, min: number | bigint) =>
    (op.startsWith("div") || op.startsWith("rem")) && (b == 0 || (op === "div_s" && a === min && b == -1));

  test("every i32 operation", () => {
    const funcs = [
      ...Object.keys(I32_BINARY).map((op) => `(func (export "${op}") (param i32 i32) (result i32) (i32.${op} (local.get 0) (local.get 1)))`),
      ...Object.keys(I32_UNARY).map((op) => `(func (export "${op}") (param i32) (result i32) local.get 0 i32.${op})`),
    ];
    const m = run(`(module ${funcs.join("\n")})`);
    for (const [op, ref] of Object.entries(I32_BINARY)) {
      for (const a of I32_VALUES) {
        for (const b of I32_VALUES) {
          if (traps(op, a, b, -0x80000000)) continue;
          if (m[op](a, b) !== ref(a, b)) throw new Error(`i32.${op}(${a}, ${b}) = ${m[op](a, b)}, expected ${ref(a, b)}`);
        }
      }
    }
    for (const [op, ref] of Object.entries(I32_UNARY)) {
      for (const a of I32_VALUES) expect([op, a, m[op](a)]).toEqual([op, a, ref(a)]);
    }
    expect(() => m.div_s(1, 0)).toThrow();
    expect(() => m.div_s(-0x80000000, -1)).toThrow();
  });

  const I64_VALUES = [0n, 1n, -1n, 2n, 63n, 64n, 65n, 0xffffffffn, 0x100000000n, -0x80000000n, 2n ** 63n - 1n, -(2n ** 63n), 0x123456789abcdef0n, -987654321012345n];
  const s64 = (x: bigint) => BigInt.asIntN(64, x);
  const u64 = (x: bigint) => BigInt.asUintN(64, x);
  const I64_COMPARE: Record<string, (a: bigint, b: bigint) => number> = {
    eq: (a, b) => +(a === b),
    ne: (a, b) => +(a !== b),
    lt_s: (a, b) => +(a < b),
    lt_u: (a, b) => +(u64(a) < u64(b)),
    gt_s: (a, b) => +(a > b),
    gt_u: (a, b) => +(u64(a) > u64(b)),
    le_s: (a, b) => +(a <= b),
    le_u: (a, b) => +(u64(a) <= u64(b)),
    ge_s: (a, b) => +(a >= b),
    ge_u: (a, b) => +(u64(a) >= u64(b)),
  };
  const I64_BINARY: Record<string, (a: bigint, b: bigint) => bigint> = {
    add: (a, b) => s64(a + b),
    sub: (a, b) => s64(a - b),
    mul: (a, b) => s64(a * b),
    div_s: (a, b) => s64(a / b),
    div_u: (a, b) => s64(u64(a) / u64(b)),
    rem_s: (a, b) => s64(a % b),
    rem_u: (a, b) => s64(u64(a) % u64(b)),
    and: (a, b) => s64(a & b),
    or: (a, b) => s64(a | b),
    xor: (a, b) => s64(a ^ b),
    shl: (a, b) => s64(a << (u64(b) & 63n)),
    shr_s: (a, b) => a >> (u64(b) & 63n),
    shr_u: (a, b) => s64(u64(a) >> (u64(b) & 63n)),
    rotl: (a, b) => s64((u64(a) << (u64(b) & 63n)) | (u64(a) >> ((64n - (u64(b) & 63n)) & 63n))),
    rotr: (a, b) => s64((u64(a) >> (u64(b) & 63n)) | (u64(a) << ((64n - (u64(b) & 63n)) & 63n))),
  };
  const I64_UNARY: Record<string, (a: bigint) => bigint> = {
    clz: (a) => BigInt(64 - u64(a).toString(2).replace(/^0$/, "").length),
    ctz: (a) => (a === 0n ? 64n : BigInt(u64(a).toString(2).length - 1 - u64(a).toString(2).lastIndexOf("1"))),
    popcnt: (a) => BigInt(u64(a).toString(2).replaceAll("0", "").length),
    extend8_s: (a) => BigInt.asIntN(8, a),
    extend16_s: (a) => BigInt.asIntN(16, a),
    extend32_s: (a) => BigInt.asIntN(32, a),
  };

  test("every i64 operation", () => {
    const funcs = [
      ...Object.keys(I64_COMPARE).map((op) => `(func (export "${op}") (param i64 i64) (result i32) (i64.${op} (local.get 0) (local.get 1)))`),
      ...Object.keys(I64_BINARY).map((op) => `(func (export "${op}") (param i64 i64) (result i64) (i64.${op} (local.get 0) (local.get 1)))`),
      ...Object.keys(I64_UNARY).map((op) => `(func (export "${op}") (param i64) (result i64) (i64.${op} (local.get 0)))`),
      `(func (export "eqz") (param i64) (result i32) (i64.eqz (local.get 0)))`,
    ];
    const m = run(`(module ${funcs.join("\n")})`);
    const all: Record<string, (a: bigint, b: bigint) => bigint | number> = { ...I64_COMPARE, ...I64_BINARY };
    for (const [op, ref] of Object.entries(all)) {
      for (const a of I64_VALUES) {
        for (const b of I64_VALUES) {
          if (traps(op, a, b, -(2n ** 63n))) continue;
          if (m[op](a, b) !== ref(a, b)) throw new Error(`i64.${op}(${a}, ${b}) = ${m[op](a, b)}, expected ${ref(a, b)}`);
        }
      }
    }
    for (const [op, ref] of Object.entries(I64_UNARY)) {
      for (const a of I64_VALUES) expect([op, a, m[op](a)]).toEqual([op, a, ref(a)]);
    }
    for (const a of I64_VALUES) expect(m.eqz(a)).toBe(+(a === 0n));
  });

  test("conversions between i32 and i64", () => {
    const m = run(`(module
      (func (export "wrap") (param i64) (result i32) (i32.wrap_i64 (local.get 0)))
      (func (export "extend_s") (param i32) (result i64) (i64.extend_i32_s (local.get 0)))
      (func (export "extend_u") (param i32) (result i64) (i64.extend_i32_u (local.get 0))))`);
    for (const a of I64_VALUES) expect(m.wrap(a)).toBe(Number(BigInt.asIntN(32, a)));
    for (const a of I32_VALUES) {
      expect(m.extend_s(a)).toBe(BigInt(a));
      expect(m.extend_u(a)).toBe(BigInt(a >>> 0));
    }
  });
});

describe("memory", () => {
  const LOADS: [string, string, (v: DataView, at: number) => number | bigint][] = [
    ["i32.load", "i32", (v, at) => v.getInt32(at, true)],
    ["i32.load8_s", "i32", (v, at) => v.getInt8(at)],
    ["i32.load8_u", "i32", (v, at) => v.getUint8(at)],
    ["i32.load16_s", "i32", (v, at) => v.getInt16(at, true)],
    ["i32.load16_u", "i32", (v, at) => v.getUint16(at, true)],
    ["i64.load", "i64", (v, at) => v.getBigInt64(at, true)],
    ["i64.load8_s", "i64", (v, at) => BigInt(v.getInt8(at))],
    ["i64.load8_u", "i64", (v, at) => BigInt(v.getUint8(at))],
    ["i64.load16_s", "i64", (v, at) => BigInt(v.getInt16(at, true))],
    ["i64.load16_u", "i64", (v, at) => BigInt(v.getUint16(at, true))],
    ["i64.load32_s", "i64", (v, at) => BigInt(v.getInt32(at, true))],
    ["i64.load32_u", "i64", (v, at) => BigInt(v.getUint32(at, true))],
  ];

  test("every load, with and without offset=", () => {
    const funcs = LOADS.map(
      ([op, t]) => `(func (export "${op}") (param i32) (result ${t}) (${op} (local.get 0)))
                    (func (export "${op}+3") (param i32) (result ${t}) local.get 0 ${op} offset=3)`,
    );
    const m = run(`(module (memory (export "mem") 1) ${funcs.join("\n")})`);
    const bytes = new Uint8Array(m.mem.buffer);
    bytes.set([0x80, 0xff, 0x7f, 0x01, 0xfe, 0x00, 0x81, 0x92, 0xa3, 0xb4, 0xc5, 0xd6, 0xe7, 0xf8]);
    const view = new DataView(m.mem.buffer);
    for (const [op, , ref] of LOADS) {
      for (const at of [0, 1, 2, 3]) {
        expect([op, at, m[op](at)]).toEqual([op, at, ref(view, at)]);
        expect([op, at, m[`${op}+3`](at)]).toEqual([op, at, ref(view, at + 3)]);
      }
    }
  });

  test("every store", () => {
    const STORES: [string, string, number | bigint, number[]][] = [
      ["i32.store", "i32", -2, [0xfe, 0xff, 0xff, 0xff]],
      ["i32.store8", "i32", 0x1234, [0x34, 0, 0, 0]],
      ["i32.store16", "i32", 0x123456, [0x56, 0x34, 0, 0]],
      ["i64.store", "i64", 0x0102030405060708n, [8, 7, 6, 5, 4, 3, 2, 1]],
      ["i64.store8", "i64", 0x1ffn, [0xff, 0, 0, 0, 0, 0, 0, 0]],
      ["i64.store16", "i64", -1n, [0xff, 0xff, 0, 0, 0, 0, 0, 0]],
      ["i64.store32", "i64", 0x1_2345_6789n, [0x89, 0x67, 0x45, 0x23, 0, 0, 0, 0]],
    ];
    const funcs = STORES.map(([op, t]) => `(func (export "${op}") (param i32 ${t}) (${op} offset=8 align=1 (local.get 0) (local.get 1)))`);
    const m = run(`(module (memory (export "mem") 1) ${funcs.join("\n")})`);
    const bytes = new Uint8Array(m.mem.buffer);
    for (const [op, , value, expected] of STORES) {
      bytes.fill(0, 0, 64);
      m[op](16, value);
      expect([op, Array.from(bytes.subarray(24, 24 + expected.length))]).toEqual([op, expected]);
    }
  });

  test("memarg encoding: default natural alignment, align= as log2, large offsets", () => {
    const mem = "(memory 1)";
    expect(instrs("i32.const 0 i32.load drop", "", mem)).toEqual([0x41, 0, 0x28, 2, 0, 0x1a]);
    expect(instrs("i32.const 0 i64.load drop", "", mem)).toEqual([0x41, 0, 0x29, 3, 0, 0x1a]);
    expect(instrs("i32.const 0 i32.load16_u drop", "", mem)).toEqual([0x41, 0, 0x2f, 1, 0, 0x1a]);
    expect(instrs("i32.const 0 i32.load offset=4 align=4 drop", "", mem)).toEqual([0x41, 0, 0x28, 2, 4, 0x1a]);
    expect(instrs("i32.const 0 i32.load offset=4 align=2 drop", "", mem)).toEqual([0x41, 0, 0x28, 1, 4, 0x1a]);
    expect(instrs("i32.const 0 i64.load align=1 drop", "", mem)).toEqual([0x41, 0, 0x29, 0, 0, 0x1a]);
    expect(instrs("i32.const 0 i32.load offset=0xffffffff drop", "", mem)).toEqual([0x41, 0, 0x28, 2, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x1a]);
    expect(instrs("i32.const 0 i32.load8_u offset=1_000 drop", "", mem)).toEqual([0x41, 0, 0x2d, 0, 0xe8, 0x07, 0x1a]);

    const m = run(`(module (memory (export "mem") 2)
      (func (export "far") (param i32) (result i32) (i32.load8_u offset=0x10000 (local.get 0)))
      (func (export "beyond") (result i32) (i32.load offset=0xffffffff (i32.const 0))))`);
    new Uint8Array(m.mem.buffer)[0x10005] = 42;
    expect(m.far(5)).toBe(42);
    expect(() => m.beyond()).toThrow(WebAssembly.RuntimeError);
  });

  test("memory.size, memory.grow, memory.copy, memory.fill", () => {
    const m = run(`(module (memory (export "mem") 1 3)
      (func (export "size") (result i32) memory.size)
      (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0)))
      (func (export "fill") (param i32 i32 i32) (memory.fill (local.get 0) (local.get 1) (local.get 2)))
      (func (export "copy") (param $dst i32) (param $src i32) (param $n i32)
        local.get $dst local.get $src local.get $n memory.copy))`);
    expect(m.size()).toBe(1);
    expect(m.grow(1)).toBe(1);
    expect(m.size()).toBe(2);
    expect(m.grow(5)).toBe(-1); // above the maximum of 3
    let bytes = new Uint8Array(m.mem.buffer); // growing detached the old buffer
    m.fill(10, 0xab, 6);
    expect(Array.from(bytes.subarray(8, 18))).toEqual([0, 0, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0, 0]);
    bytes.set([1, 2, 3, 4, 5, 6, 7, 8], 100);
    m.copy(102, 100, 6); // overlapping, forwards: memmove semantics
    expect(Array.from(bytes.subarray(100, 108))).toEqual([1, 2, 1, 2, 3, 4, 5, 6]);
    m.copy(0x1fff0, 100, 4); // into the grown page
    bytes = new Uint8Array(m.mem.buffer);
    expect(Array.from(bytes.subarray(0x1fff0, 0x1fff4))).toEqual([1, 2, 1, 2]);
    expect(() => m.fill(0x20000, 0, 1)).toThrow(WebAssembly.RuntimeError);
    // The bulk-memory encodings, with their memory-index zero bytes.
    expect(instrs("memory.copy memory.fill memory.size drop memory.grow drop", "(param i32 i32 i32 i32 i32 i32 i32)", "(memory 1)")).toEqual([
      0xfc, 0x0a, 0x00, 0x00, 0xfc, 0x0b, 0x00, 0x3f, 0x00, 0x1a, 0x40, 0x00, 0x1a,
    ]);
  });

  test("data segments with string escapes, and the DataCount section", () => {
    const wat = `(module
      (memory (export "mem") 1)
      (data (i32.const 16) "a\\n\\t\\r\\\\\\'\\"" "\\00\\ff\\7F" "\\u{e9}\\u{1F600}" "é;;(;x;)")
      (data (offset (i32.const 0x40)) "xyz")
      (data (offset i32.const 80))
      (func (export "at") (param i32) (result i32) (i32.load8_u (local.get 0))))`;
    const bytes = assembleWat(wat);
    expect(sections(bytes).map((s) => s.id)).toEqual([1, 3, 5, 7, 12, 10, 11]);
    expect(Array.from(sections(bytes).find((s) => s.id === 12)!.content)).toEqual([3]);
    const m = run(wat);
    const mem = new Uint8Array(m.mem.buffer);
    const expected = [
      ...[0x61, 0x0a, 0x09, 0x0d, 0x5c, 0x27, 0x22],
      ...[0x00, 0xff, 0x7f],
      ...[0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80],
      ...new TextEncoder().encode("é;;(;x;)"),
    ];
    expect(Array.from(mem.subarray(16, 16 + expected.length))).toEqual(expected);
    expect(m.at(16 + 8)).toBe(0xff);
    expect(new TextDecoder().decode(mem.subarray(0x40, 0x43))).toBe("xyz");
    // Without data segments there is no DataCount section.
    expect(sections(assembleWat(`(module (memory 1))`)).map((s) => s.id)).toEqual([5]);
  });

  test("an imported memory is shared with JS", () => {
    const memory = new WebAssembly.Memory({ initial: 1, maximum: 2 });
    const m = run(
      `(module
        (import "env" "mem" (memory $m 1 2))
        (export "same" (memory $m))
        (func (export "put") (param $at i32) (param $v i64) (i64.store (local.get $at) (local.get $v)))
        (func (export "sum") (param $at i32) (param $n i32) (result i32) (local $s i32)
          (block $done
            (loop $next
              (br_if $done (i32.eqz (local.get $n)))
              (local.set $s (i32.add (local.get $s) (i32.load8_u (local.get $at))))
              (local.set $at (i32.add (local.get $at) (i32.const 1)))
              (local.set $n (i32.sub (local.get $n) (i32.const 1)))
              (br $next)))
          (local.get $s)))`,
      { env: { mem: memory } },
    );
    m.put(8, 0x0807060504030201n);
    expect(Array.from(new Uint8Array(memory.buffer, 8, 8))).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    new Uint8Array(memory.buffer).set([10, 20, 30], 100);
    expect(m.sum(100, 3)).toBe(60);
    expect(m.same).toBe(memory);
  });
});

describe("control flow", () => {
  test("br_table picks the label by index, the last being the default", () => {
    const m = run(`(module (func (export "sw") (param i32) (result i32)
      (block $d
        (block $c
          (block $b
            (block $a (br_table $a $b $c $d (local.get 0)))
            (return (i32.const 10)))
          (return (i32.const 11)))
        (return (i32.const 12)))
      (i32.const 99)))`);
    expect([0, 1, 2, 3, 4, 1000, -1].map((i) => m.sw(i))).toEqual([10, 11, 12, 99, 99, 99, 99]);
    // Numeric depths, flat form, and a table of zero entries plus the default.
    const flat = run(`(module (func (export "sw") (param i32) (result i32)
      block block block local.get 0 br_table 0 1 2 end i32.const 10 return end i32.const 11 return end i32.const 12)
      (func (export "only") (param i32) (result i32)
        (block (br_table 0 (local.get 0))) (i32.const 5)))`);
    expect([0, 1, 2, 7].map((i) => flat.sw(i))).toEqual([10, 11, 12, 12]);
    expect(flat.only(3)).toBe(5);
    expect(instrs("(block $a (block $b (br_table $b $a $b (local.get 0))))", "(param i32)")).toEqual([
      0x02, 0x40, 0x02, 0x40, 0x20, 0x00, 0x0e, 0x02, 0x00, 0x01, 0x00, 0x0b, 0x0b,
    ]);
  });

  test("labels resolve to the right depth; the innermost of equal names wins", () => {
    // br $x from inside the inner $x must leave only the inner block (depth 0).
    expect(instrs("(block $x (block $x (br $x)))")).toEqual([0x02, 0x40, 0x02, 0x40, 0x0c, 0x00, 0x0b, 0x0b]);
    expect(instrs("(block $o (loop $l (block $i (br $o) (br $l) (br $i) (br 2))))")).toEqual([
      0x02, 0x40, 0x03, 0x40, 0x02, 0x40, 0x0c, 0x02, 0x0c, 0x01, 0x0c, 0x00, 0x0c, 0x02, 0x0b, 0x0b, 0x0b,
    ]);
    // An if is a label too, and its condition lies outside it.
    expect(instrs("(block $b (if $i (br_if $b (i32.const 1) (i32.const 0)) (then (br $i) (br $b))))")).toEqual([
      0x02, 0x40, 0x41, 0x01, 0x41, 0x00, 0x0d, 0x00, 0x04, 0x40, 0x0c, 0x00, 0x0c, 0x01, 0x0b, 0x0b,
    ]);
    const m = run(`(module (func (export "f") (param i32) (result i32)
      (block $x (result i32)
        (i32.add
          (block $x (result i32)
            (drop (br_if $x (i32.const 1) (local.get 0)))
            (i32.const 2))
          (i32.const 10)))))`);
    expect(m.f(1)).toBe(11);
    expect(m.f(0)).toBe(12);
  });

  test("loops, flat and folded ifs with results, end labels", () => {
    const m = run(`(module
      (func $fact (export "fact") (param $n i64) (result i64)
        (if (result i64) (i64.le_s (local.get $n) (i64.const 1))
          (then (i64.const 1))
          (else (i64.mul (local.get $n) (call $fact (i64.sub (local.get $n) (i64.const 1)))))))
      (func (export "sum") (param $n i32) (result i32) (local $acc i32)
        loop $again
          local.get $acc local.get $n i32.add local.set $acc
          local.get $n i32.const 1 i32.sub local.tee $n
          br_if $again
        end $again
        local.get $acc)
      (func (export "sign") (param i32) (result i32)
        local.get 0 i32.const 0 i32.lt_s
        if $neg (result i32)
          i32.const -1
        else $neg
          local.get 0 i32.eqz
          if (result i32) i32.const 0 else i32.const 1 end
        end $neg)
      (func (export "halfIf") (param i32) (result i32) (local i32)
        (if (local.get 0) (then (local.set 1 (i32.const 7))))
        local.get 0 if i32.const 1 local.set 1 end
        local.get 1))`);
    expect(m.fact(20n)).toBe(2432902008176640000n);
    expect(m.sum(100)).toBe(5050);
    expect([-5, 0, 9].map((x) => m.sign(x))).toEqual([-1, 0, 1]);
    expect(m.halfIf(0)).toBe(0);
    expect(m.halfIf(3)).toBe(1);
  });

  test("return, br 0 from the body, select, drop, nop, unreachable, call by index", () => {
    const m = run(`(module
      (func $three (result i32) i32.const 3)
      (func (export "early") (param i32) (result i32)
        (if (local.get 0) (then (return (i32.const 1))))
        nop
        (br 0 (i32.const 2)))
      (func (export "pick") (param i32 i32 i32) (result i32)
        (select (local.get 0) (local.get 1) (local.get 2)))
      (func (export "calls") (result i32)
        (drop (call 0)) call $three call 0 i32.add)
      (func (export "trap") unreachable))`);
    expect(m.early(5)).toBe(1);
    expect(m.early(0)).toBe(2);
    expect(m.pick(10, 20, 1)).toBe(10);
    expect(m.pick(10, 20, 0)).toBe(20);
    expect(m.calls()).toBe(6);
    expect(() => m.trap()).toThrow(WebAssembly.RuntimeError);
  });
});

describe("module fields", () => {
  test("imported functions take the first indices and are called from wasm", () => {
    const logged: number[] = [];
    const m = run(
      `(module
        (import "env" "log" (func $log (param i32)))
        (import "env" "mix" (func $mix (param $a i32) (param i64) (result i64)))
        (func (export "go") (param i32) (result i64)
          (call $log (local.get 0))
          (call 0 (i32.const 7))
          (call $mix (local.get 0) (i64.const 0x1_0000_0000)))
        (export "log" (func $log)))`,
      { env: { log: (x: number) => logged.push(x), mix: (a: number, b: bigint) => BigInt(a) * 1000n + b } },
    );
    expect(m.go(4)).toBe(4000n + 0x100000000n);
    expect(logged).toEqual([4, 7]);
    m.log(9);
    expect(logged).toEqual([4, 7, 9]);
  });

  test("globals: mutable and immutable, i32 and i64, exported inline and by field", () => {
    const m = run(`(module
      (global $count (mut i32) (i32.const 0))
      (global $big (export "big") i64 (i64.const -5))
      (global $h (export "h") (export "h2") (mut i64) i64.const 0x7fffffffffffffff)
      (global i32 (i32.const 42))
      (export "count" (global $count))
      (export "answer" (global 3))
      (func (export "bump") (result i32)
        (global.set $count (i32.add (global.get $count) (i32.const 1)))
        (global.set $h (i64.add (global.get $big) (global.get $h)))
        global.get 0))`);
    expect(m.bump()).toBe(1);
    expect(m.bump()).toBe(2);
    expect(m.count.value).toBe(2);
    expect(m.big.value).toBe(-5n);
    expect(m.h.value).toBe(2n ** 63n - 11n);
    expect(m.h2).toBe(m.h);
    expect(m.answer.value).toBe(42);
  });

  test("function types are deduplicated; locals are grouped in runs of one type", () => {
    const bytes = assembleWat(`(module
      (import "e" "f" (func (param i32) (result i32)))
      (func (param $x i32) (result i32) (local i32 i32 i64) (local $y i32) (local) local.get $y)
      (func (param i32) (result i32) (local.get 0))
      (func))`);
    const types = sections(bytes).find((s) => s.id === 1)!.content;
    expect(Array.from(types)).toEqual([2, 0x60, 1, 0x7f, 1, 0x7f, 0x60, 0, 0]);
    expect(Array.from(sections(bytes).find((s) => s.id === 3)!.content)).toEqual([3, 0, 0, 1]);
    expect(bodies(bytes)[0]).toEqual([3, 2, 0x7f, 1, 0x7e, 1, 0x7f, 0x20, 4, 0x0b]);
    new WebAssembly.Module(bytes);
  });

  test("sections come in the binary format's order", () => {
    const bytes = assembleWat(`(module
      (data (i32.const 0) "x")
      (export "f" (func $f))
      (func $f)
      (global (mut i32) (i32.const 1))
      (memory 1))`.replace("(module", `(module (import "a" "b" (func))`));
    expect(sections(bytes).map((s) => s.id)).toEqual([1, 2, 3, 5, 6, 7, 12, 10, 11]);
    new WebAssembly.Module(bytes);
  });

  test("the folded, flat and mixed forms give identical bytes", () => {
    const fields = `(import "env" "log" (func $log (param i32))) (memory 1) (global $g (mut i32) (i32.const 0))`;
    const folded = `(module ${fields}
      (func $f (export "f") (param $p i32) (result i32) (local $i i32)
        (block $out
          (loop $top
            (br_if $out (i32.ge_u (local.get $i) (local.get $p)))
            (i32.store8 offset=16 (local.get $i) (i32.and (local.get $i) (i32.const 0xff)))
            (if (i32.rem_u (local.get $i) (i32.const 2))
              (then (call $log (local.get $i)))
              (else (global.set $g (i32.add (global.get $g) (i32.const 1)))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $top)))
        (block $b (block $a (br_table $a $b (local.get $p))))
        (memory.fill (i32.const 0) (i32.const 0) (i32.const 4))
        (select (global.get $g) (i32.const -1) (local.get $p))))`;
    const flat = `(module ${fields}
      (func $f (export "f") (param $p i32) (result i32) (local $i i32)
        block $out
          loop $top
            local.get $i local.get $p i32.ge_u br_if $out
            local.get $i local.get $i i32.const 0xff i32.and i32.store8 offset=16
            local.get $i i32.const 2 i32.rem_u
            if
              local.get $i call $log
            else
              global.get $g i32.const 1 i32.add global.set $g
            end
            local.get $i i32.const 1 i32.add local.set $i
            br $top
          end
        end
        block $b block $a local.get $p br_table $a $b end end
        i32.const 0 i32.const 0 i32.const 4 memory.fill
        global.get $g i32.const -1 local.get $p select))`;
    const mixed = `(module ${fields}
      (func $f (export "f") (param $p i32) (result i32) (local $i i32)
        (block $out
          loop $top
            (br_if $out (i32.ge_u (local.get $i) (local.get $p)))
            local.get $i (i32.and (local.get $i) (i32.const 0xff)) i32.store8 offset=16
            (i32.rem_u (local.get $i) (i32.const 2))
            if (call $log (local.get $i)) else (global.set $g (i32.add (global.get $g) (i32.const 1))) end
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            br $top
          end)
        (block $b block $a (br_table $a $b (local.get $p)) end)
        i32.const 0 (i32.const 0) (i32.const 4) memory.fill
        (select (global.get $g) (i32.const -1) (local.get $p))))`;
    const bytes = assembleWat(folded);
    expect(Buffer.from(assembleWat(flat)).toString("hex")).toBe(Buffer.from(bytes).toString("hex"));
    expect(Buffer.from(assembleWat(mixed)).toString("hex")).toBe(Buffer.from(bytes).toString("hex"));
    const logged: number[] = [];
    const m = run(folded, { env: { log: (x: number) => logged.push(x) } });
    expect(m.f(5)).toBe(3);
    expect(logged).toEqual([1, 3]);
  });

  test("comments: line comments and nested block comments", () => {
    const m = run(`;; leading comment
      (module (; a (; nested ;) block
      comment ;) (func (export "f") (result i32) ;; trailing ) ( "
        i32.const 1 (; inline ;) i32.const 2 i32.add)) ;; after`);
    expect(m.f()).toBe(3);
  });
});

describe("errors name the line and the token", () => {
  const inFunc = (body: string, header = "", fields = "") => `(module ${fields}\n(func ${header}\n${body}))`;

  test("unknown instructions and names", () => {
    expectError(inFunc("i32.const 1\ni32.ad"), 4, "i32.ad", "unknown instruction");
    expectError(inFunc("(i32.foo (i32.const 1))"), 3, "i32.foo", "unknown instruction");
    expectError(inFunc("local.get $nope", "(param $x i32)"), 3, "$nope", "unknown local");
    expectError(inFunc("local.get 1", "(param $x i32)"), 3, "1", "out of range");
    expectError(inFunc("call $nope"), 3, "$nope", "unknown func");
    expectError(inFunc("call 3"), 3, "3", "out of range");
    expectError(inFunc("global.get $g"), 3, "$g", "unknown global");
    expectError(inFunc("(block $a (br $b))"), 3, "$b", "unknown label");
    expectError(inFunc("(block (br 2))"), 3, "2", "out of range");
    expectError(`(module\n(export "x" (func $missing)))`, 2, "$missing", "unknown func");
    expectError(`(module (memory $m 1)\n(export "x" (memory $n)))`, 2, "$n", "unknown memory");
    expectError(`(module (memory 1)\n(export "x" (memory 1)))`, 2, "1", "out of range");
    expectError(`(module\n(export "x" (table 0)))`, 2, "table", "unsupported export kind");
  });

  test("wrong or missing immediates", () => {
    expectError(inFunc("local.get"), 3, "local.get", "missing immediate");
    expectError(inFunc("block br end"), 3, "br", "missing immediate");
    expectError(inFunc("br_table"), 3, "br_table", "default label");
    expectError(inFunc("i32.const 0\ni32.load align=3", "", "(memory 1)"), 4, "align=3", "power of two");
    expectError(inFunc("i32.const 0\ni32.load align=8", "", "(memory 1)"), 4, "align=8", "natural");
    expectError(inFunc("i32.const 0\ni32.load align=4 offset=4", "", "(memory 1)"), 4, "offset=4", "offset= before align=");
    expectError(inFunc("i32.const 0\ni32.load offset=0x100000000", "", "(memory 1)"), 4, "offset=0x100000000", "out of range");
    expectError(inFunc("i32.const 0\ni32.load offset=-1", "", "(memory 1)"), 4, "offset=-1");
    expectError(inFunc("(i32.add local.get 0 local.get 0)", "(param i32)"), 3, "local.get", "operands must be parenthesised");
    expectError(inFunc('"str"'), 3, '"str"', "unexpected string");
    expectError(inFunc("i32.const 0\ni32.load"), 4, "i32.load", "needs a memory");
  });

  test("structure: blocks, ends, results", () => {
    expectError(inFunc("nop\nend"), 4, "end", "without an open flat block");
    expectError(inFunc("block\nnop"), 3, "block", "missing 'end'");
    expectError(inFunc("block\nelse end"), 4, "else", "'else' outside a flat if");
    expectError(inFunc("block $a\nend $b"), 4, "$b", "does not match");
    expectError(inFunc("(if (i32.const 1)\n(else))"), 4, "(else", "before (then");
    expectError(inFunc("(if (i32.const 1))"), 3, "(if", "without (then");
    expectError(inFunc("(block (result i32 i64))"), 3, "(result");
    expectError(inFunc("(block (param i32))"), 3, "(param", "not supported");
    expectError(inFunc("nop", "(result i32)\n(result i64)"), 3, "(result", "at most one result");
    expectError(inFunc("nop", "(result i32)\n(param i32)"), 3, "(param", "after (result");
    expectError(inFunc("nop", "(param $x i32 i32)"), 2, "(param", "exactly one type");
    expectError(inFunc("nop", "(param $x i32) (local $x i32)"), 2, "$x", "duplicate local name");
    expectError(inFunc("nop", "(param f64)"), 2, "f64", "not supported");
    expectError(inFunc("nop", "(type 0)"), 2, "(type", "not supported");
  });

  test("module fields", () => {
    expectError(`(module\n(table 1 funcref))`, 2, "(table", "unsupported module field");
    expectError(`(module\n(func $f)\n(func $f))`, 3, "$f", "duplicate func name");
    expectError(`(module\n(func)\n(import "a" "b" (func)))`, 3, "(import", "import after");
    expectError(`(module\n(import "a" "b" (global i32)))`, 2, "(global", "unsupported import kind");
    expectError(`(module (memory 1)\n(memory 1))`, 2, "(memory", "only one memory");
    expectError(`(module\n(memory 2 1))`, 2, "1", "below its minimum");
    expectError(`(module\n(memory 65537))`, 2, "65537", "above 65536");
    expectError(`(module\n(data (i32.const 0) "x"))`, 2, "(data", "without a memory");
    expectError(`(module (memory 1)\n(data (i64.const 0) "x"))`, 2, "i64.const", "expected a i32 constant");
    expectError(`(module (memory 1)\n(data (i32.const 0) 5))`, 2, "5", "expected a data string");
    expectError(`(module (global $g i32 (i32.const 0))\n(func (global.set $g\n(i32.const 1))))`, 2, "global.set", "immutable");
    expectError(`(module\n(global (mut i32) (i64.const 0)))`, 2, "i64.const", "expected a i32 constant");
    expectError(`(module\n(global i32 (global.get 0)))`, 2, "global.get", "only i32.const and i64.const");
    expectError(`(module (func (export "a"))\n(func (export "a")))`, 2, '"a"', "duplicate export name");
    expectError(`(module\n(func (export "\\ff")))`, 2, '"\\ff"', "not valid UTF-8");
    expectError(`\n(func)`, 2, "(func", "expected (module");
    expectError(`(module)\n(module)`, 2, "(module", "after (module");
    expectError(``, 1, "", "expected (module");
  });

  test("lexing: parentheses, strings, comments, stray characters", () => {
    expectError(`(module\n(func))\n)`, 3, ")", "nothing to close");
    expectError(`(module\n  (func\n    nop)`, 1, "(module", "never closed");
    expectError(`(module\n  (func\n    (block nop)\n`, 2, "(func", "never closed");
    expectError(`(module\n(export "abc\n))`, 2, '"abc', "control character");
    expectError(`(module\n(export "abc`, 2, '"abc', "unterminated string");
    expectError(`(module\n(export "a\\qb" (func 0)))`, 2, "\\q", "unknown escape");
    expectError(`(module\n(export "a\\u{d800}" (func 0)))`, 2, "\\u{d800}", "bad \\u{...} escape");
    expectError(`(module\n(; open (; nested ;)\n`, 2, "(;", "unterminated block comment");
    expectError(`(module\n(func nop ; x))`, 2, ";", "unexpected character");
    expectError(`(module\n(func nop [x]))`, 2, "[", "unexpected character");
    expectError(`(module\n(export "a"x (func 0)))`, 2, '"a"x', "not followed by a space");
    // Lines inside block comments count.
    expectError(`(module (;\n\n;) (func\nbogus))`, 4, "bogus", "unknown instruction");
  });
});

describe("scripts/build-wasm.ts", () => {
  const SCRIPT = join(import.meta.dir, "..", "..", "scripts", "build-wasm.ts");
  const runScript = (...args: string[]) => {
    const r = Bun.spawnSync([process.execPath, SCRIPT, ...args], { stdout: "pipe", stderr: "pipe" });
    return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
  };

  test("writes the base64 module, and --check detects missing and stale output", () => {
    const dir = mkdtempSync(join(tmpdir(), "wat-test-"));
    try {
      const wat = join(dir, "k.wat");
      const out = join(dir, "k-wasm.ts");
      writeFileSync(wat, `(module (func (export "seven") (result i32) i32.const 7))`);
      expect(runScript("--check", wat, out).code).toBe(1); // missing
      expect(runScript(wat, out).code).toBe(0);
      const text = readFileSync(out, "utf8");
      expect(text).toBe(kernelModuleSource(readWat(wat)));
      const lines = text.split("\n");
      expect(lines[0]).toBe("// Generated by scripts/build-wasm.ts from kernel.wat; do not edit. A test checks it is current.");
      const b64 = /^export const KERNEL_WASM_BASE64 = "([A-Za-z0-9+/=]+)";$/.exec(lines[1]!)![1]!;
      expect(lines.slice(2)).toEqual([""]);
      const m = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(b64, "base64")), {}).exports as Exports;
      expect(m.seven()).toBe(7);
      expect(runScript("--check", wat, out).code).toBe(0);

      writeFileSync(wat, `(module (func (export "seven") (result i32) i32.const 8))`);
      const stale = runScript("--check", wat, out);
      expect(stale.code).toBe(1);
      expect(stale.err).toContain("stale");
      expect(readFileSync(out, "utf8")).toBe(text); // --check writes nothing

      writeFileSync(wat, `(module\n(func i32.nope))`);
      const bad = runScript(wat, out);
      expect(bad.code).toBe(1);
      expect(bad.err).toContain('line 2: unknown instruction: "i32.nope"');
      expect(runScript("--bogus").code).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("readWat splices (@include) files in, relative to the including file, one level deep", () => {
    const dir = mkdtempSync(join(tmpdir(), "wat-include-"));
    try {
      mkdirSync(join(dir, "lib"));
      writeFileSync(join(dir, "lib", "seven.wat"), `(func $seven (result i32) i32.const 7)`);
      writeFileSync(join(dir, "k.wat"), `(module\n  (func (export "f") (result i32) (call $seven))\n  (@include "lib/seven.wat")\n)`);
      const m = new WebAssembly.Instance(new WebAssembly.Module(assembleWat(readWat(join(dir, "k.wat")))), {}).exports as Exports;
      expect(m.f()).toBe(7);
      writeFileSync(join(dir, "lib", "seven.wat"), `(@include "eight.wat")`);
      expect(() => readWat(join(dir, "k.wat"))).toThrow("may not include others");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const SRC = join(import.meta.dir, "..", "..", "src");
  for (const dir of [join(SRC, "journal", "fast"), join(SRC, "steps")]) {
    const KERNEL_WAT = join(dir, "kernel.wat");
    const KERNEL_TS = join(dir, "kernel-wasm.ts");
    test.skipIf(!existsSync(KERNEL_TS))(`${KERNEL_TS.slice(SRC.length + 1)} is current with kernel.wat`, () => {
      expect(readFileSync(KERNEL_TS, "utf8")).toBe(kernelModuleSource(readWat(KERNEL_WAT)));
    });
  }

  test("without paths it checks every kernel, and its list is the one the freshness tests check", async () => {
    const { KERNELS } = await import("../../scripts/build-wasm.ts");
    expect(KERNELS.map(([wat, ts]) => [wat.slice(SRC.length + 1), ts.slice(SRC.length + 1)])).toEqual([
      ["journal/fast/kernel.wat", "journal/fast/kernel-wasm.ts"],
      ["steps/kernel.wat", "steps/kernel-wasm.ts"],
    ]);
    const r = runScript("--check");
    expect(r.code).toBe(0);
    expect(r.out).toContain("journal/fast/kernel-wasm.ts is current");
    expect(r.out).toContain("steps/kernel-wasm.ts is current");
    expect(runScript("only-one.wat").code).toBe(2);
  });
});
