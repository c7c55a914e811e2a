import { jsonStringEnd, scannedString } from "../codec/row-index.ts";
import type { OpenInput } from "../fsutil/input.ts";

/**
 * A forward byte cursor over a regular file, read in chunks into one window
 * that keeps only the bytes of the value being scanned. It knows JSON's
 * lexical shape (whitespace, strings, brackets) but not its grammar: it cuts
 * a document into values whose text the py-json parser then checks exactly.
 * Anything the cursor cannot cut is `ScanTrouble`; the caller then parses the
 * whole text to name the error the way Python does.
 */
export class ScanTrouble extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ScanTrouble";
  }
}

const CHUNK = 1 << 16;
/** Growing the window to this size or more is followed by a full collection. */
const COLLECT_AFTER_GROWING = 32 << 20;
/** The most bytes the codec's string reader looks at past where it refuses a string (`\uXXXX` and a closing quote). */
const LONGEST_ESCAPE = 7;

export class ByteCursor {
  private buf = new Uint8Array(CHUNK * 4);
  /** A word view of buf, for the codec's string reader. */
  private dv = new DataView(this.buf.buffer);
  /** Absolute file offset of buf[0]. */
  private base = 0;
  /** Valid bytes in buf. */
  private len = 0;
  /** Index into buf of the next byte. */
  private i = 0;
  /** Index into buf from which bytes must be kept (the start of the value being cut), or -1. */
  private keep = -1;
  private done = false;

  constructor(
    private readonly input: OpenInput,
    /** Absolute offset where reading starts. */
    start = 0,
    /** The longest single value accepted (a longer one is refused, not buffered); the caller may raise it for a value it reads so. */
    public limit = 16 * 1024 * 1024,
  ) {
    this.base = start;
  }

  /** Absolute offset of the next byte. */
  get offset(): number {
    return this.base + this.i;
  }

  /** Move to an absolute offset (drops the window). */
  seek(abs: number): void {
    this.base = abs;
    this.len = 0;
    this.i = 0;
    this.keep = -1;
    this.done = false;
  }

  private fill(): boolean {
    if (this.done) return false;
    const from = this.keep >= 0 ? this.keep : this.i;
    if (from > 0) {
      this.buf.copyWithin(0, from, this.len);
      this.len -= from;
      this.i -= from;
      if (this.keep >= 0) this.keep -= from;
      this.base += from;
    }
    if (this.len + CHUNK > this.buf.length) {
      if (this.buf.length > this.limit + CHUNK) throw new ValueTooLarge(this.limit);
      const grown = new Uint8Array(this.buf.length * 2);
      grown.set(this.buf.subarray(0, this.len));
      this.buf = grown;
      this.dv = new DataView(grown.buffer);
      // the window a huge value outgrew is garbage the engine would free late, beside its successor
      if (grown.length >= COLLECT_AFTER_GROWING) Bun.gc(true);
    }
    const n = this.input.read(this.buf, this.len, this.buf.length - this.len, this.base + this.len);
    if (n === 0) {
      this.done = true;
      return false;
    }
    this.len += n;
    return true;
  }

  /** The next byte without consuming it, or -1 at the end of the file. */
  peek(): number {
    if (this.i >= this.len && !this.fill()) return -1;
    return this.buf[this.i]!;
  }

  /**
   * The unread bytes in the window, at least `min` of them unless the file
   * ends first (a view, valid until the cursor moves).
   */
  window(min: number): Uint8Array {
    while (this.len - this.i < min && this.fill()) {}
    return this.buf.subarray(this.i, this.len);
  }

  /**
   * window() without a view: at least `min` unread bytes are in `buffer`
   * from `position` to `filled` unless the file ends first (valid until the
   * cursor moves). A reader that takes a value in place reads them there.
   */
  fillWindow(min: number): void {
    while (this.len - this.i < min && this.fill()) {}
  }
  get buffer(): Uint8Array {
    return this.buf;
  }
  get position(): number {
    return this.i;
  }
  get filled(): number {
    return this.len;
  }

  /** Consume `n` bytes of the window. */
  advance(n: number): void {
    this.i += n;
  }

  /** Consume one byte that must be `c`. */
  expect(c: number): void {
    if (this.peek() !== c) throw new ScanTrouble(`expected '${String.fromCharCode(c)}' at ${this.offset}`);
    this.i++;
  }

  skipWs(): void {
    for (;;) {
      const c = this.peek();
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return;
      this.i++;
    }
  }

  /**
   * Cut the next value (string, container or scalar) and return its bytes
   * (a view valid until the cursor moves again) and absolute start offset.
   */
  cutValue(): { bytes: Uint8Array; start: number } {
    this.keep = this.i;
    const start = this.offset;
    const c = this.peek();
    if (c === -1) throw new ScanTrouble("unexpected end of input");
    if (c === 0x22) this.skipString();
    else if (c === 0x7b || c === 0x5b) this.skipContainer();
    else this.skipScalar();
    const bytes = this.buf.subarray(this.keep, this.i);
    this.keep = -1;
    return { bytes, start };
  }

  /**
   * Past the string token at the cursor (its opening quote), by the codec's
   * string reader. A token that runs past the window is read on from where
   * the reader stopped (a byte that starts a character or an escape) once
   * more is read: the window keeps it, as it keeps the whole value.
   */
  private skipString(): void {
    // the reader takes b[from] as the quote and reads on from the byte after it
    let from = this.i;
    for (;;) {
      const end = jsonStringEnd(this.buf, this.dv, from, this.len);
      if (end >= 0) {
        this.i = end;
        return;
      }
      const stop = scannedString.stop;
      // refused with the longest escape and its closing quote in the window: final
      if (stop + LONGEST_ESCAPE < this.len) throw this.refusedString(stop);
      // fill moves the window: the stop is kept as a distance from the quote
      const ahead = stop - this.i;
      const more = this.fill();
      const at = this.i + ahead;
      if (!more) throw at < this.len ? this.refusedString(at) : new ScanTrouble("unterminated string");
      from = at - 1;
    }
  }

  /** A string json.loads refuses, named as parsing the value it is in would name it. */
  private refusedString(stop: number): ScanTrouble {
    return new ScanTrouble(this.buf[stop]! >= 0x80 ? "invalid UTF-8" : "invalid JSON value");
  }

  private skipContainer(): void {
    let depth = 0;
    for (;;) {
      if (this.i >= this.len && !this.fill()) throw new ScanTrouble("unterminated container");
      const buf = this.buf;
      const len = this.len;
      let i = this.i;
      for (; i < len; i++) {
        const b = buf[i]!;
        if (b === 0x22) break;
        if (b === 0x7b || b === 0x5b) depth++;
        else if ((b === 0x7d || b === 0x5d) && --depth === 0) {
          this.i = i + 1;
          return;
        }
      }
      this.i = i;
      if (i < len) this.skipString();
    }
  }

  private skipScalar(): void {
    for (;;) {
      if (this.i >= this.len && !this.fill()) return;
      const b = this.buf[this.i]!;
      if (b === 0x2c || b === 0x7d || b === 0x5d || b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d || b === 0x3a) return;
      this.i++;
    }
  }
}

/** A single value longer than the cursor's limit. */
export class ValueTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`a single JSON value is longer than ${limit} bytes`);
    this.name = "ValueTooLarge";
  }
}
