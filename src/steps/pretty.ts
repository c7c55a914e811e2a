/**
 * Canonical JSON (compact, sorted keys, ASCII with Python's escapes: what
 * the step kernel proves a row is) re-indented byte by byte the way the
 * display renders a parsed value (`renderJson`: indent 2, `", "`-free
 * separators `","` and `": "`, raw UTF-8): `{}`/`[]` stay empty, every
 * other container opens a line per item, `\uXXXX` escapes of printable
 * characters become their UTF-8 bytes and control escapes stay. Source and
 * destination are one buffer (the kernel's memory), so nothing is
 * allocated per row.
 */

const SPACES = 0x20;

/** Hex digit value of a lowercase canonical escape digit, -1 otherwise. */
function hexv(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

function hex4(b: Uint8Array, i: number): number {
  const a = hexv(b[i]!);
  const c = hexv(b[i + 1]!);
  const d = hexv(b[i + 2]!);
  const e = hexv(b[i + 3]!);
  return a < 0 || c < 0 || d < 0 || e < 0 ? -1 : (a << 12) | (c << 8) | (d << 4) | e;
}

export class PrettyWriter {
  /** Where the next byte goes; -1 after a value did not fit (or needs the exact path). */
  o = 0;
  constructor(
    private readonly b: Uint8Array,
    private limit: number,
  ) {}

  reset(at: number, limit: number): void {
    this.o = at;
    this.limit = limit;
  }

  /** Bytes `src` (constant key names and punctuation) at the cursor. */
  put(src: Uint8Array): boolean {
    if (this.o < 0 || this.o + src.length > this.limit) return this.fail();
    this.b.set(src, this.o);
    this.o += src.length;
    return true;
  }

  /** A value `b[s, e)` whose bytes are already its rendering (a string without escapes), copied at once. */
  copy(s: number, e: number): boolean {
    if (this.o < 0 || this.o + e - s > this.limit) return this.fail();
    this.b.copyWithin(this.o, s, e);
    this.o += e - s;
    return true;
  }

  private fail(): false {
    this.o = -1;
    return false;
  }

  private bad(): number {
    this.o = -1;
    return -1;
  }

  private newline(indent: number): boolean {
    if (this.o + indent + 1 > this.limit) return this.fail();
    const b = this.b;
    b[this.o++] = 0x0a;
    b.fill(SPACES, this.o, this.o + indent);
    this.o += indent;
    return true;
  }

  /** The string whose opening quote is at `i`: rendered; the index past its closing quote, or -1. */
  private string(i: number): number {
    const b = this.b;
    let o = this.o;
    b[o++] = 0x22;
    i++;
    for (;;) {
      if (o + 8 > this.limit) return this.bad();
      const c = b[i]!;
      if (c === 0x22) break;
      if (c !== 0x5c) {
        b[o++] = c;
        i++;
        continue;
      }
      if (b[i + 1] !== 0x75) {
        b[o++] = 0x5c;
        b[o++] = b[i + 1]!;
        i += 2;
        continue;
      }
      let cp = hex4(b, i + 2);
      if (cp < 0) return this.bad();
      if (cp < 0x20) {
        // a control character keeps its escape
        for (let k = 0; k < 6; k++) b[o++] = b[i + k]!;
        i += 6;
        continue;
      }
      i += 6;
      if (cp >= 0xd800 && cp <= 0xdfff) {
        // a pair becomes one character; a lone surrogate is the exact path's to render
        const lo = cp < 0xdc00 && b[i] === 0x5c && b[i + 1] === 0x75 ? hex4(b, i + 2) : -1;
        if (lo < 0xdc00 || lo > 0xdfff) return this.bad();
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        i += 6;
      }
      if (cp < 0x80) b[o++] = cp;
      else if (cp < 0x800) {
        b[o++] = 0xc0 | (cp >> 6);
        b[o++] = 0x80 | (cp & 63);
      } else if (cp < 0x10000) {
        b[o++] = 0xe0 | (cp >> 12);
        b[o++] = 0x80 | ((cp >> 6) & 63);
        b[o++] = 0x80 | (cp & 63);
      } else {
        b[o++] = 0xf0 | (cp >> 18);
        b[o++] = 0x80 | ((cp >> 12) & 63);
        b[o++] = 0x80 | ((cp >> 6) & 63);
        b[o++] = 0x80 | (cp & 63);
      }
    }
    b[o++] = 0x22;
    this.o = o;
    return i + 1;
  }

  /**
   * The canonical value `b[s, e)` at the cursor, its line indented by
   * `indent` spaces (items go 2 deeper). False when it did not fit or holds
   * a lone surrogate (the cursor is then -1).
   */
  value(s: number, e: number, indent: number): boolean {
    if (this.o < 0) return false;
    const b = this.b;
    let depth = indent;
    let i = s;
    while (i < e) {
      const c = b[i]!;
      if (c === 0x22) {
        i = this.string(i);
        if (i < 0 || this.o < 0) return false;
        continue;
      }
      if (this.o + 2 > this.limit) return this.fail();
      if (c === 0x7b || c === 0x5b) {
        b[this.o++] = c;
        const close = c + 2;
        if (b[i + 1] === close) {
          b[this.o++] = close;
          i += 2;
          continue;
        }
        depth += 2;
        if (!this.newline(depth)) return false;
      } else if (c === 0x7d || c === 0x5d) {
        depth -= 2;
        if (!this.newline(depth)) return false;
        b[this.o++] = c;
      } else if (c === 0x2c) {
        b[this.o++] = c;
        if (!this.newline(depth)) return false;
      } else if (c === 0x3a) {
        b[this.o++] = c;
        b[this.o++] = SPACES;
      } else {
        b[this.o++] = c;
      }
      i++;
    }
    return true;
  }
}
