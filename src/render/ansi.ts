import { isTerminal } from "./terminal.ts";
/**
 * Minimal ANSI styling. Colour is decided once per process by the CLI
 * (`setColorEnabled`): only on a TTY, never when NO_COLOR is set or
 * `--no-color` is given. Library code returns plain strings; only renderers
 * call `paint`.
 */
const STYLES: Record<string, [number, number]> = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
  gray: [90, 39],
  bright_red: [91, 39],
  bright_green: [92, 39],
  bright_yellow: [93, 39],
  bright_cyan: [96, 39],
};

let enabled = false;

export function setColorEnabled(on: boolean): void {
  enabled = on;
}

export function colorEnabled(): boolean {
  return enabled;
}

/** Decide whether colour may be used on stdout. */
export function shouldUseColor(noColorFlag: boolean): boolean {
  if (noColorFlag) return false;
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== "") return false;
  if (process.env.FORCE_COLOR && process.env.FORCE_COLOR !== "0") return true;
  return isTerminal(1);
}

/** Apply space-separated styles, e.g. `paint("bold bright_green", "x")`. */
export function paint(style: string, text: string): string {
  if (!enabled || !style) return text;
  let open = "";
  let close = "";
  for (const name of style.split(/\s+/)) {
    const codes = STYLES[name];
    if (!codes) continue;
    open += `\x1b[${codes[0]}m`;
    close = `\x1b[${codes[1]}m` + close;
  }
  return open + text + close;
}

/** `text` without its ANSI colour escapes. */
export function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;]*m/g, "");
}

/** Visible length of a string that may contain ANSI escapes. */
export function visibleLength(text: string): number {
  return stripAnsi(text).length;
}
