import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Rows as bytes for the codec's scanner tests: files of rows, their lines, and one-byte mutations of a row. */

/** Every file below `dir` whose name ends with `ext`, in name order. */
export function* filesUnder(dir: string, ext: string): Generator<string> {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* filesUnder(p, ext);
    else if (name.endsWith(ext)) yield p;
  }
}

/** The lines of `bytes` (split at `\n`; a last line without one included). */
export function linesOf(bytes: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let s = 0;
  for (let i = bytes.indexOf(0x0a); i >= 0; s = i + 1, i = bytes.indexOf(0x0a, s)) out.push(bytes.subarray(s, i));
  if (s < bytes.length) out.push(bytes.subarray(s));
  return out;
}

/** Bytes that mean something to a JSON scanner, or break UTF-8, inserted by oneByteMutations. */
const JUNK = [0x00, 0x09, 0x20, 0x22, 0x2c, 0x2d, 0x2e, 0x30, 0x3a, 0x45, 0x5b, 0x5c, 0x5d, 0x65, 0x75, 0x7b, 0x7d, 0x7f, 0x80, 0xc3, 0xe4, 0xed, 0xf0, 0xff];

/** Every byte of `row` flipped (three ways), deleted, and with each junk byte inserted before it; every truncation. */
export function* oneByteMutations(row: Uint8Array): Generator<Uint8Array> {
  for (let i = 0; i <= row.length; i++) {
    if (i < row.length) {
      for (const bit of [0x01, 0x20, 0x80]) {
        const m = row.slice();
        m[i]! ^= bit;
        yield m;
      }
      const d = new Uint8Array(row.length - 1);
      d.set(row.subarray(0, i));
      d.set(row.subarray(i + 1), i);
      yield d;
    }
    for (const j of JUNK) {
      const m = new Uint8Array(row.length + 1);
      m.set(row.subarray(0, i));
      m[i] = j;
      m.set(row.subarray(i), i + 1);
      yield m;
    }
    yield row.subarray(0, i);
  }
}

/** oneByteMutations of every seed, in one list. */
export function mutationsOf(seeds: readonly Uint8Array[]): Uint8Array[] {
  return seeds.flatMap((seed) => [...oneByteMutations(seed)]);
}
