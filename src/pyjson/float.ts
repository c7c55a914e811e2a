/**
 * Python's `repr(float)`: the shortest digits that round-trip (the same
 * digits ECMAScript's Number-to-String produces), laid out by Python's rules:
 * fixed notation when the decimal exponent is in [-4, 16), scientific
 * otherwise with a signed, at-least-two-digit exponent (`1e-05`, `1e+16`),
 * and `.0` on integral fixed values. NaN/Infinity use the JSON tokens.
 */
export function floatRepr(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (n === Infinity) return "Infinity";
  if (n === -Infinity) return "-Infinity";
  if (n === 0) return Object.is(n, -0) ? "-0.0" : "0.0";
  const neg = n < 0;
  const exp = Math.abs(n).toExponential(); // e.g. "1.2345e+2", shortest round-trip digits
  const eIdx = exp.indexOf("e");
  const mant = exp.slice(0, eIdx);
  const e10 = Number(exp.slice(eIdx + 1));
  const digits = mant.replace(".", "");
  const decpt = e10 + 1; // position of the decimal point relative to the digits
  let body: string;
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      body = "0." + "0".repeat(-decpt) + digits;
    } else if (decpt >= digits.length) {
      body = digits + "0".repeat(decpt - digits.length) + ".0";
    } else {
      body = digits.slice(0, decpt) + "." + digits.slice(decpt);
    }
  } else {
    const m = digits.length > 1 ? digits[0] + "." + digits.slice(1) : digits;
    const x = decpt - 1;
    const xs = Math.abs(x).toString().padStart(2, "0");
    body = m + "e" + (x < 0 ? "-" : "+") + xs;
  }
  return neg ? "-" + body : body;
}

/**
 * `floatRepr(Number(text)) === text`, with fewer strings made: in repr's
 * fixed range [1e-4, 1e16), which lies inside ECMAScript's fixed range
 * [1e-6, 1e21), Number-to-String lays out the same shortest digits, but
 * for the ".0" an integral value gets; outside it, toExponential lays them
 * out as repr does but for a one-digit exponent's padding. (Readers decide
 * most lexemes without a string at all; this is their slow check, for the
 * floats the module leaves: ties, and 16-17 digits far from 1.)
 */
export function isFloatRepr(text: string): boolean {
  const n = Number(text);
  const a = Math.abs(n);
  if (a >= 1e-4 && a < 1e16) {
    const js = String(n);
    if (!Number.isInteger(n)) return js === text;
    return text.length === js.length + 2 && text.endsWith(".0") && text.startsWith(js);
  }
  // outside it repr is scientific, spelled as toExponential spells it once the exponent has two digits
  const x = n.toExponential();
  const e = x.indexOf("e");
  if (e > 0 && x.length - e >= 4) return x === text;
  // a one-digit exponent below it (1e-5 to 1e-9): repr pads it with a zero, compared without making that string
  if (e > 0 && x.charCodeAt(e + 1) === 0x2d) {
    if (text.length !== x.length + 1) return false;
    for (let i = 0; i < e + 2; i++) if (text.charCodeAt(i) !== x.charCodeAt(i)) return false;
    return text.charCodeAt(e + 2) === 0x30 && text.charCodeAt(e + 3) === x.charCodeAt(e + 2);
  }
  return floatRepr(n) === text;
}

/** The canonical (Python) spelling of a parsed number lexeme. */
export function canonicalNumber(raw: string, isFloat: boolean): string {
  if (!isFloat) return raw === "-0" ? "0" : raw;
  switch (raw) {
    case "NaN":
    case "Infinity":
    case "-Infinity":
      return raw;
  }
  return floatRepr(Number(raw));
}
