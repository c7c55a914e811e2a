import { sign, type KeyObject } from "node:crypto";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { BernsteinError, ExitCode, InputError, RefusalError } from "../errors/index.ts";
import { AtomicFileStream } from "../fsutil/atomic-stream.ts";
import { checkOutputTarget } from "../fsutil/output-target.ts";
import { journalPath, runDir } from "../journal/paths.ts";
import { DEFAULT_PROFILE } from "../journal/hash-profiles.ts";
import { canonical, compareCodePoints, encodeString } from "../pyjson/encode.ts";
import { pyRepr, pyStr } from "../pyjson/python.ts";
import { PyNum, type PyObject, type PyValue } from "../pyjson/types.ts";
import { readAuditRange, type AuditRange } from "./audit.ts";
import { bindingBlock, bindingBytes, CURRENT_SCHEMA, pae, PAYLOAD_TYPE, RECEIPT_TYPE } from "./binding.ts";
import { HashedChunks } from "./hashed-chunks.ts";
import { embedJournalRows, type EmbeddedRows, journalFacts, journalLines, type JournalFacts, type RowSink, verifiedInOnePass } from "./journal-rows.ts";
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
export async function buildRunReceipt(o: BuildOptions): Promise<BuiltReceipt> {
  const jpath = journalPath(o.sddDir, o.runId);
  if (!existsSync(jpath)) {
    throw new InputError("run_not_found", `no journal events for run ${pyRepr(o.runId)} at ${jpath}; an empty run has no identity to attest`, { run_id: o.runId, path: jpath });
  }
  const path = o.out ? resolve(o.out) : join(runDir(o.sddDir, o.runId), RUN_RECEIPT_NAME);
  // Refused before anything is read or written (an audit key may be created below).
  checkOutputTarget(path, "the run receipt");
  const keyId = o.keyId || DEFAULT_KEY_ID;
  return (await signedInOnePass(o, jpath, path, keyId)) ?? (await signedInTwoPasses(o, jpath, path, keyId));
}

type Spine = { entries: PyObject[]; head: string };

/**
 * The receipt of a journal whose every line is one row, its rows verified
 * and embedded in one read (journal-rows.ts verifiedInOnePass). Null,
 * nothing written: any other journal, or a spine or audit range that does
 * not read (the two passes then say what, in their order).
 */
async function signedInOnePass(o: BuildOptions, jpath: string, path: string, keyId: string): Promise<BuiltReceipt | null> {
  let lines: { count: number; snapshot: number } | null;
  try {
    lines = journalLines(jpath);
  } catch {
    // (what cannot be read is named by the two passes, as it always was)
    return null;
  }
  if (lines === null || lines.count === 0) return null;
  let spine: Spine;
  let audit: AuditRange | null;
  try {
    spine = spineEntries(o.sddDir, o.runId);
    audit = o.audit ? readAuditRange(o.sddDir, o.audit.since, o.audit.until, o.audit.key) : null;
  } catch {
    return null;
  }
  const out = new ReceiptOut(path);
  let built: BuiltReceipt | null = null;
  try {
    // the text before the rows states the row count, not the head (keys after "journal"): the lines' count
    const head = receiptText(o, { count: lines.count, head: "", snapshot: lines.snapshot }, spine, audit, keyId, null);
    out.text(head.before);
    const one = await verifiedInOnePass(jpath, o.runId, lines, out);
    if (one !== null) built = signAndCommit(o, out, head.before, one.facts, one.rows, spine, audit, keyId);
  } catch (err) {
    out.abort();
    // the journal's own faults (a row over the limit, say) are named by the two passes, as they always were
    if (err instanceof InputError || err instanceof RefusalError) return null;
    throw err;
  }
  if (built === null) out.abort();
  return built;
}

/**
 * The receipt in two reads of the journal: its facts (the verify, or the
 * strict scan's refusal), then its rows embedded against them.
 */
async function signedInTwoPasses(o: BuildOptions, jpath: string, path: string, keyId: string): Promise<BuiltReceipt> {
  const journal = await journalFacts(jpath, o.runId);
  // what the verify left is collected before pass 2 allocates, which then reuses that memory instead of adding to the peak
  Bun.gc(true);
  let spine: Spine;
  let audit: AuditRange | null;
  try {
    spine = spineEntries(o.sddDir, o.runId);
    audit = o.audit ? readAuditRange(o.sddDir, o.audit.since, o.audit.until, o.audit.key) : null;
  } catch (err) {
    // a journal row the strict scan refuses is named first, as when the journal was read whole before the spine
    await embedJournalRows(jpath, o.runId, journal, null);
    throw err;
  }
  const out = new ReceiptOut(path);
  try {
    // the receipt's text before its rows depends on neither the rows nor the signature (keys after "journal")
    const head = receiptText(o, journal, spine, audit, keyId, null);
    out.text(head.before);
    const rows = await embedJournalRows(jpath, o.runId, journal, out);
    return signAndCommit(o, out, head.before, journal, rows, spine, audit, keyId);
  } catch (err) {
    out.abort();
    throw err;
  }
}

/** The binding signed, the text after the rows written, the receipt in place; what the CLI shows. */
function signAndCommit(o: BuildOptions, out: ReceiptOut, before: string, journal: JournalFacts, rows: EmbeddedRows, spine: Spine, audit: AuditRange | null, keyId: string): BuiltReceipt {
  const block = bindingBlock({
    schemaVersion: CURRENT_SCHEMA,
    hashProfile: DEFAULT_PROFILE.name,
    runId: o.runId,
    journalEventCount: journal.count,
    journalHead: journal.head,
    spineEntryCount: spine.entries.length,
    spineHead: spine.head,
    endpoints: rows.endpoints.sorted(),
    extensions: rows.extensions,
    audit: audit && { headSha256: audit.head_sha256, eventCount: int(audit.events.length), headHmac: audit.head_hmac, since: audit.since, until: audit.until },
  });
  const bytes = bindingBytes(block, DEFAULT_PROFILE.name);
  const signed = receiptText(o, journal, spine, audit, keyId, { digest: Bun.SHA256.hash(bytes, "hex") as string, signature: sign(null, pae(PAYLOAD_TYPE, bytes), o.key).toString("base64") });
  if (signed.before !== before) throw new Error("run receipt: the text before the rows changed with the signature");
  out.text(signed.after + "\n");
  out.commit();
  return {
    path: out.path,
    run_id: o.runId,
    journal_head: journal.head,
    journal_events: journal.count,
    spine_head: spine.head,
    spine_entries: spine.entries.length,
    audit_range_head: audit ? audit.head_sha256 : null,
    audit_events: audit ? audit.events.length : null,
    receipt_sha256: out.sha256(),
    key_id: keyId,
  };
}

/**
 * `canonical(receipt)` around the journal's rows: the text before the
 * first row and after the last. A Map's canonical text is its members'
 * in code-point order of their keys, so the journal block (`event_count`,
 * `events`, `head_hash`, in that order) is cut at its list; every other
 * value is canonical as it is. `signed` null: placeholders for what comes
 * after "journal" (the text before the rows is the same).
 */
function receiptText(
  o: BuildOptions,
  journal: JournalFacts,
  spine: { entries: PyObject[]; head: string },
  audit: AuditRange | null,
  keyId: string,
  signed: { digest: string; signature: string } | null,
): { before: string; after: string } {
  const receipt = new Map<string, PyValue>([
    ["schema_version", CURRENT_SCHEMA],
    ["receipt_type", RECEIPT_TYPE],
    ["run_id", o.runId],
    ["subject", new Map<string, PyValue>([["name", `run-receipt-${o.runId}`], ["digest", new Map([["sha256", signed?.digest ?? ""]])]])],
    ["spine", new Map<string, PyValue>([["head_hash", spine.head], ["entry_count", int(spine.entries.length)], ["entries", spine.entries]])],
    [
      "signing",
      new Map<string, PyValue>([
        ["alg", KEY_ALG],
        ["key_id", keyId],
        ["payload_type", PAYLOAD_TYPE],
        ["public_key_jwk", new Map<string, PyValue>([["alg", KEY_ALG], ["crv", "Ed25519"], ["kid", keyId], ["kty", "OKP"], ["x", encodeBase64Url(rawPublicKey(o.key))]])],
        ["signature_b64", signed?.signature ?? ""],
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
  const block = canonical(new Map<string, PyValue>([["head_hash", journal.head], ["event_count", int(journal.count)], ["events", []]]));
  const cut = block.indexOf(EMPTY_EVENTS) + EMPTY_EVENTS.length - 1;
  const keys = [...receipt.keys(), "journal"].sort(compareCodePoints);
  const at = keys.indexOf("journal");
  const member = (k: string) => `${encodeString(k)}:${canonical(receipt.get(k)!)}`;
  const before = keys.slice(0, at).map((k) => `${member(k)},`).join("");
  const after = keys.slice(at + 1).map((k) => `,${member(k)}`).join("");
  return { before: `{${before}${encodeString("journal")}:${block.slice(0, cut)}`, after: `${block.slice(cut)}${after}}` };
}

const EMPTY_EVENTS = '"events":[]';

/**
 * The receipt's file as it is written: pieces gathered to about a MiB per
 * write, hashed as they go (receipt_sha256), in a temp file that takes the
 * receipt's name only when complete (AtomicFileStream). A failure to
 * create or write it is `receipt_write_failed`.
 */
class ReceiptOut extends HashedChunks implements RowSink {
  private readonly file: AtomicFileStream;
  private digest = "";

  constructor(readonly path: string) {
    super((bytes) => writing(path, () => this.file.write(bytes)));
    this.file = writing(path, () => new AtomicFileStream(path));
  }

  commit(): void {
    this.digest = this.flushed().digest("hex");
    writing(this.path, () => this.file.commit());
  }

  abort(): void {
    this.file.abort();
  }

  sha256(): string {
    return this.digest;
  }
}

/** `op` on the receipt's file; a failure that is not one of ours is `receipt_write_failed`. */
function writing<T>(path: string, op: () => T): T {
  try {
    return op();
  } catch (err) {
    if (err instanceof BernsteinError) throw err;
    throw new BernsteinError("receipt_write_failed", `cannot write the run receipt ${path}: ${(err as Error).message}`, ExitCode.INTERNAL, { path });
  }
}
