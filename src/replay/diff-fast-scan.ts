import { BACKSLASH, COLON, COMMA, LBRACE, LBRACKET, MAX_DEPTH, QUOTE, RBRACE, RBRACKET, SHORT_ESCAPE_VALUE, skipBlanks, skipPlain, SPACE, TAB } from "../codec/bytes.ts";
import { hex4 } from "../hex.ts";
import { NON_DETERMINISTIC_FIELDS } from "../journal/hash.ts";
import { convertibleNumberEnd, literalAt } from "../pyjson/bytes.ts";
import type { DiffRules } from "./diff-rules.ts";

/**
 * The byte-level half of `replay diff`'s fast path: one journal line read
 * as a JSON object without building a value, its top-level members located
 * and classified by what the diff rules do with them.
 *
 * The scanner accepts a strict subset of what Python's reader takes
 * (`{` first, `}` last, printable ASCII only, spaces and tabs between
 * tokens, standard JSON escapes, NaN/Infinity, bounded depth, top-level keys
 * without escapes); anything else is refused and the line takes the exact
 * reader. What it accepts, Python reads as the same object: so two members
 * whose bytes are equal hold equal values, which is all the fast path
 * relies on to call two rows equal.
 */

/** Top-level members of a row the scanner takes. */
export const MAX_MEMBERS = 1024;


/** The end (past the closing quote) of the string whose content starts at p, or -1. */
function stringEnd(b: Uint8Array, dv: DataView, p: number): number {
  for (;;) {
    p = skipPlain(b, dv, p);
    const c = b[p];
    if (c === QUOTE) return p + 1;
    if (c !== BACKSLASH) return -1; // a control byte (the line end included) or non-ASCII
    const d = b[p + 1]!;
    if (SHORT_ESCAPE_VALUE[d]! >= 0) p += 2;
    else if (d === 0x75 && hex4(b, p + 2) >= 0) p += 6;
    else return -1;
  }
}

/** A literal (true, false, null, NaN, Infinity, -Infinity) or a number Python converts at p: its end, or -1. */
function atomEnd(b: Uint8Array, p: number): number {
  const word = literalAt(b, p);
  return word !== null ? p + word.length : convertibleNumberEnd(b, p);
}

/** The end of the value at p, or -1 (refused). */
function valueEnd(b: Uint8Array, dv: DataView, p: number, depth: number): number {
  const c = b[p];
  if (c === QUOTE) return stringEnd(b, dv, p + 1);
  if (c === LBRACE || c === LBRACKET) {
    if (depth >= MAX_DEPTH) return -1;
    const close = c === LBRACE ? RBRACE : RBRACKET;
    p = skipBlanks(b, p + 1);
    if (b[p] === close) return p + 1;
    for (;;) {
      if (c === LBRACE) {
        if (b[p] !== QUOTE) return -1;
        p = stringEnd(b, dv, p + 1);
        if (p < 0) return -1;
        p = skipBlanks(b, p);
        if (b[p] !== COLON) return -1;
        p = skipBlanks(b, p + 1);
      }
      p = valueEnd(b, dv, p, depth + 1);
      if (p < 0) return -1;
      p = skipBlanks(b, p);
      const d = b[p];
      if (d === close) return p + 1;
      if (d !== COMMA) return -1;
      p = skipBlanks(b, p + 1);
    }
  }
  return atomEnd(b, p);
}

/** What the rules do with a top-level key (one entry per key the rules or the hash name). */
export interface KeyRole {
  bytes: Uint8Array;
  /** A clock or chain field: never compared. */
  excluded: boolean;
  event: boolean;
  /** Index in `rules.ignored` of this key as a whole path, or -1. */
  ignored: number;
  /** Index in `rules.aligned`, or -1. */
  aligned: number;
  /** Indices in `rules.ignored` of the dotted paths under this key that can remove something (see DiffPlan). */
  dotted: number[];
  /** The fast path reads this key's value (event, aligned, dotted): it must occur once. */
  inspected: boolean;
}

/**
 * The rules as byte-level lookups: the role of each key they name, and the
 * segments of each dotted path.
 */
export class DiffPlan {
  /** Roles by key length; class ids are index + 1 (0: a plain member). */
  readonly roles: KeyRole[] = [];
  private readonly byLength: number[][] = [];
  /**
   * Role candidates by (length, first byte, last byte) of a key: 0 none (a
   * plain member, the common case, decided by one probe), a class id, or -1
   * (several: look them up by length).
   */
  private readonly probe = new Int32Array(1 << 15);
  /** Segment bytes of each ignored path (a single-segment path too). */
  readonly segments: Uint8Array[][];

  constructor(readonly rules: DiffRules) {
    const enc = new TextEncoder();
    const role = (key: string): KeyRole => {
      let r = this.roles.find((x) => x.bytes.length === enc.encode(key).length && Buffer.from(x.bytes).toString("utf8") === key);
      if (!r) {
        r = { bytes: enc.encode(key), excluded: false, event: false, ignored: -1, aligned: -1, dotted: [], inspected: false };
        this.roles.push(r);
      }
      return r;
    };
    for (const f of NON_DETERMINISTIC_FIELDS) role(f).excluded = true;
    role("event").event = true;
    const paths = rules.ignored.map((p) => p.split("."));
    this.segments = paths.map((segs) => segs.map((x) => enc.encode(x)));
    paths.forEach((segs, k) => {
      if (segs.length === 1) role(segs[0]!).ignored = k;
      // A path under an earlier ignored path never removes anything: that one took its whole subtree first.
      else if (!paths.slice(0, k).some((q) => q.length < segs.length && q.every((x, j) => x === segs[j]))) role(segs[0]!).dotted.push(k);
    });
    rules.aligned.forEach((f, k) => (role(f).aligned = k));
    for (const r of this.roles) r.inspected = r.event || r.aligned >= 0 || r.dotted.length > 0;
    this.roles.forEach((r, i) => {
      (this.byLength[r.bytes.length] ??= []).push(i + 1);
      const k = r.bytes.length === 0 ? 0 : probeKey(r.bytes, 0, r.bytes.length);
      this.probe[k] = this.probe[k] === 0 ? i + 1 : -1;
    });
  }

  /** The class of key bytes b[s, e) (no escapes): 0 for a plain member, else a role's index + 1. */
  classify(b: Uint8Array, s: number, e: number): number {
    const hint = s === e ? this.probe[0]! : this.probe[probeKey(b, s, e)]!;
    if (hint === 0) return 0;
    if (hint > 0) {
      const k = this.roles[hint - 1]!.bytes;
      if (k.length !== e - s) return 0;
      for (let i = 0; i < k.length; i++) if (b[s + i] !== k[i]) return 0;
      return hint;
    }
    const ids = this.byLength[e - s];
    if (ids === undefined) return 0;
    for (const id of ids) {
      const k = this.roles[id - 1]!.bytes;
      let i = 0;
      while (i < k.length && b[s + i] === k[i]) i++;
      if (i === k.length) return id;
    }
    return 0;
  }
}

function probeKey(b: Uint8Array, s: number, e: number): number {
  return ((e - s) & 31) | ((b[s]! & 31) << 5) | ((b[e - 1]! & 31) << 10);
}

/** One scanned row: its members' spans and classes in a reusable table. */
export class RowScan {
  /** Key content (between the quotes) and value spans of the top-level members, in row order. */
  readonly keyS = new Int32Array(MAX_MEMBERS);
  readonly keyE = new Int32Array(MAX_MEMBERS);
  readonly valS = new Int32Array(MAX_MEMBERS);
  readonly valE = new Int32Array(MAX_MEMBERS);
  readonly cls = new Int32Array(MAX_MEMBERS);
  n = 0;
  /** The event member's value (a string token, quotes included), or -1. */
  eventS = -1;
  eventE = -1;
  /** The row each role last occurred in (a serial number): a repeat in the same row is a repeated key. */
  private readonly lastRow: Float64Array;
  private serial = 0;
  /** A role the rules look into occurred twice in this row. */
  private repeated = false;

  constructor(readonly plan: DiffPlan) {
    this.lastRow = new Float64Array(plan.roles.length + 1);
  }

  /**
   * Scan the line b[s, e) (b[e] is a line terminator or sentinel; the 3
   * bytes after it may be read). False: refused, the exact reader decides.
   */
  scan(b: Uint8Array, dv: DataView, s: number, e: number): boolean {
    if (b[s] !== LBRACE || b[e - 1] !== RBRACE) return false;
    const lastRow = this.lastRow;
    const serial = ++this.serial;
    this.repeated = false;
    this.eventS = -1;
    let n = 0;
    let p = skipBlanks(b, s + 1);
    if (b[p] !== RBRACE) {
      const keyS = this.keyS;
      const keyE = this.keyE;
      const plan = this.plan;
      for (;;) {
        if (b[p] !== QUOTE || n === MAX_MEMBERS) return false;
        // a top-level key is plain ASCII up to its quote: an escaped one may spell a key the rules name
        const ks = p + 1;
        const ke = skipPlain(b, dv, ks);
        if (b[ke] !== QUOTE) return false;
        keyS[n] = ks;
        keyE[n] = ke;
        p = ke + 1;
        if (b[p] !== COLON) p = skipBlanks(b, p);
        if (b[p] !== COLON) return false;
        p = skipBlanks(b, p + 1);
        let ve: number;
        if (b[p] === QUOTE) {
          ve = skipPlain(b, dv, p + 1);
          ve = b[ve] === QUOTE ? ve + 1 : stringEnd(b, dv, ve);
        } else {
          ve = valueEnd(b, dv, p, 1);
        }
        if (ve < 0) return false;
        this.valS[n] = p;
        this.valE[n] = ve;
        const c = plan.classify(b, ks, ke);
        this.cls[n] = c;
        if (c !== 0) {
          const r = plan.roles[c - 1]!;
          if (lastRow[c] === serial && r.inspected) this.repeated = true;
          lastRow[c] = serial;
          if (r.event) {
            this.eventS = b[p] === QUOTE ? p : -2;
            this.eventE = ve;
          }
        }
        n++;
        p = ve;
        let d = b[p];
        if (d === SPACE || d === TAB) d = b[(p = skipBlanks(b, p))];
        if (d === COMMA) {
          p = skipBlanks(b, p + 1);
          continue;
        }
        if (d !== RBRACE) return false;
        break;
      }
    }
    if (p !== e - 1) return false;
    this.n = n;
    // A repeated key whose value the rules look into: dict semantics (last value wins) is the exact path's
    return !this.repeated;
  }
}

/**
 * Whether the ignored path `segs` (from segment `d`) reaches a member in
 * the value at p: 1 yes, 0 no, -1 cannot tell here (an escaped key on the
 * way). As the exact rules walk it: through objects by key (the last of
 * repeated keys), through arrays into every element.
 */
export function pathReaches(b: Uint8Array, dv: DataView, p: number, segs: readonly Uint8Array[], d: number): number {
  const c = b[p];
  if (c === LBRACKET) {
    p = skipBlanks(b, p + 1);
    if (b[p] === RBRACKET) return 0;
    for (;;) {
      const r = pathReaches(b, dv, p, segs, d);
      if (r !== 0) return r;
      p = skipBlanks(b, valueEnd(b, dv, p, 0));
      if (b[p] !== COMMA) return 0;
      p = skipBlanks(b, p + 1);
    }
  }
  if (c !== LBRACE) return 0;
  const seg = segs[d]!;
  const last = d === segs.length - 1;
  let inner = -1;
  p = skipBlanks(b, p + 1);
  if (b[p] === RBRACE) return 0;
  for (;;) {
    const ke = skipPlain(b, dv, p + 1) + 1;
    if (b[ke - 1] !== QUOTE) return -1; // an escaped key: the exact path reads it
    const hit = ke - p - 2 === seg.length && seg.every((x, i) => b[p + 1 + i] === x);
    p = skipBlanks(b, skipBlanks(b, ke) + 1);
    if (hit) {
      if (last) return 1;
      inner = p;
    }
    p = skipBlanks(b, valueEnd(b, dv, p, 0));
    if (b[p] !== COMMA) break;
    p = skipBlanks(b, p + 1);
  }
  return inner < 0 ? 0 : pathReaches(b, dv, inner, segs, d + 1);
}
