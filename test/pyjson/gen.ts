/**
 * Seeded generators of hostile JSON *text* (not values): every spelling a
 * foreign writer may use — raw UTF-8 or escapes in either hex case, `\/`,
 * lone surrogates, control characters, U+2028, DEL, numbers like `1E-5`,
 * `1.50`, `-0`, big ints, floats across the whole exponent range including
 * subnormals, NaN/Infinity, duplicate keys, random whitespace, nesting.
 */
import { mulberry32 } from "../../tools/fuzz/rng.ts";

/** The seeded float generator shared with the fuzzers (mulberry32). */
export const prng = mulberry32;

export interface GenOptions {
  /**
   * Draw astral characters only from blocks assigned long ago. Python's
   * `str()`/`repr()` escape characters its own Unicode database does not
   * know (CPython 3.11 ships Unicode 14); Bun's is newer.
   */
  stableUnicode?: boolean;
}

/** Astral ranges assigned by Unicode 6.0 (stable across Python versions). */
const STABLE_ASTRAL: readonly [number, number][] = [
  [0x10000, 0x1000b], [0x1d400, 0x1d454], [0x1f600, 0x1f64f], [0x1f680, 0x1f6c5], [0x20000, 0x2a6d6],
];

export class Gen {
  readonly r: () => number;
  private readonly stable: boolean;
  constructor(seed: number, options: GenOptions = {}) {
    this.r = prng(seed);
    this.stable = options.stableUnicode ?? false;
  }
  int(n: number): number {
    return Math.floor(this.r() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  chance(p: number): boolean {
    return this.r() < p;
  }

  /** A random double from random bits: every exponent, subnormals, -0, NaN, infinities. */
  double(): number {
    const dv = new DataView(new ArrayBuffer(8));
    dv.setUint32(0, (this.r() * 2 ** 32) >>> 0);
    dv.setUint32(4, (this.r() * 2 ** 32) >>> 0);
    const kind = this.int(10);
    if (kind === 0) dv.setUint16(0, dv.getUint16(0) & 0x800f); // subnormal
    if (kind === 1) return this.pick([0, -0, 5e-324, -5e-324, 1.7976931348623157e308, 2.2250738585072014e-308, 1e16, 1e-5, 0.0001, 1e15, 123456789.125, 0.1, 1e21, 1e22]);
    if (kind === 2) return Math.round(this.r() * 1e6) / this.pick([1, 10, 100, 8, 1024]);
    return dv.getFloat64(0);
  }

  /** A code point as one of its legal JSON spellings. */
  private charText(cp: number, inKey: boolean): string {
    const hex = (u: number): string => {
      const h = u.toString(16).padStart(4, "0");
      return "\\u" + (this.chance(0.5) ? h : h.toUpperCase());
    };
    const isSurrogate = cp >= 0xd800 && cp <= 0xdfff;
    if (cp === 0x22) return '\\"';
    if (cp === 0x5c) return "\\\\";
    if (cp < 0x20) {
      const short: Record<number, string> = { 8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r" };
      return short[cp] && this.chance(0.5) ? short[cp]! : hex(cp);
    }
    if (cp === 0x2f && this.chance(0.5)) return "\\/";
    if (isSurrogate) return hex(cp); // only expressible as an escape
    if (cp > 0xffff) {
      if (this.chance(0.5)) return String.fromCodePoint(cp);
      const s = String.fromCodePoint(cp);
      return hex(s.charCodeAt(0)) + hex(s.charCodeAt(1));
    }
    void inKey;
    return this.chance(0.6) ? String.fromCodePoint(cp) : hex(cp);
  }

  codePoint(): number {
    switch (this.int(12)) {
      case 0:
        return this.int(0x20); // controls
      case 1:
        return this.pick([0x7f, 0x80, 0x85, 0xa0, 0xad, 0x2028, 0x2029, 0xfeff, 0xfffd, 0xffff, 0x2f, 0x22, 0x5c]);
      case 2:
        return 0xd800 + this.int(0x800); // lone surrogate (escape)
      case 3: {
        if (!this.stable) return 0x10000 + this.int(0x100000); // astral, all planes
        const [lo, hi] = this.pick(STABLE_ASTRAL);
        return lo + this.int(hi - lo + 1);
      }
      case 4:
        return this.pick([0x1f680, 0x1f600, 0x10000, this.stable ? 0x1f601 : 0x10ffff, 0xe000, 0xf8ff]);
      case 5:
        return 0x400 + this.int(0x100); // Cyrillic
      case 6:
        return 0x4e00 + this.int(0x5000); // CJK
      case 7:
        return 0x80 + this.int(0x780);
      default:
        return 0x20 + this.int(0x5f); // printable ASCII
    }
  }

  stringText(maxLen = 12, inKey = false): string {
    const n = this.int(maxLen + 1);
    let out = '"';
    for (let i = 0; i < n; i++) {
      const cp = this.codePoint();
      // A high surrogate escape followed by a low one forms a pair (Python
      // joins them too); keep that possibility, it is a real spelling.
      out += this.charText(cp, inKey);
    }
    return out + '"';
  }

  /** Digits with no leading zero. */
  private digits(n: number): string {
    let s = String(1 + this.int(9));
    for (let i = 1; i < n; i++) s += String(this.int(10));
    return s;
  }

  numberText(): string {
    switch (this.int(14)) {
      case 0:
        return String(this.int(1000) - 500);
      case 1:
        return (this.chance(0.5) ? "-" : "") + this.digits(17 + this.int(60)); // beyond 2^53
      case 2:
        return this.pick(["0", "-0", "1", "-1", "9007199254740993", "-9223372036854775809", "18446744073709551616"]);
      case 3:
        return this.pick(["NaN", "Infinity", "-Infinity"]);
      case 4:
        return this.pick(["1E-5", "1e-5", "1.50", "1.0", "-0.0", "0.0", "1E+16", "1e16", "1E400", "-1e400", "1e-400", "4.9e-324", "2.4703282292062327e-324", "2.2250738585072011e-308", "0.1e1", "10.0e-1", "100E-002", "5e-324", "1.7976931348623157e308", "1.7976931348623159e308", "123456789.125000", "0.000100", "1e15", "1e+15"]);
      case 5: {
        const d = this.double();
        if (!Number.isFinite(d)) return this.pick(["NaN", "Infinity", "-Infinity"]);
        const sp = this.int(4);
        let s: string;
        if (sp === 0) s = d.toExponential();
        else if (sp === 1) s = d.toExponential(this.int(20));
        else s = d.toExponential().replace("e", "E");
        if (Object.is(d, -0)) s = "-0.0";
        return s;
      }
      case 6: {
        // fixed notation with trailing zeros
        const ip = this.chance(0.3) ? "0" : this.digits(1 + this.int(18));
        let fp = "";
        for (let i = 0, n = 1 + this.int(20); i < n; i++) fp += String(this.int(10));
        return (this.chance(0.3) ? "-" : "") + ip + "." + fp + (this.chance(0.3) ? "0000" : "");
      }
      case 7: {
        const exp = this.int(700) - 350;
        const e = this.pick(["e", "E"]) + (exp < 0 ? "-" : this.pick(["", "+"])) + String(Math.abs(exp)).padStart(this.int(4), "0");
        return (this.chance(0.5) ? "-" : "") + this.digits(1 + this.int(20)) + (this.chance(0.5) ? "." + this.digits(1 + this.int(10)) : "") + e;
      }
      default: {
        const d = this.double();
        return Number.isFinite(d) ? String(d) : "0.5";
      }
    }
  }

  ws(): string {
    if (this.chance(0.7)) return "";
    let s = "";
    for (let i = 0, n = 1 + this.int(3); i < n; i++) s += this.pick([" ", "\t", "\n", "\r"]);
    return s;
  }

  valueText(depth: number): string {
    const k = this.int(depth >= 4 ? 6 : 9);
    switch (k) {
      case 0:
        return this.pick(["null", "true", "false"]);
      case 1:
      case 2:
        return this.numberText();
      case 3:
      case 4:
      case 5:
        return this.stringText();
      case 6:
      case 7:
        return this.objectText(depth + 1);
      default: {
        const n = this.int(5);
        const items: string[] = [];
        for (let i = 0; i < n; i++) items.push(this.ws() + this.valueText(depth + 1) + this.ws());
        return "[" + items.join(",") + "]";
      }
    }
  }

  keyText(): string {
    // Keys that sort differently by UTF-16 unit vs code point, and duplicates.
    if (this.chance(0.25)) return this.pick(['"a"', '"b"', '"event"', '"\\uffff"', '"\\ud83d\\ude80"', '"\\ue000"', '"\\ud800"', '"\\udc00"', '"ts"', '"index"', '"A"', '""']);
    return this.stringText(6, true);
  }

  objectText(depth: number, minKeys = 0): string {
    const n = minKeys + this.int(6);
    const members: string[] = [];
    for (let i = 0; i < n; i++) {
      members.push(this.ws() + this.keyText() + this.ws() + ":" + this.ws() + this.valueText(depth) + this.ws());
    }
    return "{" + members.join(",") + "}";
  }
}
