import { asciiText, copyTo, spanIs } from "../codec/bytes.ts";
import { indexObjectAt, KeyTable, NOT_COMPACT_CANONICAL, RowIndex, Spell, Tok } from "../codec/row-index.ts";
import { RUN_ROW_KEY_NAMES, RunKey } from "../journal/row-keys.ts";
import { ENDPOINT_KEYS, type EndpointSet } from "./binding.ts";

/**
 * A journal row of a receipt Python wrote is already canonical (CJ: sorted
 * keys, no whitespace, ASCII escapes, Python's number spelling). For such a
 * row the canonical text is its own bytes and the payload pre-image is
 * those bytes without the envelope members, so neither a value tree nor a
 * re-serialisation is needed. `canonicalRow` reads the codec's index of the
 * row and returns null for anything not in that form (raw UTF-8, a
 * non-canonical number, whitespace, a `hash_profile`, …): the caller
 * then takes the exact path (py-json parse and re-serialisation), which
 * decides every case.
 *
 * What it finds stays bytes: spans of the row, and the payload pre-image
 * written into `payload` (the chain is checked from them, facts.ts); the
 * text getters are for a caller that wants strings (and the tests).
 */
/** Where a row's links lie in the bytes it was read from: the bodies of its `prev_hash` and `event_hash` strings. */
export class RowLinks {
  prevS = 0;
  prevE = 0;
  hashS = 0;
  hashE = 0;

  /** The bodies of the string tokens `prev` and `hash` of `ix`'s tape. */
  setLinks(ix: RowIndex, prev: number, hash: number): void {
    this.prevS = ix.start(prev) + 1;
    this.prevE = ix.end(prev) - 1;
    this.hashS = ix.start(hash) + 1;
    this.hashE = ix.end(hash) - 1;
  }
}

export class CanonicalRow extends RowLinks {
  /** The row is b[start, end), as given to canonicalRow. */
  b: Uint8Array = new Uint8Array(0);
  start = 0;
  end = 0;
  /** The body of `event` (a plain string: no escapes) in b; the links' too. */
  eventS = 0;
  eventE = 0;
  /** The payload pre-image (spec run-journal §1.4: the row without its envelope members) is payload[0, payloadLen). */
  payload = new Uint8Array(1 << 12);
  payloadLen = 0;

  get eventType(): string {
    return asciiText(this.b, this.eventS, this.eventE);
  }
  get prevHash(): string {
    return asciiText(this.b, this.prevS, this.prevE);
  }
  get eventHash(): string {
    return asciiText(this.b, this.hashS, this.hashE);
  }
  get payloadText(): string {
    return asciiText(this.payload, 0, this.payloadLen);
  }

  /** An `agent_spawned` row's endpoint into `set` (EndpointSet.push). */
  addEndpoint(set: EndpointSet): void {
    set.addIndexed(ix, this.b, ENDPOINT);
  }

  /** The event is the string `name`'s bytes. */
  eventIs(name: Uint8Array): boolean {
    return spanIs(this.b, this.eventS, this.eventE, name);
  }
}

/** The run row's named keys, then the endpoint members. */
const KEYS = new KeyTable([...RUN_ROW_KEY_NAMES, ...ENDPOINT_KEYS]);
/** The last envelope member's id, and the first endpoint member's. */
const LAST_ENVELOPE = RUN_ROW_KEY_NAMES.length;
const ENDPOINT = LAST_ENVELOPE + 1;
/** Spellings this reader does not take: anything not CJ (NaN and Infinity are CJ: Python's writer allows them, spelled as read). */
const DECLINE = NOT_COMPACT_CANONICAL;

const ix = new RowIndex();
/** Bytes of the window a row is first looked for in (most rows are shorter). */
const FIRST_LOOK = 4096;
const row = new CanonicalRow();

/**
 * The row at b[s] (read no further than `limit`) in canonical form (the
 * one reader, valid until the next call; its spans are offsets in b), or
 * null when it is not (see the module comment).
 */
export function canonicalRow(b: Uint8Array, s = 0, limit = b.length): CanonicalRow | null {
  // the module's scanner copies in what it may read: a row is first looked for in the window's start
  let end = limit - s > FIRST_LOOK ? indexObjectAt(b, s, s + FIRST_LOOK, ix, KEYS) : -1;
  if (end < 0) end = indexObjectAt(b, s, limit, ix, KEYS);
  if (end < 0 || (ix.spelling(0) & DECLINE) !== 0 || ix.slot[RunKey.HashProfile]! >= 0) return null;
  const event = plainString(RunKey.Event);
  const prev = plainString(RunKey.PrevHash);
  const hash = plainString(RunKey.EventHash);
  if (event < 0 || prev < 0 || hash < 0) return null;
  const r = row;
  r.b = b;
  r.start = s;
  r.end = end;
  r.eventS = ix.start(event) + 1;
  r.eventE = ix.end(event) - 1;
  r.setLinks(ix, prev, hash);
  // the pre-image is never longer than the row
  if (r.payload.length < end - s) r.payload = new Uint8Array(Math.max(end - s, 2 * r.payload.length));
  const p = r.payload;
  let o = 0;
  p[o++] = 0x7b;
  let runStart = -1;
  let runEnd = -1;
  for (let m = 0; m < ix.members; m++) {
    const k = ix.member[m]!;
    const id = ix.keyId[m]!;
    const v = k + 1;
    if (id === RunKey.PrevHash || id === RunKey.EventHash || (id >= RunKey.FirstEnvelopeOnly && id <= LAST_ENVELOPE)) continue;
    // Adjacent kept members (only a comma between) are copied as one run.
    if (runEnd >= 0 && runEnd + 1 === ix.start(k)) {
      runEnd = ix.end(v);
      continue;
    }
    if (runEnd >= 0) o = copyRun(b, runStart, runEnd, p, o);
    runStart = ix.start(k);
    runEnd = ix.end(v);
  }
  if (runEnd >= 0) o = copyRun(b, runStart, runEnd, p, o);
  p[o++] = 0x7d;
  r.payloadLen = o;
  return r;
}

/** Append the member run b[s, e) to the pre-image at o (after a comma unless it is the first); returns the end. */
function copyRun(b: Uint8Array, s: number, e: number, p: Uint8Array, o: number): number {
  if (o > 1) p[o++] = 0x2c;
  return copyTo(b, s, e, p, o);
}

/** Tape position of the named member's value when it is a string without escapes, else -1. */
function plainString(id: number): number {
  const v = ix.valueOf(id);
  return v >= 0 && ix.kind(v) === Tok.String && (ix.flags(v) & Spell.Escaped) === 0 ? v : -1;
}
