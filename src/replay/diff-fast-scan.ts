import { indexObjectAt, KeyTable, RowIndex, Spell, Tok } from "../codec/row-index.ts";
import { NON_DETERMINISTIC_FIELDS } from "../journal/hash.ts";
import type { DiffRules } from "./diff-rules.ts";

/**
 * The byte-level half of `replay diff`'s fast path: one journal line read
 * through the codec's row index (src/codec/row-index.ts), its top-level
 * members classified by what the diff rules do with them.
 *
 * The index takes what Python's reader reads, minus what the codec
 * declines; this half also declines a row with a repeated key the rules
 * name (json.loads keeps the last: the exact path's dict semantics), and
 * one with an escaped key where an escape may spell a name the rules give
 * (DiffPlan.escapesMaySpellName). Every
 * other line the index declines takes the exact reader. What the index
 * takes, Python reads as the same object: so two members whose bytes are
 * equal hold equal values, which is all the fast path relies on to call
 * two rows equal.
 */

/** Top-level members of a row the fast path takes. */
export const MAX_MEMBERS = 1024;

/** What the rules do with a top-level key (one entry per key the rules or the hash name). */
export interface KeyRole {
  name: string;
  /** A clock or chain field: never compared. */
  excluded: boolean;
  event: boolean;
  /** Index in `rules.ignored` of this key as a whole path, or -1. */
  ignored: number;
  /** Index in `rules.aligned`, or -1. */
  aligned: number;
  /** Indices in `rules.ignored` of the dotted paths under this key that can remove something (see DiffPlan). */
  dotted: number[];
}

/**
 * The rules as byte-level lookups: the role of each key they name (as the
 * codec's key table, so a member's class is its key id) and the segments
 * of each dotted path.
 */
export class DiffPlan {
  /** Roles; class ids are index + 1 (0: a plain member), the ids of `keys`. */
  readonly roles: KeyRole[] = [];
  /**
   * The roles' names as the index's key table; null when the rules name
   * more keys than a key table holds (every row then takes the exact path).
   */
  readonly keys: KeyTable | null;
  /** Segment bytes of each ignored path (a single-segment path too). */
  readonly segments: Uint8Array[][];
  /**
   * Every name the rules give (keys, path segments) is printable ASCII with
   * no quote or backslash: one Python never escapes, so a key it spelled
   * with an escape is none of them.
   */
  private readonly plainNames: boolean;

  constructor(readonly rules: DiffRules) {
    const enc = new TextEncoder();
    const role = (name: string): KeyRole => {
      let r = this.roles.find((x) => x.name === name);
      if (!r) {
        r = { name, excluded: false, event: false, ignored: -1, aligned: -1, dotted: [] };
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
    this.keys = this.roles.length < KeyTable.MAX_NAMES ? new KeyTable(this.roles.map((r) => r.name)) : null;
    this.plainNames = [...this.roles.map((r) => r.name), ...paths.flat()].every((x) => /^[\x20-\x7e]*$/.test(x) && !/["\\]/.test(x));
  }

  /**
   * Whether an escaped key of the indexed row may spell a name the rules
   * give, the names being matched by their bytes: where a name holds a
   * character Python escapes, or where the row holds a spelling Python
   * never writes (`\u0061` for `a`). Python spells each other string one
   * way, so an escaped key is then no name of theirs.
   */
  escapesMaySpellName(ix: RowIndex): boolean {
    return !this.plainNames || (ix.rowFlags & Spell.NotPython) !== 0;
  }
}

/**
 * One indexed row: its members as the index holds them (member m's class is
 * its key id, `ix.keyId[m]`), and its event token.
 */
export class RowScan {
  readonly ix = new RowIndex();
  n = 0;
  /** The event member's value (a string token, quotes included), or -1; -2 when it is not a string. */
  eventS = -1;
  eventE = -1;
  private readonly eventId: number;

  constructor(readonly plan: DiffPlan) {
    this.eventId = plan.roles.findIndex((r) => r.event) + 1;
  }

  /** Member m's key start (its opening quote). */
  keyStart(m: number): number {
    return this.ix.start(this.ix.member[m]!);
  }

  /** Member m's value token on the tape. */
  valueTok(m: number): number {
    return this.ix.member[m]! + 1;
  }

  /** The end of member m's value. */
  valueEnd(m: number): number {
    return this.ix.end(this.ix.member[m]! + 1);
  }

  /** Index the line b[s, e) as one object, nothing around it. False: declined, the exact reader decides. */
  scan(b: Uint8Array, s: number, e: number): boolean {
    const keys = this.plan.keys;
    const ix = this.ix;
    // a top-level tape for a huge row: its containers are then one token each, which
    // the rules that look inside (pathReaches, an aligned list) hand to the exact path
    if (keys === null || indexObjectAt(b, s, e, ix, keys, true) !== e || ix.repeatedName) return false;
    const n = ix.members;
    if (n > MAX_MEMBERS) return false;
    if (this.plan.escapesMaySpellName(ix)) for (let m = 0; m < n; m++) if ((ix.flags(ix.member[m]!) & Spell.Escaped) !== 0) return false;
    this.n = n;
    const ev = ix.valueOf(this.eventId);
    if (ev < 0) this.eventS = -1;
    else if (ix.kind(ev) !== Tok.String) this.eventS = -2;
    else {
      this.eventS = ix.start(ev);
      this.eventE = ix.end(ev);
    }
    return true;
  }
}

/** A container whose inside is not on the tape (a top-level tape's value). */
export function collapsed(ix: RowIndex, t: number): boolean {
  return ix.topLevel && (ix.kind(t) === Tok.Object || ix.kind(t) === Tok.Array);
}

/**
 * Whether the ignored path `segs` (from segment `d`) reaches a member in
 * the value at tape position t: 1 yes, 0 no, -1 cannot tell here (an
 * escaped key on the way where `escapes` says one may spell a segment, or a
 * container whose inside is not on the tape). As the exact rules walk it:
 * through objects by key (the last of repeated keys), through arrays into
 * every element.
 */
export function pathReaches(ix: RowIndex, t: number, segs: readonly Uint8Array[], d: number, escapes: boolean): number {
  if (collapsed(ix, t)) return -1;
  const kind = ix.kind(t);
  const end = ix.next(t);
  if (kind === Tok.Array) {
    for (let c = t + 1; c < end; c = ix.next(c)) {
      const r = pathReaches(ix, c, segs, d, escapes);
      if (r !== 0) return r;
    }
    return 0;
  }
  if (kind !== Tok.Object) return 0;
  const b = ix.buf;
  const seg = segs[d]!;
  const last = d === segs.length - 1;
  let inner = -1;
  for (let k = t + 1; k < end; k = ix.next(k + 1)) {
    if (escapes && (ix.flags(k) & Spell.Escaped) !== 0) return -1; // the exact path reads an escaped key
    const ks = ix.start(k) + 1;
    const hit = ix.end(k) - 1 - ks === seg.length && seg.every((x, i) => b[ks + i] === x);
    if (hit) {
      if (last) return 1;
      inner = k + 1;
    }
  }
  return inner < 0 ? 0 : pathReaches(ix, inner, segs, d + 1, escapes);
}
