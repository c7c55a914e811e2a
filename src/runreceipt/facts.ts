import { canonical } from "../pyjson/encode.ts";
import { pyStr } from "../pyjson/python.ts";
import type { PyObject, PyValue } from "../pyjson/types.ts";
import { copyTo, KeptSpan, spanIs } from "../codec/bytes.ts";
import { EventChainWalker } from "../journal/chain.ts";
import { writeDecimal, writeHex } from "../journal/fast/record-hasher.ts";
import { canonicalRow, type CanonicalRow } from "./fastrow.ts";
import { ENDPOINT_EVENT, EndpointSet, EXTENSIONS_EVENT, extensionsOf } from "./binding.ts";
import type { ReceiptVisitor } from "./scan.ts";
import { SpineWalker } from "./spine.ts";

/**
 * What one streaming pass learns about a receipt: the small top-level
 * values and, per block, the walks over its list. The verdict is decided
 * afterwards from these facts in the order of spec §1.9, so reading the
 * file in its own key order changes nothing.
 */

export const AUDIT_GENESIS = "0".repeat(64);

/** A block's state: absent, present but not an object, or an object. */
interface BlockBase {
  /** The block key was present. */
  present: boolean;
  /** Its value was an object. */
  isObject: boolean;
  /** Members other than the list (head_hash, event_count, since, …). */
  members: Map<string, PyValue>;
  /** The list member was present and a list. */
  listOk: boolean;
  /** Elements seen. */
  count: number;
  /** Index of the first element that is not an object, or -1. */
  firstNonObject: number;
}

function freshBase(present: boolean, isObject: boolean): BlockBase {
  return { present, isObject, members: new Map(), listOk: false, count: 0, firstNonObject: -1 };
}

export interface JournalFacts extends BlockBase {
  walker: EventChainWalker;
  /** The last row's event_hash (read after `ReceiptFacts.settle`: rows the fast reader took leave it in `lastHash`). */
  lastEventHash: PyValue | undefined;
  /** The last fast row's event_hash, as bytes, until a string is needed (one string per receipt, not one per row). */
  lastHash: PendingHash;
  endpoints: EndpointSet;
  extensions: PyValue[] | null;
  toolCalls: number;
}

export interface SpineFacts extends BlockBase {
  walker: SpineWalker;
}

export interface AuditFacts extends BlockBase {
  hasher: Bun.CryptoHasher;
  /** First broken `prev_hmac` link (bernstein-mcp's linkage check), or null. */
  linkError: string | null;
  lastHmac: PyValue | undefined;
}

function freshJournal(present = false, isObject = false): JournalFacts {
  return { ...freshBase(present, isObject), walker: new EventChainWalker(), lastEventHash: undefined, lastHash: new PendingHash(), endpoints: new EndpointSet(), extensions: null, toolCalls: 0 };
}
function freshSpine(present = false, isObject = false): SpineFacts {
  return { ...freshBase(present, isObject), walker: new SpineWalker() };
}
function freshAudit(present = false, isObject = false): AuditFacts {
  return { ...freshBase(present, isObject), hasher: new Bun.CryptoHasher("sha256"), linkError: null, lastHmac: undefined };
}

export class ReceiptFacts implements ReceiptVisitor {
  /** Small top-level members (run_id, receipt_type, schema_version, hash_profile, subject, signing, producer, …). */
  readonly values = new Map<string, PyValue>();
  journal = freshJournal();
  spine = freshSpine();
  audit = freshAudit();
  /** The audit block's value when it is present but not an object (null counts as absent). */
  auditValue: PyValue | undefined = undefined;

  // ReceiptVisitor
  top(key: string, value: PyValue): void {
    // A block key holding something other than an object replaces any earlier block (last wins).
    if (key === "journal") this.journal = freshJournal(true, false);
    else if (key === "spine") this.spine = freshSpine(true, false);
    else if (key === "audit_range") {
      this.audit = freshAudit(value !== null, false);
      this.auditValue = value;
    } else this.values.set(key, value);
  }

  open(block: string): void {
    if (block === "journal") this.journal = freshJournal(true, true);
    else if (block === "spine") this.spine = freshSpine(true, true);
    else {
      this.audit = freshAudit(true, true);
      this.auditValue = undefined;
    }
  }

  member(block: string, key: string, value: PyValue): void {
    const b = this.block(block);
    b.members.set(key, value);
    // The list key holding a non-list: the block has no usable list (last wins).
    if (key === (block === "spine" ? "entries" : "events")) this.resetList(block, false);
  }

  openList(block: string): void {
    this.resetList(block, true);
  }

  private resetList(block: string, ok: boolean): void {
    const members = this.block(block).members;
    if (block === "journal") this.journal = { ...freshJournal(true, true), members };
    else if (block === "spine") this.spine = { ...freshSpine(true, true), members };
    else this.audit = { ...freshAudit(true, true), members };
    this.block(block).listOk = ok;
  }

  /**
   * The journal walk's strings from the bytes fast rows left: before an
   * exact row is walked, and once the scan is over (before any fact is read).
   */
  settle(): void {
    const j = this.journal;
    if (!j.lastHash.pending) return;
    const hash = j.lastHash.text();
    j.lastEventHash = hash;
    if (j.walker.divergence === null) j.walker.prefixHead = hash;
  }

  private block(block: string): BlockBase {
    return block === "journal" ? this.journal : block === "spine" ? this.spine : this.audit;
  }

  element(block: string, value: PyValue): void {
    const b = this.block(block);
    const i = b.count++;
    const isObj = value instanceof Map;
    if (!isObj && b.firstNonObject < 0) b.firstNonObject = i;
    if (block === "journal") this.journalRow(value, isObj);
    else if (block === "spine") {
      if (isObj && this.spine.firstNonObject < 0) this.spine.walker.push(value as PyObject);
    } else this.auditEvent(value, i, isObj);
  }

  /**
   * A journal row at the start of `bytes`: taken without a value tree when
   * it is in canonical form (fastrow.ts) and needs no field beyond the
   * chain's. Returns its end (its bytes are its canonical text), or -1 to
   * send it to the parsed path.
   */
  rawJournalRow(b: Uint8Array, s: number, limit: number): number {
    const j = this.journal;
    if (j.firstNonObject >= 0) return -1;
    const r = canonicalRow(b, s, limit);
    if (r === null || r.eventIs(LOADED_EXTENSION_SET)) return -1;
    if (r.eventIs(AGENT_SPAWNED)) r.addEndpoint(j.endpoints);
    j.count++;
    this.chain.advance(j, r);
    if (r.eventIs(TOOL_CALL)) j.toolCalls++;
    return r.end;
  }

  /** The chain check of rows the fast reader took. */
  private readonly chain = new ByteChain();

  private journalRow(value: PyValue, isObj: boolean): void {
    const j = this.journal;
    if (!isObj || j.firstNonObject >= 0) return;
    const row = value as PyObject;
    this.settle();
    j.walker.push(row);
    j.lastEventHash = row.get("event_hash");
    j.endpoints.push(row);
    const ext = extensionsOf(row);
    if (ext) j.extensions = ext;
    if (row.get("event") === "tool_call") j.toolCalls++;
  }

  private auditEvent(value: PyValue, i: number, isObj: boolean): void {
    const a = this.audit;
    a.hasher.update(canonical(value) + "\n");
    if (!isObj) return;
    const ev = value as PyObject;
    const prior = i === 0 ? AUDIT_GENESIS : a.lastHmac;
    if (a.linkError === null && (typeof ev.get("prev_hmac") !== "string" || ev.get("prev_hmac") !== prior)) {
      a.linkError = `event ${i}: prev_hmac != prior hmac`;
    }
    a.lastHmac = ev.get("hmac");
  }
}

const enc = new TextEncoder();
const AGENT_SPAWNED = enc.encode(ENDPOINT_EVENT);
const LOADED_EXTENSION_SET = enc.encode(EXTENSIONS_EVENT);
const TOOL_CALL = enc.encode("tool_call");
const EH_TYPE = enc.encode('{"event_type":"');
const EH_INDEX = enc.encode('","index":');
const EH_PAYLOAD = enc.encode(',"payload_hash":"');
const EH_PREV = enc.encode('","prev_hash":"');

/** An event_hash's bytes kept from a row, made a string only when read (`pending`: newer than the strings). */
class PendingHash extends KeptSpan {
  pending = false;

  override keep(b: Uint8Array, s: number, e: number): void {
    super.keep(b, s, e);
    this.pending = true;
  }

  override text(): string {
    this.pending = false;
    return super.text();
  }
}

/**
 * EventChainWalker.push for a row the fast reader took (same rule, same
 * messages), from its bytes: the payload pre-image and the event
 * pre-image (journal/hash.ts eventPreimage: all three strings are plain
 * ASCII, so it needs no escaping) are hashed into buffers, the digests
 * compared as hex bytes. The head it links to is the last fast row's
 * event_hash bytes while they are pending (else the walker's string), and
 * this row's are kept pending in turn: no string is made per row.
 */
class ByteChain {
  private pre = new Uint8Array(1 << 10);
  private readonly digest = new Uint8Array(32);
  private readonly hex = new Uint8Array(64);
  private readonly hexView = new DataView(this.hex.buffer);
  /** Views by length of the row's payload buffer and of `pre`: hashing takes an exact view, and making one per row shows. */
  private readonly payloadViews = new ViewCache();
  private readonly preViews = new ViewCache();

  advance(j: JournalFacts, r: CanonicalRow): void {
    const w = j.walker;
    const i = w.count++;
    const last = j.lastHash;
    if (w.divergence !== null) {
      // the walk stopped: what is kept is the last row's event_hash only
      last.keep(r.b, r.hashS, r.hashE);
      return;
    }
    this.hashInto(this.payloadViews.of(r.payload, r.payloadLen));
    const pending = last.pending;
    const head = pending ? "" : w.prefixHead;
    const headLen = pending ? last.len : head.length;
    const need = EH_TYPE.length + (r.eventE - r.eventS) + EH_INDEX.length + 20 + EH_PAYLOAD.length + 64 + EH_PREV.length + headLen + 2;
    if (this.pre.length < need) this.pre = new Uint8Array(2 * need);
    const p = this.pre;
    let o = put(p, 0, EH_TYPE);
    o = copyTo(r.b, r.eventS, r.eventE, p, o);
    o = put(p, o, EH_INDEX);
    o = writeDecimal(p, o, i);
    o = put(p, o, EH_PAYLOAD);
    o = put(p, o, this.hex);
    o = put(p, o, EH_PREV);
    if (pending) o = copyTo(last.bytes, 0, last.len, p, o);
    else for (let k = 0; k < head.length; k++) p[o++] = head.charCodeAt(k);
    p[o++] = 0x22;
    p[o++] = 0x7d;
    this.hashInto(this.preViews.of(p, o));
    const prevOk = pending ? last.equals(r.b, r.prevS, r.prevE) : sameText(r.b, r.prevS, r.prevE, head);
    const hashOk = spanIs(r.b, r.hashS, r.hashE, this.hex);
    if (!(prevOk && hashOk)) {
      // the walker's head is the last row that linked
      if (pending) w.prefixHead = last.text();
      const expected = new TextDecoder().decode(this.hex);
      w.divergence = { index: i, expected, actual: r.eventHash, error: `step ${i}: ${prevOk ? "event_hash mismatch" : "prev_hash break"}` };
    }
    last.keep(r.b, r.hashS, r.hashE);
  }

  /** SHA-256 of `v` into `digest`, its lowercase hex into `hex`. */
  private hashInto(v: Uint8Array): void {
    Bun.SHA256.hash(v, this.digest);
    writeHex(this.hexView, 0, this.digest);
  }
}

/** Views b[0, n) of one buffer, made once per length (forgotten when the buffer is another). */
class ViewCache {
  private buf: Uint8Array | null = null;
  private readonly views: (Uint8Array | undefined)[] = [];

  of(b: Uint8Array, n: number): Uint8Array {
    if (n >= 1 << 14) return b.subarray(0, n);
    if (this.buf !== b) {
      this.buf = b;
      this.views.length = 0;
    }
    let v = this.views[n];
    if (v === undefined) {
      v = b.subarray(0, n);
      this.views[n] = v;
    }
    return v;
  }
}

function put(p: Uint8Array, o: number, bytes: Uint8Array): number {
  return copyTo(bytes, 0, bytes.length, p, o);
}

function sameText(b: Uint8Array, s: number, e: number, t: string): boolean {
  if (e - s !== t.length) return false;
  for (let k = 0; k < t.length; k++) if (b[s + k] !== t.charCodeAt(k)) return false;
  return true;
}

/** `str()` of a member, with a missing one read as `""`. */
export function memberStr(m: Map<string, PyValue>, key: string): string {
  return pyStr(m.get(key), "");
}
