import { canonical } from "../pyjson/encode.ts";
import { pyStr } from "../pyjson/python.ts";
import type { PyObject, PyValue } from "../pyjson/types.ts";
import { EventChainWalker } from "../journal/chain.ts";
import { canonicalRow, type CanonicalRow } from "./fastrow.ts";
import { EndpointSet, extensionsOf } from "./binding.ts";
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
  lastEventHash: PyValue | undefined;
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
  return { ...freshBase(present, isObject), walker: new EventChainWalker(), lastEventHash: undefined, endpoints: new EndpointSet(), extensions: null, toolCalls: 0 };
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
   * chain's. Returns its length and text, or null to send it to the parsed path.
   */
  rawJournalRow(bytes: Uint8Array): { end: number; text: string } | null {
    const j = this.journal;
    if (j.firstNonObject >= 0) return null;
    const r = canonicalRow(bytes);
    if (r === null || r.eventType === "loaded_extension_set") return null;
    if (r.eventType === "agent_spawned") {
      if ([...r.endpoint.values()].includes(undefined)) return null;
      j.endpoints.push(new Map<string, PyValue>([["event", r.eventType], ...(r.endpoint as Map<string, string | null>)]));
    }
    j.count++;
    advance(j.walker, r);
    j.lastEventHash = r.eventHash;
    if (r.eventType === "tool_call") j.toolCalls++;
    return r;
  }

  private journalRow(value: PyValue, isObj: boolean): void {
    const j = this.journal;
    if (!isObj || j.firstNonObject >= 0) return;
    const row = value as PyObject;
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

/** EventChainWalker.push for a row whose payload pre-image is already known (same rule, same messages). */
function advance(w: EventChainWalker, r: CanonicalRow): void {
  const i = w.count++;
  if (w.divergence !== null) return;
  // All three strings are plain ASCII (fastrow.ts), so the pre-image needs no escaping (journal/hash.ts eventPreimage).
  const pre = `{"event_type":"${r.eventType}","index":${i},"payload_hash":"${Bun.SHA256.hash(r.payload, "hex") as string}","prev_hash":"${w.prefixHead}"}`;
  const expected = Bun.SHA256.hash(pre, "hex") as string;
  const broken = r.prevHash !== w.prefixHead ? "prev_hash break" : r.eventHash !== expected ? "event_hash mismatch" : null;
  if (broken === null) w.prefixHead = r.eventHash;
  else w.divergence = { index: i, expected, actual: r.eventHash, error: `step ${i}: ${broken}` };
}

/** `str()` of a member, with a missing one read as `""`. */
export function memberStr(m: Map<string, PyValue>, key: string): string {
  return pyStr(m.get(key), "");
}
