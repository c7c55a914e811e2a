import { indexObjectAt, NOT_COMPACT_CANONICAL, RowIndex, Spell, Tok } from "../codec/row-index.ts";
import { RUN_ROW_KEYS, RunKey } from "../journal/row-keys.ts";

/**
 * A journal row of a receipt Python wrote is already canonical (CJ: sorted
 * keys, no whitespace, ASCII escapes, Python's number spelling). For such a
 * row the canonical text is its own bytes and the payload pre-image is
 * those bytes without the envelope members, so neither a value tree nor a
 * re-serialisation is needed. `canonicalRow` reads the codec's index of the
 * row and returns null for anything not in that form (an escaped key, a
 * non-canonical number, whitespace, a `hash_profile`, …): the caller
 * then takes the exact path (py-json parse and re-serialisation), which
 * decides every case.
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

const ENDPOINT_PREFIX = new TextEncoder().encode("endpoint_");
/** Spellings this reader does not take: anything not CJ (NaN and Infinity are CJ: Python's writer allows them, spelled as read). */
const DECLINE = NOT_COMPACT_CANONICAL;

const ix = new RowIndex();
/** Bytes of the window a row is first looked for in (most rows are shorter). */
const FIRST_LOOK = 4096;
const ascii = new TextDecoder();

/** The row at the start of `b` in canonical form, or null when it is not (see the module comment). */
export function canonicalRow(b: Uint8Array): CanonicalRow | null {
  // the module's scanner copies in what it may read: a row is first looked for in the window's start
  let end = b.length > FIRST_LOOK ? indexObjectAt(b, 0, FIRST_LOOK, ix, RUN_ROW_KEYS) : -1;
  if (end < 0) end = indexObjectAt(b, 0, b.length, ix, RUN_ROW_KEYS);
  if (end < 0 || (ix.spelling(0) & DECLINE) !== 0 || ix.slot[RunKey.HashProfile]! >= 0) return null;
  const event = plainString(RunKey.Event);
  const prev = plainString(RunKey.PrevHash);
  const hash = plainString(RunKey.EventHash);
  if (event < 0 || prev < 0 || hash < 0) return null;
  // Offsets index the text too: the row is ASCII.
  const text = ascii.decode(b.subarray(0, end));
  const cut = (t: number) => text.slice(ix.start(t) + 1, ix.end(t) - 1);
  let payload = "{";
  let runStart = -1;
  let runEnd = -1;
  const endpoint = new Map<string, string | null | undefined>();
  for (let m = 0; m < ix.members; m++) {
    const k = ix.member[m]!;
    const id = ix.keyId[m]!;
    const v = k + 1;
    if (id === 0 && isEndpointKey(b, ix.start(k) + 1, ix.end(k) - 1)) {
      const kind = ix.kind(v);
      endpoint.set(text.slice(ix.start(k) + 1, ix.end(k) - 1), kind !== Tok.String ? null : ix.flags(v) & Spell.Escaped ? undefined : cut(v));
    }
    if (id === RunKey.PrevHash || id === RunKey.EventHash || id >= RunKey.FirstEnvelopeOnly) continue;
    // Adjacent kept members (only a comma between) are copied as one run.
    if (runEnd >= 0 && runEnd + 1 === ix.start(k)) {
      runEnd = ix.end(v);
      continue;
    }
    if (runEnd >= 0) payload += (payload.length > 1 ? "," : "") + text.slice(runStart, runEnd);
    runStart = ix.start(k);
    runEnd = ix.end(v);
  }
  if (runEnd >= 0) payload += (payload.length > 1 ? "," : "") + text.slice(runStart, runEnd);
  return { eventType: cut(event), prevHash: cut(prev), eventHash: cut(hash), payload: payload + "}", text, end, endpoint };
}

/** Tape position of the named member's value when it is a string without escapes, else -1. */
function plainString(id: number): number {
  const v = ix.valueOf(id);
  return v >= 0 && ix.kind(v) === Tok.String && (ix.flags(v) & Spell.Escaped) === 0 ? v : -1;
}

function isEndpointKey(b: Uint8Array, s: number, e: number): boolean {
  if (e - s < ENDPOINT_PREFIX.length) return false;
  for (let k = 0; k < ENDPOINT_PREFIX.length; k++) if (b[s + k] !== ENDPOINT_PREFIX[k]) return false;
  return true;
}
