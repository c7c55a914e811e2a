/**
 * Compare two strings by Unicode code point (Python `str` order). A JS
 * string is UTF-16: a valid surrogate pair is one code point, a lone
 * surrogate is its own code point (as Python keeps `"\\ud800"` from JSON).
 * UTF-16 unit order and code point order disagree only around surrogates.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === n) return a.length - b.length;
  const x = a.charCodeAt(i);
  const y = b.charCodeAt(i);
  const surrogateInvolved = (x >= 0xd800 && x <= 0xdfff) || (y >= 0xd800 && y <= 0xdfff);
  if (!surrogateInvolved) return x < y ? -1 : 1;
  // The differing unit may be the second half of a pair whose first half is
  // shared: compare whole code points from the start of that code point.
  let j = i;
  if (j > 0) {
    const prev = a.charCodeAt(j - 1);
    if (prev >= 0xd800 && prev <= 0xdbff) j--;
  }
  for (;;) {
    const xp = a.codePointAt(j);
    const yp = b.codePointAt(j);
    if (xp === undefined || yp === undefined) return xp === yp ? 0 : xp === undefined ? -1 : 1;
    if (xp !== yp) return xp < yp ? -1 : 1;
    j += xp > 0xffff ? 2 : 1;
  }
}
