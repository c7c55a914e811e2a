import { floatRepr } from "./float.ts";

/**
 * Values of the py-json-v1 data model: what Python's `json.loads` produces,
 * with the distinctions `JSON.parse` loses kept intact.
 *
 * - objects are `Map`s (insertion order; a duplicate key keeps its first
 *   position and takes the last value, like a Python dict);
 * - numbers are `PyNum`, which keeps the source lexeme and whether Python
 *   would read it as an `int` (no fraction, no exponent) or a `float`;
 * - strings are JS strings (UTF-16; lone surrogates from `\udXXX` escapes are
 *   representable and kept).
 */
export class PyNum {
  /** The lexeme as it appeared in the source (or as produced by a writer). */
  readonly raw: string;
  /** True when Python reads it as float (has `.`/exponent, or NaN/Infinity). */
  readonly isFloat: boolean;
  constructor(raw: string, isFloat: boolean) {
    this.raw = raw;
    this.isFloat = isFloat;
  }
  /** The JS number closest to the value (ints beyond 2^53 lose precision). */
  toNumber(): number {
    return Number(this.raw);
  }
}

/**
 * A large array or object member of a huge row, kept as its (validated)
 * JSON bytes instead of a tree (src/pyjson/row.ts): the encoders hash and
 * print it from the bytes (encode-bytes.ts), so a dense row costs a small
 * multiple of its size, not the tree's dozens of times. Only `parseRowBytes` makes them,
 * only as top-level member values of a row.
 */
export class PyRaw {
  constructor(
    /** Exactly the value's JSON text (UTF-8), validated with json.loads semantics. */
    readonly bytes: Uint8Array,
    /** "string" only where a reader asked for long strings as bytes (`journal record`: src/pyjson/row.ts parseRowBytes). */
    readonly kind: "array" | "object" | "string",
  ) {}
}

export type PyObject = Map<string, PyValue>;
export type PyValue = null | boolean | string | PyNum | PyRaw | PyValue[] | PyObject;

/**
 * What the encoder accepts: py-json values and plain JS values. A JS number
 * that is an integer encodes as a Python int, any other as a float; use
 * `pyFloat()` to force float spelling (`1.0`). `bigint` encodes as an int.
 * Plain objects keep their property order. `undefined` object members are
 * skipped (like absent keys).
 */
export type PyLike =
  | PyValue
  | number
  | bigint
  | undefined
  | readonly PyLike[]
  | { readonly [key: string]: PyLike };

/** A float, spelled the way Python's `repr(float)` would. */
export function pyFloat(n: number): PyNum {
  return new PyNum(floatRepr(n), true);
}

/** An int (arbitrary precision). */
export function pyInt(n: number | bigint): PyNum {
  if (typeof n === "number" && !Number.isInteger(n)) throw new TypeError(`not an integer: ${n}`);
  return new PyNum(typeof n === "bigint" ? n.toString() : BigInt(n).toString(), false);
}

export class PyJsonError extends Error {
  /** 0-based character offset into the parsed text. */
  readonly pos: number;
  constructor(message: string, pos: number) {
    super(message);
    this.name = "PyJsonError";
    this.pos = pos;
  }
}
