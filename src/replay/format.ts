/**
 * Python's number and time formatting as the replay display uses it. JS
 * differs in ways that show: `toFixed` rounds exact binary ties up where
 * Python's `format(x, ".1f")` rounds them to even (256/1024 = 0.25 → "0.2"
 * in Python, "0.3" in JS), and `int()` truncates toward zero.
 */

const view = new DataView(new ArrayBuffer(8));

/** The exact value of a finite, non-negative double as `mant * 2^exp`. */
function decompose(a: number): { mant: bigint; exp: number } {
  view.setFloat64(0, a);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const bexp = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  if (bexp === 0) return { mant, exp: -1074 };
  mant |= 1n << 52n;
  return { mant, exp: bexp - 1075 };
}

/** Python `format(x, f".{digits}f")`: correctly rounded, ties to even. */
export function formatFixed(x: number, digits: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  const neg = x < 0 || Object.is(x, -0);
  const { mant, exp } = decompose(Math.abs(x));
  const scale = 10n ** BigInt(digits);
  let q: bigint;
  if (exp >= 0) {
    q = (mant << BigInt(exp)) * scale;
  } else {
    const den = 1n << BigInt(-exp);
    const num = mant * scale;
    q = num / den;
    const twice = 2n * (num % den);
    if (twice > den || (twice === den && (q & 1n) === 1n)) q += 1n;
  }
  const s = q.toString().padStart(digits + 1, "0");
  const body = digits > 0 ? `${s.slice(0, s.length - digits)}.${s.slice(s.length - digits)}` : s;
  return (neg ? "-" : "") + body;
}

/** Python `int(x)` of a float: truncation toward zero (NaN/inf → null). */
export function truncInt(x: number): number | null {
  if (!Number.isFinite(x)) return null;
  return Math.trunc(x);
}

/** Python `divmod(n, 60)` rendered `m:ss` (floor division, so -5 → "-1:55"). */
export function minutesSeconds(totalSeconds: number): string {
  const m = Math.floor(totalSeconds / 60);
  const s = totalSeconds - m * 60;
  return `${m}:${String(s).padStart(2, "0")}`;
}

/** `<m>m<ss>s` as in the display header's Duration. */
export function durationText(totalSeconds: number): string {
  const m = Math.floor(totalSeconds / 60);
  const s = totalSeconds - m * 60;
  return `${m}m${String(s).padStart(2, "0")}s`;
}

const two = (n: number): string => String(n).padStart(2, "0");

/**
 * Local time of a Unix timestamp as Python's `datetime.fromtimestamp(t)`
 * then `strftime`: microseconds are rounded half-even before the seconds are
 * cut, so 59.9999997 shows the next second as Python does. Returns null for
 * a timestamp Python could not convert.
 */
export function localTime(t: number, withSeconds: boolean): string | null {
  if (!Number.isFinite(t) || Math.abs(t) > 253402300799) return null;
  let secs = Math.floor(t);
  const frac = (t - secs) * 1e6;
  let us = Math.round(frac);
  if (Math.abs(frac - Math.trunc(frac) - 0.5) < 1e-9 && us % 2 === 1) us -= 1;
  if (us >= 1_000_000) secs += 1;
  const d = new Date(secs * 1000);
  if (Number.isNaN(d.getTime())) return null;
  const date = `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}`;
  return withSeconds ? `${date}:${two(d.getSeconds())}` : date;
}

/** `f"{size / 1024:.1f} KB"` as the run list's Size column. */
export function sizeKb(bytes: number): string {
  return `${formatFixed(bytes / 1024, 1)} KB`;
}
