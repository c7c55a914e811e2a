import { sign, type KeyObject } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { BernsteinError, ExitCode, InputError, RefusalError } from "../errors/index.ts";
import { writeFileAtomic } from "../fsutil/atomic.ts";
import { checkOutputTarget } from "../fsutil/output-target.ts";
import { journalPath, runDir } from "../journal/paths.ts";
import { EventChainWalker } from "../journal/chain.ts";
import { DEFAULT_PROFILE } from "../journal/hash-profiles.ts";
import { canonical } from "../pyjson/encode.ts";
import { pyRepr, pyStr } from "../pyjson/python.ts";
import { PyNum, type PyObject, type PyValue } from "../pyjson/types.ts";
import { readAuditRange, type AuditRange } from "./audit.ts";
import { bindingBlock, bindingBytes, CURRENT_SCHEMA, EndpointSet, extensionsOf, pae, PAYLOAD_TYPE, RECEIPT_TYPE } from "./binding.ts";
import { DEFAULT_KEY_ID, encodeBase64Url, KEY_ALG } from "./keys.ts";
import { rawPublicKey } from "../receipts/keys.ts";
import { SPINE_FIELDS, SpineWalker, missingFieldsRepr } from "./spine.ts";
import { strictObjects } from "./strict-lines.ts";

/**
 * `bernstein verify run`: a signed `run-receipt.json` of one of our runs,
 * in upstream's format (spec §1.2–§1.8, schema 1.1.0, py-json-v1), so that
 * upstream's verifier (and ours) accepts it. Nothing is signed over a
 * journal or spine that is incomplete or does not verify.
 */

export const RUN_RECEIPT_NAME = "run-receipt.json";
const int = (n: number) => new PyNum(String(n), false);

export interface BuildOptions {
  sddDir: string;
  runId: string;
  key: KeyObject;
  /** JWK `kid` / `signing.key_id` (default `run-receipt-key`). */
  keyId?: string;
  audit?: { since: string; until: string; key: Uint8Array } | null;
  /** Output path (default `<sdd>/runs/<run>/run-receipt.json`). */
  out?: string;
}

export interface BuiltReceipt {
  path: string;
  run_id: string;
  journal_head: string;
  journal_events: number;
  spine_head: string;
  spine_entries: number;
  audit_range_head: string | null;
  audit_events: number | null;
  receipt_sha256: string;
  key_id: string;
}

function refusal(runId: string, what: string): RefusalError {
  return new RefusalError("run_receipt_refused", `refusing to sign run ${pyRepr(runId)}: ${what}`, { run_id: runId });
}

/** The journal rows as embedded (without `ts`/`elapsed_s`), after the strict scan and the chain walk. */
function journalRows(path: string, runId: string): PyObject[] {
  const rows: PyObject[] = [];
  const walker = new EventChainWalker();
  const partial = "a receipt is never signed over a partial journal";
  const shape = "a receipt is never signed over a malformed journal";
  for (const { line, row } of strictObjects(path, (n, what) => refusal(runId, `journal line ${n} ${what}; ${partial}`))) {
    const idx = row.get("index");
    if (!(idx instanceof PyNum) || idx.isFloat) throw refusal(runId, `journal line ${line} has a missing or non-integer 'index'; ${shape}`);
    const ev = row.get("event");
    if (typeof ev !== "string" || ev === "") throw refusal(runId, `journal line ${line} has a missing or non-string 'event'; ${shape}`);
    if (typeof row.get("prev_hash") !== "string") throw refusal(runId, `journal line ${line} has a missing or non-string 'prev_hash'; ${shape}`);
    for (const k of ["payload_hash", "event_hash"]) {
      const v = row.get(k);
      if (typeof v !== "string" || v === "") throw refusal(runId, `journal line ${line} has an empty '${k}'; ${shape}`);
    }
    walker.push(row);
    const embedded = new Map(row);
    embedded.delete("ts");
    embedded.delete("elapsed_s");
    rows.push(embedded);
  }
  if (rows.length === 0) {
    throw new InputError("journal_unreadable", `no journal events for run ${pyRepr(runId)} at ${path}; an empty run has no identity to attest`, { run_id: runId, path });
  }
  const d = walker.divergence;
  if (d) throw refusal(runId, `journal chain fails at step ${d.index}: ${d.error}`);
  return rows;
}

const SPINE_ROW_FIELDS = [...SPINE_FIELDS, "hmac"];

/** The lineage-spine entries as embedded (`hmac` dropped), walked keyless. */
function spineEntries(sddDir: string, runId: string): { entries: PyObject[]; head: string } {
  const path = join(resolve(sddDir), "lineage", runId, "spine.jsonl");
  if (!existsSync(path)) return { entries: [], head: "" };
  const incomplete = "a receipt is never signed over an incomplete spine";
  const walker = new SpineWalker();
  const entries: PyObject[] = [];
  for (const { line, row } of strictObjects(path, (n, what) => refusal(runId, `spine line ${n} ${what}; ${incomplete}`))) {
    const missing = missingFieldsRepr(row, SPINE_ROW_FIELDS);
    if (missing) throw refusal(runId, `spine line ${line} is missing fields ${missing}; ${incomplete}`);
    const body = new Map<string, PyValue>();
    for (const f of SPINE_FIELDS) body.set(f, row.get(f)!);
    for (const f of ["traceparent", "tracestate", "baggage"]) {
      const v = row.get(f);
      if (v !== undefined && v !== null) body.set(f, v);
    }
    for (const f of ["v", "timestamp"]) {
      const v = body.get(f);
      if (!(v instanceof PyNum) || v.isFloat) throw refusal(runId, `spine line ${line} has an unusable field type (${f} is not an integer); ${incomplete}`);
    }
    for (const f of ["prev_hash", "artifact_path", "content_hash", "actor", "step_id", "model", "entry_hash"]) body.set(f, pyStr(body.get(f), "None"));
    walker.push(body);
    entries.push(body);
  }
  if (walker.error) throw refusal(runId, `${walker.error}; ${incomplete}`);
  return { entries, head: walker.head };
}

/** Build, sign and write the receipt; returns what the CLI shows. */
export function buildRunReceipt(o: BuildOptions): BuiltReceipt {
  const jpath = journalPath(o.sddDir, o.runId);
  if (!existsSync(jpath)) {
    throw new InputError("run_not_found", `no journal events for run ${pyRepr(o.runId)} at ${jpath}; an empty run has no identity to attest`, { run_id: o.runId, path: jpath });
  }
  // Refused before anything is read or written (an audit key may be created below).
  checkOutputTarget(o.out ?? join(runDir(o.sddDir, o.runId), RUN_RECEIPT_NAME), "the run receipt");
  const rows = journalRows(jpath, o.runId);
  const spine = spineEntries(o.sddDir, o.runId);
  const audit: AuditRange | null = o.audit ? readAuditRange(o.sddDir, o.audit.since, o.audit.until, o.audit.key) : null;
  const endpoints = new EndpointSet();
  let extensions: PyValue[] | null = null;
  for (const r of rows) {
    endpoints.push(r);
    extensions = extensionsOf(r) ?? extensions;
  }
  const journalHead = pyStr(rows[rows.length - 1]!.get("event_hash"));
  const block = bindingBlock({
    schemaVersion: CURRENT_SCHEMA,
    hashProfile: DEFAULT_PROFILE.name,
    runId: o.runId,
    journalEventCount: rows.length,
    journalHead,
    spineEntryCount: spine.entries.length,
    spineHead: spine.head,
    endpoints: endpoints.sorted(),
    extensions,
    audit: audit && { headSha256: audit.head_sha256, eventCount: int(audit.events.length), headHmac: audit.head_hmac, since: audit.since, until: audit.until },
  });
  const bytes = bindingBytes(block, DEFAULT_PROFILE.name);
  const signature = sign(null, pae(PAYLOAD_TYPE, bytes), o.key);
  const keyId = o.keyId || DEFAULT_KEY_ID;
  const receipt = new Map<string, PyValue>([
    ["schema_version", CURRENT_SCHEMA],
    ["receipt_type", RECEIPT_TYPE],
    ["run_id", o.runId],
    ["subject", new Map<string, PyValue>([["name", `run-receipt-${o.runId}`], ["digest", new Map([["sha256", Bun.SHA256.hash(bytes, "hex") as string]])]])],
    ["journal", new Map<string, PyValue>([["head_hash", journalHead], ["event_count", int(rows.length)], ["events", rows]])],
    ["spine", new Map<string, PyValue>([["head_hash", spine.head], ["entry_count", int(spine.entries.length)], ["entries", spine.entries]])],
    [
      "signing",
      new Map<string, PyValue>([
        ["alg", KEY_ALG],
        ["key_id", keyId],
        ["payload_type", PAYLOAD_TYPE],
        ["public_key_jwk", new Map<string, PyValue>([["alg", KEY_ALG], ["crv", "Ed25519"], ["kid", keyId], ["kty", "OKP"], ["x", encodeBase64Url(rawPublicKey(o.key))]])],
        ["signature_b64", signature.toString("base64")],
      ]),
    ],
  ]);
  if (audit) {
    receipt.set(
      "audit_range",
      new Map<string, PyValue>([
        ["since", audit.since],
        ["until", audit.until],
        ["head_hmac", audit.head_hmac],
        ["head_sha256", audit.head_sha256],
        ["event_count", int(audit.events.length)],
        ["events", audit.events],
      ]),
    );
  }
  const text = canonical(receipt) + "\n";
  const path = o.out ? resolve(o.out) : join(runDir(o.sddDir, o.runId), RUN_RECEIPT_NAME);
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileAtomic(path, text);
  } catch (err) {
    throw new BernsteinError("receipt_write_failed", `cannot write the run receipt ${path}: ${(err as Error).message}`, ExitCode.INTERNAL, { path });
  }
  return {
    path,
    run_id: o.runId,
    journal_head: journalHead,
    journal_events: rows.length,
    spine_head: spine.head,
    spine_entries: spine.entries.length,
    audit_range_head: audit ? audit.head_sha256 : null,
    audit_events: audit ? audit.events.length : null,
    receipt_sha256: Bun.SHA256.hash(text, "hex") as string,
    key_id: keyId,
  };
}
