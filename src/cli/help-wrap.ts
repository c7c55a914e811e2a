import { terminalColumns } from "../render/terminal.ts";

/**
 * Help pages wrapped to the terminal's width (80 when stdout is not a
 * terminal and COLUMNS does not say): an option or command row keeps its
 * name column and continues its description under itself; any other line
 * continues under its own indent. A word longer than the room left is cut at
 * `|` (the usage line's list of forms) or, failing that, left whole.
 */
export function helpWidth(): number {
  const tty = terminalColumns();
  if (tty !== undefined && tty > 0) return tty;
  const env = Number.parseInt(process.env.COLUMNS ?? "", 10);
  return Number.isFinite(env) && env > 0 ? env : 80;
}

/** A row of a help table: its name column (indent, name, the gap) and its description. */
const ROW = /^( +(?:-\w, )?-{0,2}[^\s]+ {2,})(\S.*)$/;

export function wrapHelp(text: string, width = helpWidth()): string {
  return text
    .split("\n")
    .flatMap((raw) => {
      const line = raw.trimEnd();
      if ([...line].length <= width) return [line];
      const row = ROW.exec(line);
      // A name column wider than half the page leaves too little room: the description goes below it.
      if (row && row[1]!.length <= width / 2) return hang(row[1]!, row[2]!, row[1]!.length, width);
      if (row) return [row[1]!.trimEnd(), ...hang(" ".repeat(8), row[2]!, 8, width)];
      const indent = /^ */.exec(line)![0].length;
      return hang(line.slice(0, indent), line.slice(indent), Math.min(indent + 2, width / 2), width);
    })
    .join("\n");
}

/** `text` after `first` on the first line, then on lines indented by `indent`, each at most `width`. */
function hang(first: string, text: string, indent: number, width: number): string[] {
  const room = Math.max(20, width - indent);
  // Each piece with whether a space goes before it (the pieces of a cut word are glued).
  const pieces = keepAsides(text.split(/ +/)).flatMap((w) => splitLong(w, room).map((p, i) => ({ p, space: i === 0 })));
  const lines: string[] = [];
  let cur = first;
  let curLen = [...first].length;
  let empty = true;
  for (const { p, space } of pieces) {
    const len = [...p].length;
    const sep = empty || !space ? 0 : 1;
    if (!empty && curLen + sep + len > width) {
      lines.push(cur);
      cur = " ".repeat(indent);
      curLen = indent;
      empty = true;
    }
    const gap = empty || !space ? "" : " ";
    cur += gap + p;
    curLen += gap.length + len;
    empty = false;
  }
  lines.push(cur);
  return lines;
}

/** A word longer than `room`, cut after each `|` it has (`list|agents|…`); otherwise whole. */
function splitLong(word: string, room: number): string[] {
  if ([...word].length <= room || !word.includes("|")) return [word];
  return word.split(/(?<=\|)/);
}

/** Words with a short parenthesised aside joined into one, so `(also --json)` is never cut. */
function keepAsides(words: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    let w = words[i]!;
    if (w.startsWith("(") && !w.includes(")")) {
      let j = i + 1;
      let joined = w;
      while (j < words.length && !joined.includes(")") && joined.length <= 24) joined += " " + words[j++]!;
      if (joined.includes(")") && joined.length <= 24) {
        w = joined;
        i = j - 1;
      }
    }
    out.push(w);
  }
  return out;
}
