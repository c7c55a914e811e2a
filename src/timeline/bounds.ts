/**
 * What keeps the timeline page bounded and free of this machine's paths:
 * journal text cut to a length (saying so), and our own messages (verdict
 * details, the seal's name) with absolute local paths replaced.
 */

/** `s` cut at `max` characters (never inside a surrogate pair), marked with "…" when cut. */
export function clipText(s: string, max: number): string {
  if (s.length <= max) return s;
  let end = max;
  const c = s.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return `${s.slice(0, end)}…`;
}

/** Absolute paths the page may meet in our own messages, and the name it shows for each. */
export type PathNames = Record<string, string>;

/** An absolute POSIX or Windows path in a message (what is left once the known ones are named). */
const ABSOLUTE = /(?<![\w.~/\\-])(?:[A-Za-z]:[\\/]|\/)(?:[^\s/\\'"()<>,;]+[\\/])+([^\s/\\'"()<>,;]*)/g;

/**
 * A function that rewrites a message for the page: each known path (the
 * longest first) becomes its name, then any other absolute path becomes
 * `…/<last component>`.
 */
export function pagePaths(names: PathNames): (s: string) => string {
  const known = Object.entries(names)
    .filter(([abs]) => abs.length > 1)
    .sort((a, b) => b[0].length - a[0].length);
  return (s) => {
    let out = s;
    for (const [abs, name] of known) out = out.split(abs).join(name);
    return out.replace(ABSOLUTE, (_m, last: string) => `…/${last}`);
  };
}
