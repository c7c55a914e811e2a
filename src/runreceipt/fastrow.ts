import { LOWER_HEX_VALUE } from "../hex.ts";
import { floatRepr } from "../pyjson/float.ts";
import { BACKSLASH, QUOTE } from "../pyjson/bytes.ts";

/**
 * A journal row of a receipt Python wrote is already canonical (CJ: sorted
 * keys, no whitespace, ASCII escapes, Python's number spelling). For such a
 * row the canonical text is its own bytes and the payload pre-image is
 * those bytes without the envelope members, so neither a value tree nor a
 * re-serialisation is needed. `canonicalRow` recognises that form byte by
 * byte and returns null for anything else (an escaped key, a non-canonical
 * number, whitespace, a `hash_profile`, …): the caller then takes the exact
 * path (py-json parse and re-serialisation), which decides every case.
 */

export interface CanonicalRow {
  /** The `event` value (a plain string: no escapes). */
  eventType: string;
  /** Stored `prev_hash` / `event_hash` ("" when absent). */
  prevHash: string;
  eventHash: string;
  /** The payload pre-image (spec run-journal §1.4): the row without its envelope members. */
  payload: string;
  /** The row's text (its canonical text: ASCII). */
  text: string;
  /** Length of the row's bytes (the row is `b[0, end)`). */
  end: number;
  /**
   * The `endpoint_*` members (what the binding's endpoint list reads):
   * a plain string's text, null for a non-string, undefined for a string
   * with escapes (the caller then parses the row).
   */
  endpoint: Map<string, string | null | undefined>;
}

const MAX_DEPTH = 64;
const enc = new TextEncoder();
/** Envelope members, which the payload hash leaves out (journal/hash.ts NON_DETERMINISTIC_FIELDS). */
const ENVELOPE = ["elapsed_s", "event_hash", "index", "payload_hash", "prev_hash", "ts"].map((k) => enc.encode(k));
const K_EVENT = enc.encode("event");
const K_PREV = enc.encode("prev_hash");
const K_HASH = enc.encode("event_hash");
const K_PROFILE = enc.encode("hash_profile");
const ENDPOINT_PREFIX = enc.encode("endpoint_");

function hasPrefix(b: Uint8Array, ks: number, ke: number, prefix: Uint8Array): boolean {
  if (ke - ks - 2 < prefix.length) return false;
  for (let k = 0; k < prefix.length; k++) if (b[ks + 1 + k] !== prefix[k]) return false;
  return true;
}

function isEnvelope(b: Uint8Array, ks: number, ke: number): boolean {
  for (const w of ENVELOPE) if (keyIs(b, ks, ke, w)) return true;
  return false;
}

/** The key between the quotes at [ks, ke) is `word`. */
function keyIs(b: Uint8Array, ks: number, ke: number, word: Uint8Array): boolean {
  if (ke - ks - 2 !== word.length) return false;
  for (let k = 0; k < word.length; k++) if (b[ks + 1 + k] !== word[k]) return false;
  return true;
}
const SHORT_ESCAPES = new Set([QUOTE, BACKSLASH, 0x6e, 0x72, 0x74, 0x62, 0x66]); // " \ n r t b f
const SHORT_FORM_CONTROLS = new Set([0x08, 0x09, 0x0a, 0x0c, 0x0d]);

/** End of a canonical string starting at the quote at `p`, or -1. */
function stringEnd(b: Uint8Array, p: number): number {
  let i = p + 1;
  const n = b.length;
  while (i < n) {
    const c = b[i]!;
    if (c === QUOTE) return i + 1;
    if (c < 0x20 || c >= 0x7f) return -1;
    if (c !== BACKSLASH) {
      i++;
      continue;
    }
    const e = b[i + 1];
    if (e !== undefined && SHORT_ESCAPES.has(e)) {
      i += 2;
      continue;
    }
    if (e !== 0x75 || i + 5 >= n) return -1; // only \uXXXX is left
    let v = 0;
    for (let k = 2; k < 6; k++) {
      const h = LOWER_HEX_VALUE[b[i + k]!]!; // uppercase hex is not canonical
      if (h < 0) return -1;
      v = v * 16 + h;
    }
    // Python escapes with \u only C0 controls without a short form and everything from U+007F.
    if (!((v < 0x20 && !SHORT_FORM_CONTROLS.has(v)) || v >= 0x7f)) return -1;
    i += 6;
  }
  return -1;
}

const isDigit = (c: number | undefined) => c !== undefined && c >= 0x30 && c <= 0x39;

/** End of a number in Python's spelling at `p`, or -1. */
function numberEnd(b: Uint8Array, p: number): number {
  let i = p;
  if (b[i] === 0x2d) i++;
  if (b[i] === 0x30) i++;
  else if (isDigit(b[i])) while (isDigit(b[i])) i++;
  else return -1;
  let isFloat = false;
  if (b[i] === 0x2e) {
    isFloat = true;
    i++;
    if (!isDigit(b[i])) return -1;
    while (isDigit(b[i])) i++;
  }
  if (b[i] === 0x65 || b[i] === 0x45) {
    isFloat = true;
    i++;
    if (b[i] === 0x2b || b[i] === 0x2d) i++;
    if (!isDigit(b[i])) return -1;
    while (isDigit(b[i])) i++;
  }
  if (!isFloat) return (i - p === 2 && b[p] === 0x2d && b[p + 1] === 0x30) || i - p > 4000 ? -1 : i;
  return isReprFloat(latin1(b, p, i)) ? i : -1;
}

const ascii = new TextDecoder();
/** The text of ASCII bytes [s, e). */
function latin1(b: Uint8Array, s: number, e: number): string {
  return ascii.decode(b.subarray(s, e));
}

/**
 * Plain decimals with at most 15 significant digits, no trailing zero
 * (`1.0` aside) and in the range Python prints without an exponent are their
 * own shortest round-trip spelling, so `repr` would print them unchanged.
 */
const SIMPLE_FLOAT = /^-?(?:[1-9][0-9]*\.(?:0|[0-9]*[1-9])|0\.(?:0{0,3}[1-9][0-9]*[1-9]|0{0,3}[1-9]|0))$/;
function isReprFloat(lexeme: string): boolean {
  if (SIMPLE_FLOAT.test(lexeme) && lexeme.replace(/^-?0\.0*|[-.]/g, "").length <= 15) return true;
  return floatRepr(Number(lexeme)) === lexeme;
}

function literalEnd(b: Uint8Array, p: number, word: string): number {
  for (let k = 0; k < word.length; k++) if (b[p + k] !== word.charCodeAt(k)) return -1;
  return p + word.length;
}

/** Byte order of two plain ASCII keys (equal to code point order for them). */
function keyBefore(b: Uint8Array, as: number, ae: number, bs: number, be: number): boolean {
  const n = Math.min(ae - as, be - bs);
  for (let k = 0; k < n; k++) {
    const x = b[as + k]!;
    const y = b[bs + k]!;
    if (x !== y) return x < y;
  }
  return ae - as < be - bs;
}

/** A key without escapes: the end of its string, or -1. */
function plainKeyEnd(b: Uint8Array, p: number): number {
  if (b[p] !== QUOTE) return -1;
  for (let i = p + 1; i < b.length; i++) {
    const c = b[i]!;
    if (c === QUOTE) return i + 1;
    if (c === BACKSLASH || c < 0x20 || c >= 0x7f) return -1;
  }
  return -1;
}

type MemberFn = (keyStart: number, keyEnd: number, valueStart: number, valueEnd: number) => void;

function valueEnd(b: Uint8Array, p: number, depth: number): number {
  const c = b[p];
  if (c === QUOTE) return stringEnd(b, p);
  if (c === 0x7b) return objectEnd(b, p, depth + 1, null);
  if (c === 0x5b) return arrayEnd(b, p, depth + 1);
  if (c === 0x74) return literalEnd(b, p, "true");
  if (c === 0x66) return literalEnd(b, p, "false");
  if (c === 0x6e) return literalEnd(b, p, "null");
  return numberEnd(b, p);
}

function arrayEnd(b: Uint8Array, p: number, depth: number): number {
  if (depth > MAX_DEPTH) return -1;
  let i = p + 1;
  if (b[i] === 0x5d) return i + 1;
  for (;;) {
    i = valueEnd(b, i, depth);
    if (i < 0) return -1;
    if (b[i] === 0x5d) return i + 1;
    if (b[i] !== 0x2c) return -1;
    i++;
  }
}

function objectEnd(b: Uint8Array, p: number, depth: number, onMember: MemberFn | null): number {
  if (depth > MAX_DEPTH) return -1;
  let i = p + 1;
  if (b[i] === 0x7d) return i + 1;
  let prevStart = -1;
  let prevEnd = -1;
  for (;;) {
    const ks = i;
    const ke = plainKeyEnd(b, ks);
    if (ke < 0 || b[ke] !== 0x3a) return -1;
    if (prevStart >= 0 && !keyBefore(b, prevStart, prevEnd, ks, ke)) return -1;
    prevStart = ks;
    prevEnd = ke;
    const ve = valueEnd(b, ke + 1, depth);
    if (ve < 0) return -1;
    onMember?.(ks, ke, ke + 1, ve);
    if (b[ve] === 0x7d) return ve + 1;
    if (b[ve] !== 0x2c) return -1;
    i = ve + 1;
  }
}

/** A plain string value's span without its quotes, or null when it has escapes or is not a string. */
function plainSpan(b: Uint8Array, s: number, e: number): [number, number] | null {
  if (b[s] !== QUOTE) return null;
  for (let i = s + 1; i < e - 1; i++) if (b[i] === BACKSLASH) return null;
  return [s + 1, e - 1];
}

/** The row at the start of `b` in canonical form, or null when it is not (see the module comment). */
export function canonicalRow(b: Uint8Array): CanonicalRow | null {
  if (b[0] !== 0x7b) return null;
  // Offsets only while scanning; the row is ASCII, so they index its text too.
  const kept: [number, number][] = [];
  let eventSpan: [number, number] | null = null;
  let prevSpan: [number, number] | null = null;
  let hashSpan: [number, number] | null = null;
  let refused = false;
  const endpointSpans: [number, number, [number, number] | null | undefined][] = [];
  const end = objectEnd(b, 0, 1, (ks, ke, vs, ve) => {
    if (keyIs(b, ks, ke, K_PROFILE)) refused = true;
    else if (keyIs(b, ks, ke, K_EVENT)) eventSpan = plainSpan(b, vs, ve);
    else if (keyIs(b, ks, ke, K_PREV)) prevSpan = plainSpan(b, vs, ve);
    else if (keyIs(b, ks, ke, K_HASH)) hashSpan = plainSpan(b, vs, ve);
    else if (hasPrefix(b, ks, ke, ENDPOINT_PREFIX)) endpointSpans.push([ks + 1, ke - 1, b[vs] === QUOTE ? (plainSpan(b, vs, ve) ?? undefined) : null]);
    if (isEnvelope(b, ks, ke)) return;
    const last = kept[kept.length - 1];
    // Adjacent kept members (only a comma between) are copied as one run.
    if (last !== undefined && last[1] + 1 === ks) last[1] = ve;
    else kept.push([ks, ve]);
  });
  if (end < 0 || refused || eventSpan === null || prevSpan === null || hashSpan === null) return null;
  const text = ascii.decode(b.subarray(0, end));
  const cut = (sp: [number, number]) => text.slice(sp[0], sp[1]);
  let payload = "{";
  kept.forEach(([s, e], k) => {
    payload += (k > 0 ? "," : "") + text.slice(s, e);
  });
  const endpoint = new Map<string, string | null | undefined>();
  for (const [s, e, v] of endpointSpans) endpoint.set(text.slice(s, e), v ? cut(v) : v);
  return { eventType: cut(eventSpan), prevHash: cut(prevSpan), eventHash: cut(hashSpan), payload: payload + "}", text, end, endpoint };
}
