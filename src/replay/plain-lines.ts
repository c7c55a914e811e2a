import { copyTo } from "../codec/bytes.ts";

/**
 * Table lines of plain cells written as bytes: printable ASCII, so a byte
 * is a terminal cell and sanitizing changes nothing. The layout rules are
 * render/table.ts's (a cell cut to its column with "…", wrapCells, the
 * line trimmed at its end), applied to spans of a row's bytes instead of
 * strings, so a table's common rows are laid out with no string made. The
 * run table (fast-cells.ts FastTableWriter) and the agent view's table
 * (agent-table.ts) write their lines here.
 */
export class PlainLines {
  out: Uint8Array;
  pos = 0;
  private readonly encoder = new TextEncoder();
  /** A folded cell's label and text, the one text its lines wrap. */
  private labelled = new Uint8Array(256);

  constructor(size: number) {
    this.out = new Uint8Array(size);
  }

  /** Append text made elsewhere (a declined row's lines, a header). */
  text(t: string): void {
    this.room(t.length * 3);
    this.pos += this.encoder.encodeInto(t, this.out.subarray(this.pos)).written;
  }

  /** trimEnd from `start` and the line feed: plain cells hold no whitespace but the space, and escapes end in "m". */
  endLine(start: number): void {
    const o = this.out;
    while (this.pos > start && o[this.pos - 1] === SPACE) this.pos--;
    o[this.pos++] = 0x0a;
  }

  /**
   * The text d[ds, de) wrapped to `width` (Table.format's wrapCells of plain
   * ASCII, one cell a byte), its first piece ending the line begun at
   * `start`, each other piece on a line of its own after `indent` spaces.
   * `trim`: every line trimmed at its end (a wrapped cell in the row, where
   * the other cells are spaces there), else only a cut line is (a folded
   * cell's lines, the last as it is: wrapCells trims a line only where it cuts).
   */
  wrapLines(d: Uint8Array, ds: number, de: number, width: number, indent: number, start: number, trim: boolean): void {
    this.room((Math.ceil((de - ds) / width) + 1) * (indent + width + 2));
    let lineStart = start;
    let cs = ds;
    for (let i = ds; i < de; i++) {
      const ch = d[i]!;
      if (i - cs + 1 > width && i > cs) {
        let space = i - 1;
        while (space >= cs && d[space] !== SPACE) space--;
        const cut = space > cs && ch !== SPACE ? space + 1 - cs : i - cs;
        // trimEnd, or the piece as it is when it is all spaces
        let e = cs + cut;
        while (e > cs && d[e - 1] === SPACE) e--;
        this.copy(d, cs, e === cs ? cs + cut : e);
        this.lineEnd(lineStart, trim);
        lineStart = this.pos;
        this.pad(indent);
        cs += cut;
        if (ch === SPACE && cs === i) {
          cs = i + 1; // a break at a space swallows it
          continue;
        }
      }
    }
    this.copy(d, cs, de);
    this.lineEnd(lineStart, trim);
  }

  /**
   * A folded cell below the row: `label` and the cell's text d[ds, de)
   * (not empty), wrapped together to `width` on lines of their own, each
   * after `indent` spaces.
   */
  foldedCell(label: Uint8Array, d: Uint8Array, ds: number, de: number, width: number, indent: number): void {
    if (label.length > 0) {
      const n = label.length + de - ds;
      if (this.labelled.length < n) this.labelled = new Uint8Array(Math.max(n, 2 * this.labelled.length));
      this.labelled.set(label);
      copyTo(d, ds, de, this.labelled, label.length);
      d = this.labelled;
      ds = 0;
      de = n;
    }
    this.room(indent);
    this.pad(indent);
    this.wrapLines(d, ds, de, width, indent, this.pos, false);
  }

  private lineEnd(start: number, trim: boolean): void {
    if (trim) this.endLine(start);
    else this.out[this.pos++] = 0x0a;
  }

  room(n: number): void {
    if (this.pos + n <= this.out.length) return;
    const bigger = new Uint8Array(Math.max(this.out.length * 2, this.pos + n));
    bigger.set(this.out.subarray(0, this.pos));
    this.out = bigger;
  }

  copy(b: Uint8Array, s: number, e: number): void {
    this.pos = copyTo(b, s, e, this.out, this.pos);
  }

  pad(n: number): void {
    // a cell's padding is short: a loop beats fill(), a native call
    const o = this.out;
    for (let i = 0; i < n; i++) o[this.pos++] = SPACE;
  }

  /** The text b[s, e) cut to `width` cells (truncateCells), painted when not empty; returns the cells written. */
  styled(b: Uint8Array, s: number, e: number, style: [Uint8Array, Uint8Array] | null, width: number): number {
    const cut = e - s > width;
    if (style !== null && s !== e) this.copy(style[0], 0, style[0].length);
    this.copy(b, s, cut ? s + width - 1 : e);
    if (cut) this.copy(ELLIPSIS, 0, ELLIPSIS.length);
    if (style !== null && s !== e) this.copy(style[1], 0, style[1].length);
    return cut ? width : e - s;
  }
}

const SPACE = 0x20;
const ELLIPSIS = new TextEncoder().encode("\u2026");

