import { canonical, compareCodePoints } from "../pyjson/encode.ts";
import { parse } from "../pyjson/parse.ts";
import { PyNum, type PyValue } from "../pyjson/types.ts";
import { DEFAULT_PROFILE, HASH_PROFILE_FIELD, hashProfile } from "../journal/hash-profiles.ts";
import { spanIs } from "../codec/bytes.ts";
import { NOT_PLAIN_TEXT, type RowIndex, Tok } from "../codec/row-index.ts";

/**
 * The binding block (spec §1.6): what the signature covers, rebuilt by the
 * verifier from recomputed values only, and its DSSE pre-authentication
 * encoding (§1.7).
 */

export const RECEIPT_TYPE = "https://bernstein.run/attestations/run-receipt/v1";
export const PAYLOAD_TYPE = "application/vnd.bernstein.run-receipt+json";
export const SCHEMA_VERSIONS = ["1.0.0", "1.1.0"] as const;
export const CURRENT_SCHEMA = "1.1.0";

export interface Endpoint {
  adapter: string;
  model: string;
  base_url: string;
  profile: string;
}

export interface AuditBinding {
  headSha256: string;
  /** The block's own values, copied when not null (schema 1.1.0 and later). */
  eventCount?: PyValue;
  headHmac?: PyValue;
  since?: PyValue;
  until?: PyValue;
}

export interface BindingInput {
  schemaVersion: string;
  hashProfile: string;
  runId: string;
  journalEventCount: number;
  journalHead: string;
  spineEntryCount: number;
  spineHead: string;
  endpoints: Endpoint[];
  /** The extension list of the last `loaded_extension_set` row, when there is one. */
  extensions: PyValue[] | null;
  audit: AuditBinding | null;
}

const int = (n: number) => new PyNum(String(n), false);

/** The block as an ordered map (the bytes sort its keys anyway). */
export function bindingBlock(b: BindingInput): Map<string, PyValue> {
  const m = new Map<string, PyValue>();
  m.set("journal_event_count", int(b.journalEventCount));
  m.set("journal_head", b.journalHead);
  m.set("run_id", b.runId);
  m.set("spine_entry_count", int(b.spineEntryCount));
  m.set("spine_head", b.spineHead);
  if (b.hashProfile !== DEFAULT_PROFILE.name) m.set(HASH_PROFILE_FIELD, b.hashProfile);
  if (b.endpoints.length) {
    m.set(
      "endpoints",
      b.endpoints.map((e) => new Map<string, PyValue>([["adapter", e.adapter], ["model", e.model], ["base_url", e.base_url], ["profile", e.profile]])),
    );
  }
  if (b.extensions !== null) {
    const set = new Map<string, PyValue>([["schema_version", "1.0.0"], ["entries", b.extensions]]);
    m.set("extension_set_digest", "sha256:" + (Bun.SHA256.hash(canonical(set), "hex") as string));
  }
  if (b.audit) {
    m.set("audit_range_head_sha256", b.audit.headSha256);
    if (b.schemaVersion !== "1.0.0") {
      const copy: [string, PyValue | undefined][] = [
        ["audit_range_event_count", b.audit.eventCount],
        ["audit_range_head_hmac", b.audit.headHmac],
        ["audit_range_since", b.audit.since],
        ["audit_range_until", b.audit.until],
      ];
      for (const [k, v] of copy) if (v !== undefined && v !== null) m.set(k, v);
    }
  }
  return m;
}

/** The bytes that are hashed into `subject.digest.sha256` and signed: the block in the receipt's profile (an unknown one: the default). */
export function bindingBytes(block: Map<string, PyValue>, profileName: string): Uint8Array {
  const profile = hashProfile(profileName, "receiptBinding") ?? DEFAULT_PROFILE;
  return new TextEncoder().encode(profile.canonical(block));
}

/** DSSE v1 PAE: `DSSEv1 <len(type)> <type> <len(body)> <body>`. */
export function pae(payloadType: string, body: Uint8Array): Uint8Array {
  const typeBytes = new TextEncoder().encode(payloadType);
  const head = new TextEncoder().encode(`DSSEv1 ${typeBytes.length} ${payloadType} ${body.length} `);
  const out = new Uint8Array(head.length + body.length);
  out.set(head);
  out.set(body, head.length);
  return out;
}

/** The event whose rows name an endpoint (spec §1.6). */
export const ENDPOINT_EVENT = "agent_spawned";
/** The event whose row lists the loaded extensions. */
export const EXTENSIONS_EVENT = "loaded_extension_set";

/** The members an `agent_spawned` row names its endpoint by, in the order an Endpoint lists them. */
export const ENDPOINT_KEYS = ["endpoint_adapter_name", "endpoint_model", "endpoint_base_url", "endpoint_profile_name"] as const;

/**
 * Endpoint identities of the `agent_spawned` rows (spec §1.6): first
 * occurrence of each (adapter, model, base_url, profile), sorted.
 */
export class EndpointSet {
  private readonly seen = new Map<string, Endpoint>();
  /** Member bytes of rows added from an index (addIndexed), by a hash of them. */
  private readonly seenBytes = new Map<number, Uint8Array[]>();
  /** addIndexed's key of the row at hand. */
  private key = new Uint8Array(256);

  push(row: Map<string, PyValue>): void {
    if (row.get("event") !== ENDPOINT_EVENT) return;
    const adapter = row.get("endpoint_adapter_name");
    if (typeof adapter !== "string" || adapter === "") return;
    const s = (v: PyValue | undefined) => (typeof v === "string" ? v : "");
    this.add({ adapter, model: s(row.get("endpoint_model")), base_url: s(row.get("endpoint_base_url")), profile: s(row.get("endpoint_profile_name")) });
  }
  /** An `agent_spawned` row's endpoint (its adapter name a non-empty string; a member that is not a string reads ""). */
  add(e: Endpoint): void {
    const key = JSON.stringify([e.adapter, e.model, e.base_url, e.profile]);
    if (!this.seen.has(key)) this.seen.set(key, e);
  }
  /**
   * push for a row the codec indexed, read from its bytes b: the four
   * members (ids `first`… of the index's key table, in ENDPOINT_KEYS'
   * order) are made strings only when their bytes are new (a run spawns
   * many agents on few endpoints); a string whose bytes are not its text
   * is decoded by the exact parser.
   */
  addIndexed(ix: RowIndex, b: Uint8Array, first: number): void {
    let need = 0;
    for (let i = 0; i < 4; i++) {
      const v = ix.valueOf(first + i);
      need += v >= 0 && ix.kind(v) === Tok.String ? 5 + ix.end(v) - ix.start(v) : 1;
    }
    const adapter = ix.valueOf(first);
    if (adapter < 0 || ix.kind(adapter) !== Tok.String || ix.end(adapter) - ix.start(adapter) === 2) return;
    if (need > this.key.length) this.key = new Uint8Array(2 * need);
    // per member: 0 (not a string), or 1, its length (4 bytes) and its body
    const k = this.key;
    let o = 0;
    for (let i = 0; i < 4; i++) {
      const v = ix.valueOf(first + i);
      if (v < 0 || ix.kind(v) !== Tok.String) {
        k[o++] = 0;
        continue;
      }
      const s = ix.start(v) + 1;
      const e = ix.end(v) - 1;
      k[o++] = 1;
      k[o++] = (e - s) >>> 24;
      k[o++] = (e - s) >>> 16;
      k[o++] = (e - s) >>> 8;
      k[o++] = e - s;
      for (let p = s; p < e; p++) k[o++] = b[p]!;
    }
    let h = 0x811c9dc5; // FNV-1a
    for (let i = 0; i < o; i++) h = Math.imul(h ^ k[i]!, 0x01000193);
    const same = this.seenBytes.get(h);
    if (same !== undefined) for (const x of same) if (spanIs(k, 0, o, x)) return;
    if (same === undefined) this.seenBytes.set(h, [k.slice(0, o)]);
    else same.push(k.slice(0, o));
    const text = (i: number): string => {
      const v = ix.valueOf(first + i);
      if (v < 0 || ix.kind(v) !== Tok.String) return "";
      if ((ix.flags(v) & NOT_PLAIN_TEXT) === 0) return ix.plainText(v);
      return parse(utf8.decode(b.subarray(ix.start(v), ix.end(v)))) as string;
    };
    this.add({ adapter: text(0), model: text(1), base_url: text(2), profile: text(3) });
  }

  sorted(): Endpoint[] {
    const cmp = compareCodePoints;
    return [...this.seen.values()].sort(
      (a, b) => cmp(a.adapter, b.adapter) || cmp(a.model, b.model) || cmp(a.base_url, b.base_url) || cmp(a.profile, b.profile),
    );
  }
}

const utf8 = new TextDecoder();

/** The extension list of a `loaded_extension_set` row whose `extensions` is a list of objects, else null. */
export function extensionsOf(row: Map<string, PyValue>): PyValue[] | null {
  if (row.get("event") !== EXTENSIONS_EVENT) return null;
  const ext = row.get("extensions");
  if (!Array.isArray(ext) || !ext.every((e) => e instanceof Map)) return null;
  return ext;
}
