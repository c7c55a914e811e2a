/**
 * The physical lines (1-based numbers) of a journal that the scan pass
 * loaded on the fast path (FastRowReader.load accepted them), so the
 * table pass can take their display fields without validating them again
 * (FastRowReader.locate). One bit a line, and only the first MAX_LINES
 * lines are remembered, so memory stays bounded at any journal size:
 * lines beyond are validated again, as a line never seen is.
 */
const MAX_LINES = 1 << 23;

export class LineSet {
  private bits = new Uint8Array(1 << 12);

  add(line: number): void {
    if (line >= MAX_LINES) return;
    const i = line >>> 3;
    if (i >= this.bits.length) {
      const grown = new Uint8Array(Math.min(MAX_LINES >>> 3, Math.max(this.bits.length * 2, i + 1)));
      grown.set(this.bits);
      this.bits = grown;
    }
    this.bits[i]! |= 1 << (line & 7);
  }

  has(line: number): boolean {
    const i = line >>> 3;
    return i < this.bits.length && (this.bits[i]! & (1 << (line & 7))) !== 0;
  }
}
