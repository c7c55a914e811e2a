import { paint } from "./ansi.ts";
import { terminalColumns } from "./terminal.ts";

/**
 * Terminal tables whose column widths are fitted to the terminal. Rows are
 * formatted one at a time, so a table over a million rows streams: the widths
 * are decided up front from the column specs (and, when the caller has all
 * rows anyway, from their measured content), never by buffering the rows.
 *
 * Cell text is untrusted (it comes from journals): control, format and
 * line/paragraph-separator characters are shown as visible escapes so a row
 * can neither move the cursor, recolour the terminal, nor break the layout.
 */

export interface Column {
  header: string;
  /** Preferred width in terminal cells (content-measured or fixed). */
  width: number;
  /** The column is never shrunk below this (default: min(width, 4)). */
  minWidth?: number;
  /** A flexible column takes the width left over by the others (`expand`). */
  flex?: boolean;
  /** When the table is too wide, columns with a higher priority give up width first (default 0). */
  shrinkPriority?: number;
  align?: "left" | "right";
  /** `ellipsis` (default) cuts long cells with `…`; `wrap` continues them on further lines. */
  overflow?: "ellipsis" | "wrap";
  /** Style (see `paint`) applied to every cell of the column unless the cell sets its own. */
  style?: string;
  /**
   * When the terminal is too narrow for this column at its minimum beside
   * the others, it leaves the row and is printed below it, indented, wrapped
   * to the terminal, after this label ("" for none). Columns with a higher
   * `foldPriority` fold first.
   */
  fold?: string;
  foldPriority?: number;
  /** A cell with this text means "no value": a folded cell holding it prints nothing. */
  placeholder?: string;
}

export interface Cell {
  text: string;
  style?: string;
}

export type CellInput = string | Cell;

/** Width available for output: the TTY's columns, else `COLUMNS`, else 100. */
export function terminalWidth(): number {
  const tty = terminalColumns();
  if (tty && tty > 0) return tty;
  const env = Number.parseInt(process.env.COLUMNS ?? "", 10);
  if (Number.isFinite(env) && env > 0) return env;
  return 100;
}

// Cc (controls incl. DEL and C1), Cf (bidi overrides, zero-width chars),
// Zl/Zp (U+2028/U+2029) and lone surrogates.
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;

/** Replace characters that would act on the terminal with visible escapes. */
export function sanitizeCell(text: string): string {
  return text.replace(UNSAFE, (ch) => {
    const cp = ch.codePointAt(0)!;
    if (cp <= 0xff) return "\\x" + cp.toString(16).padStart(2, "0");
    if (cp <= 0xffff) return "\\u" + cp.toString(16).padStart(4, "0");
    return "\\U" + cp.toString(16).padStart(8, "0");
  });
}

const ZERO_WIDTH = /[\p{Mn}\p{Me}]/u;

function isWide(cp: number): boolean {
  return (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0x303e) ||
    (cp >= 0x3041 && cp <= 0x33ff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0xa000 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1f64f) ||
    (cp >= 0x1f680 && cp <= 0x1f6ff) ||
    (cp >= 0x1f900 && cp <= 0x1f9ff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  );
}

function charWidth(ch: string): number {
  return codePointWidth(ch.codePointAt(0)!);
}

/** Whether each BMP code point is zero-width, as found (0: not yet, 1: yes, 2: no): no string made per character. */
const zeroWidthBmp = new Uint8Array(0x10000);

function codePointWidth(cp: number): number {
  if (cp < 0x300) return 1;
  let zero: boolean;
  if (cp > 0xffff) zero = ZERO_WIDTH.test(String.fromCodePoint(cp));
  else {
    let k = zeroWidthBmp[cp]!;
    if (k === 0) zeroWidthBmp[cp] = k = ZERO_WIDTH.test(String.fromCharCode(cp)) ? 1 : 2;
    zero = k === 1;
  }
  if (zero) return 0;
  return isWide(cp) ? 2 : 1;
}

/** Terminal cells a (sanitized, unstyled) string occupies. */
export function cellWidth(text: string): number {
  let w = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x300) {
      w++;
      continue;
    }
    const cp = text.codePointAt(i)!;
    if (cp > 0xffff) i++;
    w += codePointWidth(cp);
  }
  return w;
}

/**
 * Split into pieces of at most `width` cells (at least one piece), breaking
 * after the last space of a piece when it has one, else inside the word.
 */
export function wrapCells(text: string, width: number): string[] {
  return [...wrapPieces([text], width)];
}

/**
 * wrapCells of the text `pieces` join to (none may end between the halves
 * of a surrogate pair), its lines made as they are taken: a cell of
 * megabytes is laid out without its lines, or the text, held at once.
 */
export function* wrapPieces(pieces: Iterable<string>, width: number): Generator<string> {
  if (width <= 0) {
    let all = "";
    for (const p of pieces) all += p;
    yield all;
    return;
  }
  // The line is `head` (from earlier pieces, or what a cut left) then piece[start, i), never split into characters.
  let head = "";
  let curW = 0;
  /** Where the line's last space is (code units into the line), -1: none. */
  let space = -1;
  for (const piece of pieces) {
    let start = 0;
    let i = 0;
    while (i < piece.length) {
      const cp = piece.codePointAt(i)!;
      const units = cp > 0xffff ? 2 : 1;
      const w = codePointWidth(cp);
      if (curW + w > width && head.length + i - start > 0) {
        const cur = head + piece.slice(start, i);
        // break after the last space of the line (not its first character), else inside the word
        const cut = space > 0 && cp !== 0x20 ? space + 1 : cur.length;
        const taken = cur.slice(0, cut);
        yield taken.trimEnd() || taken;
        head = cur.slice(cut);
        start = i;
        curW = cellWidth(head);
        space = -1; // what follows the last space has none
        if (cp === 0x20 && head.length === 0) {
          // a break at a space swallows it
          i += units;
          start = i;
          continue;
        }
      }
      if (cp === 0x20) space = head.length + i - start;
      curW += w;
      i += units;
    }
    head += piece.slice(start);
  }
  yield head;
}

/** Lay `parts` out on lines of at most `width` cells, `sep` between parts on a line (a part never splits). */
export function joinFitting(parts: readonly string[], width: number, sep = "  "): string[] {
  const lines: string[] = [];
  let cur = "";
  for (const part of parts) {
    if (cur !== "" && cellWidth(cur + sep + part) > width) {
      lines.push(cur);
      cur = part;
    } else {
      cur = cur === "" ? part : cur + sep + part;
    }
  }
  if (cur !== "") lines.push(cur);
  return lines;
}

/** Cut to at most `width` cells, marking the cut with `…`. */
export function truncateCells(text: string, width: number): string {
  if (cellWidth(text) <= width) return text;
  return truncatePieces([text], width);
}

/**
 * truncateCells of the text `pieces` join to (none may end between the
 * halves of a surrogate pair), reading only as far as the cut: a text that
 * does not fit is known to once its prefix is wider than `width`.
 */
export function truncatePieces(pieces: Iterable<string>, width: number): string {
  let kept = "";
  let keptW = 0;
  let full = false;
  let all = "";
  let w = 0;
  for (const piece of pieces) {
    for (const ch of piece) {
      const cw = charWidth(ch);
      w += cw;
      if (w > width) return width <= 0 ? "" : kept + "…";
      if (!full && keptW + cw > width - 1) full = true;
      if (!full) {
        kept += ch;
        keptW += cw;
      }
    }
    // the text so far fits: it is the answer if nothing wider follows (zero-width characters can make it long)
    all += piece;
  }
  return all;
}

function pad(text: string, width: number, align: "left" | "right"): string {
  const fill = Math.max(0, width - cellWidth(text));
  return align === "right" ? " ".repeat(fill) + text : text + " ".repeat(fill);
}

/**
 * Decide column widths for `total` cells: every column gets its preferred
 * width; flexible columns share what is left (never below their minimum);
 * when that does not fit, the shrinkable column with the highest
 * `shrinkPriority` (the widest among equals) gives up one cell at a time
 * until it fits or every column is at its minimum.
 */
export function fitColumns(columns: readonly Column[], total: number, gap = 2): number[] {
  const avail = Math.max(0, total - gap * Math.max(0, columns.length - 1));
  const mins = columns.map((c) => Math.max(1, c.minWidth ?? Math.min(c.width, 4)));
  const widths = columns.map((c, i) => Math.max(c.width, mins[i]!));
  const flex = columns.map((c, i) => (c.flex ? i : -1)).filter((i) => i >= 0);
  if (flex.length > 0) {
    const fixed = widths.reduce((s, w, i) => (columns[i]!.flex ? s : s + w), 0);
    const share = Math.floor(Math.max(0, avail - fixed) / flex.length);
    for (const i of flex) widths[i] = Math.max(mins[i]!, share);
  }
  let over = widths.reduce((s, w) => s + w, 0) - avail;
  while (over > 0) {
    let pick = -1;
    for (let i = 0; i < widths.length; i++) {
      if (widths[i]! <= mins[i]!) continue;
      if (pick < 0) {
        pick = i;
        continue;
      }
      const pi = columns[i]!.shrinkPriority ?? 0;
      const pp = columns[pick]!.shrinkPriority ?? 0;
      if (pi > pp || (pi === pp && widths[i]! > widths[pick]!)) pick = i;
    }
    if (pick < 0) break;
    widths[pick]!--;
    over--;
  }
  return widths;
}

/** Width the columns need at their minimums, with the gaps between them. */
function minimumWidth(columns: readonly Column[], gap: number): number {
  return columns.reduce((sum, c) => sum + Math.max(1, c.minWidth ?? Math.min(c.width, 4)), 0) + gap * Math.max(0, columns.length - 1);
}

/**
 * Which columns fold out of the row (indices into `columns`): the foldable
 * ones, highest `foldPriority` first, until the rest fit at their minimums.
 */
export function foldColumns(columns: readonly Column[], total: number, gap = 2): Set<number> {
  const folded = new Set<number>();
  const candidates = columns
    .map((c, i) => ({ c, i }))
    .filter(({ c }) => c.fold !== undefined)
    .sort((a, b) => (b.c.foldPriority ?? 0) - (a.c.foldPriority ?? 0));
  for (const { i } of candidates) {
    if (minimumWidth(columns.filter((_, j) => !folded.has(j)), gap) <= total) break;
    folded.add(i);
  }
  return folded;
}

/** Indent of folded cells: under the second column, unless that leaves them too little room. */
const FOLD_MIN_TEXT = 20;

/** A table whose widths are fixed at construction; rows are formatted one by one. */
export class Table {
  /** Width of each column in the row (0 for a folded column). */
  readonly widths: number[];
  /** Columns printed below the row instead of in it (the terminal is too narrow for them). */
  readonly folded: ReadonlySet<number>;
  private readonly columns: readonly Column[];
  private readonly gap: string;
  /** The line's width in cells. */
  readonly total: number;
  /** Spaces before each line of a folded cell. */
  readonly foldIndent: number;

  constructor(columns: readonly Column[], options: { width?: number; gap?: number } = {}) {
    this.columns = columns;
    const gap = options.gap ?? 2;
    this.gap = " ".repeat(gap);
    this.total = options.width ?? terminalWidth();
    this.folded = foldColumns(columns, this.total, gap);
    const inRow = columns.filter((_, i) => !this.folded.has(i));
    const fitted = fitColumns(inRow, this.total, gap);
    let k = 0;
    this.widths = columns.map((_, i) => (this.folded.has(i) ? 0 : fitted[k++]!));
    const under = (fitted[0] ?? 0) + gap;
    this.foldIndent = this.total - under >= FOLD_MIN_TEXT ? under : Math.min(2, this.total);
  }

  /** The header line (the columns in the row), styled `bold cyan`. */
  header(): string {
    return [...this.rowPart(this.columns.map((c) => ({ text: c.header, style: "bold cyan" })))].join("\n");
  }

  /** One row as one or more output lines (wrapping and folded columns add lines). */
  format(cells: readonly CellInput[]): string[] {
    return [...this.formatLines(cells)];
  }

  /**
   * format's lines, made one at a time as they are taken, of cells that
   * may come in pieces: a cell of megabytes shows its first cells, or
   * wraps, without the text or its lines held whole.
   */
  *formatLines(cells: readonly (CellInput | PiecedCell)[]): Generator<string> {
    yield* this.rowPart(cells);
    yield* this.foldedLines(cells);
  }

  private rowPart(cells: readonly (CellInput | PiecedCell)[]): Generator<string> {
    const inRow = this.columns.map((_, i) => i).filter((i) => !this.folded.has(i));
    const pieces: { lines: Iterator<string>; style: string }[] = inRow.map((i) => {
      const col = this.columns[i]!;
      const cell = cells[i];
      const width = this.widths[i]!;
      if (isPieced(cell)) {
        const text = sanitizePieces(cell.pieces());
        const lines = col.overflow === "wrap" ? wrapPieces(text, width) : [truncatePieces(text, width)][Symbol.iterator]();
        return { lines, style: cell.style ?? col.style ?? "" };
      }
      const c = cellOf(cell);
      const text = sanitizeCell(c.text);
      const lines = col.overflow === "wrap" ? wrapCells(text, width) : [truncateCells(text, width)];
      return { lines: lines[Symbol.iterator](), style: c.style ?? col.style ?? "" };
    });
    return this.rowLines(inRow, pieces);
  }

  /** The folded cells of a row, each `label + text` wrapped below the row (empty cells print nothing). */
  private *foldedLines(cells: readonly (CellInput | PiecedCell)[]): Generator<string> {
    const indent = " ".repeat(this.foldIndent);
    for (const i of [...this.folded].sort((a, b) => a - b)) {
      const col = this.columns[i]!;
      const raw = cells[i];
      let text: Iterable<string>;
      let style: string;
      if (isPieced(raw)) {
        text = labelled(col.fold!, sanitizePieces(raw.pieces()));
        style = raw.style ?? col.style ?? "";
      } else {
        const cell = cellOf(raw);
        if (cell.text === "" || cell.text === col.placeholder) continue;
        text = [col.fold + sanitizeCell(cell.text)];
        style = cell.style ?? col.style ?? "";
      }
      for (const piece of wrapPieces(text, Math.max(1, this.total - this.foldIndent))) yield indent + (style ? paint(style, piece) : piece);
    }
  }

  /** The row's lines: line l of every column side by side, until every column's lines are out. */
  private *rowLines(inRow: number[], pieces: { lines: Iterator<string>; style: string }[]): Generator<string> {
    for (;;) {
      let more = false;
      const texts = pieces.map((p) => {
        const next = p.lines.next();
        if (next.done) return "";
        more = true;
        return next.value;
      });
      if (!more) return;
      const parts = pieces.map((p, k) => {
        const i = inRow[k]!;
        const col = this.columns[i]!;
        const text = texts[k]!;
        const last = k === pieces.length - 1;
        // Padding stays outside the styled span; the last left-aligned cell is not padded.
        const padded = last && col.align !== "right" ? text : pad(text, this.widths[i]!, col.align ?? "left");
        if (!p.style || text === "") return padded;
        const fill = padded.length - text.length;
        return col.align === "right" ? padded.slice(0, fill) + paint(p.style, text) : paint(p.style, text) + padded.slice(text.length);
      });
      yield parts.join(this.gap).trimEnd();
    }
  }
}

/**
 * A cell whose text comes in pieces (a long text decoded as the table reads
 * it). Joined, they are the text; none ends between the halves of a
 * surrogate pair. Such a text is never empty, nor a column's placeholder.
 */
export interface PiecedCell {
  pieces(): Iterable<string>;
  style?: string;
}

function isPieced(cell: CellInput | PiecedCell | undefined): cell is PiecedCell {
  return typeof cell === "object" && "pieces" in cell;
}

/** sanitizeCell of each piece: the same text, as no piece splits a character. */
export function* sanitizePieces(pieces: Iterable<string>): Generator<string> {
  for (const p of pieces) yield sanitizeCell(p);
}

function* labelled(label: string, pieces: Iterable<string>): Generator<string> {
  yield label;
  yield* pieces;
}

function cellOf(raw: CellInput | undefined): Cell {
  return typeof raw === "string" ? { text: raw } : (raw ?? { text: "" });
}

/**
 * Ids (run, agent, task) are never cut below this many cells: a column of
 * ids gets its full measured width, and only a terminal too narrow for it
 * cuts an id longer than this, with `…`.
 */
export const ID_MIN_WIDTH = 20;

/** A column of ids: full measured width, shrinkable to `ID_MIN_WIDTH` (or its full width, when shorter). */
export function idColumn(header: string, measuredWidth: number, extra: Partial<Column> = {}): Column {
  const width = Math.max(cellWidth(header), measuredWidth);
  return { header, width, minWidth: Math.min(width, ID_MIN_WIDTH), ...extra };
}

/** Preferred width of a column from its header and (sanitized) content. */
export function measure(header: string, values: Iterable<string>): number {
  let w = cellWidth(header);
  for (const v of values) w = Math.max(w, cellWidth(sanitizeCell(v)));
  return w;
}
