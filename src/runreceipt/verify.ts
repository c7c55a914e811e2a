import { readFileSync } from "node:fs";
import { InputError, type ErrorCode } from "../errors/index.ts";
import { openInput, rowLimitText, withInputFile, type OpenInput } from "../fsutil/input.ts";
import { parse } from "../pyjson/parse.ts";
import { dumps } from "../pyjson/encode.ts";
import { pyEquals, pyRepr, pyStr } from "../pyjson/python.ts";
import { PyNum, type PyObject, type PyValue } from "../pyjson/types.ts";
import { ValueTooLarge } from "./cursor.ts";
import { bindingBlock, bindingBytes, pae, PAYLOAD_TYPE, RECEIPT_TYPE, SCHEMA_VERSIONS } from "./binding.ts";
import { DEFAULT_PROFILE, HASH_PROFILE_FIELD, hashProfile } from "../journal/hash-profiles.ts";
import { AUDIT_GENESIS, ReceiptFacts, memberStr } from "./facts.ts";
import { decodeSignature, isObject, jwkRawKey, keyMetadataProblem, pinnedKey, verifyEd25519 } from "./keys.ts";
import { rawPublicKey } from "../receipts/keys.ts";
import { canonicalDigestsOfFile, scanReceipt, scanVector, ScanTrouble, type ReceiptDigests } from "./scan.ts";
import { pythonUtf8Error } from "./utf8.ts";

/**
 * `verify_run_receipt` (spec §1.9) and bernstein-mcp's check list (§1.11)
 * over one streaming pass of a `run-receipt.json`.
 *
 * Two result models side by side: Python's (`status` ok | malformed |
 * tampered, the first failure only, in its check order) decides the words
 * and the exit class; the check list runs every check and names each
 * outcome. A receipt passes only when both pass.
 */

export type Status = "ok" | "malformed" | "tampered";
export type Outcome = "ok" | "fail" | "unverifiable" | "skipped";
export interface Check {
  name: string;
  outcome: Outcome;
  detail: string;
}

export interface RunReceiptVerdict {
  ok: boolean;
  status: Status;
  run_id: string | null;
  journal_events: number;
  spine_entries: number;
  divergent_step: number | null;
  errors: string[];
  /** bernstein-mcp's verdict over the check list. */
  verdict: "valid" | "invalid" | "unverifiable";
  failing_check: string | null;
  checks: Check[];
  summary: Record<string, unknown>;
  /** SHA-256 of CJ(receipt) + "\n" (for a file Python wrote: of its bytes). */
  receipt_sha256: string | null;
  receipt_canonical_sha256: string | null;
  binding: { block: PyObject; bytes_b64: string; sha256: string; pae_sha256: string } | null;
  /** "embedded" (trust on first use) or "pinned". */
  key_trust: "embedded" | "pinned";
  /** The error code of the first failure when it is not the status's own (a non-canonical signature or key metadata); not printed. */
  failure_code?: "signature_invalid" | null;
}

export interface VerifyReceiptOptions {
  /** Path of a PEM public key the embedded key must equal. */
  publicKeyPath?: string;
  /** The file is a bernstein-mcp vector (`{name, input, expected, ...}`): verify its `input`. */
  vector?: boolean;
}

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const first16 = (s: string) => Array.from(s).slice(0, 16).join("");
/** bernstein-mcp quotes values JSON-style where Python uses repr. */
const jsonish = (v: PyValue | undefined) => (v === undefined ? "undefined" : dumps(v, { ensureAscii: false }));
/** Python truthiness of a JSON value (`receipt.get("run_id") or ""`). */
function truthy(v: PyValue | undefined): boolean {
  if (v === undefined || v === null || v === false || v === "") return false;
  if (v instanceof PyNum) return Number(v.raw) !== 0;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof Map) return v.size > 0;
  return true;
}
const isJsonInt = (v: PyValue | undefined, n: number) => v instanceof PyNum && !v.isFloat && BigInt(v.raw) === BigInt(n);
const int = (n: number) => new PyNum(String(n), false);

/** The reason a whole-text parse gives: Python's codec or JSONDecodeError text. */
function parseFailure(bytes: Uint8Array): string {
  const codec = pythonUtf8Error(bytes);
  if (codec) return codec;
  try {
    parse(new TextDecoder().decode(bytes));
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("the streaming reader refused a receipt that parses whole");
}

class Outcomes {
  readonly checks: Check[] = [];
  add(name: string, outcome: Outcome, detail: string): void {
    this.checks.push({ name, outcome, detail });
  }
}

/** Python's first failing structural test (§1.9 rows 2–11), with the port's wording beside it. */
function schemaProblem(f: ReceiptFacts): { py: string; mcp: string } | null {
  const t = f.values;
  if (!truthy(t.get("run_id"))) return { py: "receipt.run_id missing", mcp: "receipt.run_id missing" };
  const rt = t.get("receipt_type");
  if (rt !== RECEIPT_TYPE) return { py: `unexpected receipt_type ${pyRepr(rt)}`, mcp: `unexpected receipt_type ${jsonish(rt)}` };
  const sv = t.get("schema_version");
  if (typeof sv !== "string" || !(SCHEMA_VERSIONS as readonly string[]).includes(sv)) {
    const m = `unsupported schema_version ${jsonish(sv)}`;
    return { py: m, mcp: m };
  }
  const hp = t.get(HASH_PROFILE_FIELD);
  if (hp !== undefined && hashProfile(hp, "receiptBinding") === undefined) {
    const m = `unsupported hash_profile ${jsonish(hp)}`;
    return { py: m, mcp: m };
  }
  const same = (m: string) => ({ py: m, mcp: m });
  if (!f.journal.isObject || !f.journal.listOk) return same("receipt.journal.events missing or not a list");
  if (!f.spine.isObject || !f.spine.listOk) return same("receipt.spine.entries missing or not a list");
  const signing = t.get("signing");
  if (!isObject(signing)) return same("receipt.signing missing");
  const pt = signing.get("payload_type");
  if (pt !== PAYLOAD_TYPE) return { py: `unexpected signing.payload_type ${pyRepr(pt)}`, mcp: `unexpected signing.payload_type ${jsonish(pt)}` };
  if (f.journal.firstNonObject >= 0) return same("receipt.journal.events contains a non-object row");
  if (f.journal.count === 0) return { py: "receipt embeds no journal events; an empty range attests nothing", mcp: "receipt.journal.events is empty" };
  if (f.spine.firstNonObject >= 0) return same("receipt.spine.entries contains a non-object row");
  return null;
}

interface SignatureCheck {
  /** Python's status and message for rows 22–26, or null when the signature verifies. */
  py: { status: Status; message: string; code?: "signature_invalid" } | null;
  /** The check-list outcome. */
  outcome: Outcome;
  detail: string;
}

function checkSignature(signing: PyObject, message: Uint8Array, pin: ReturnType<typeof pinnedKey> | null): SignatureCheck {
  const fail = (status: Status, msg: string, detail = msg): SignatureCheck => ({ py: { status, message: msg }, outcome: "fail", detail });
  const invalid = (msg: string): SignatureCheck => ({ py: { status: "tampered", message: msg, code: "signature_invalid" }, outcome: "fail", detail: msg });
  const jwk = signing.get("public_key_jwk");
  if (!isObject(jwk)) return fail("malformed", "receipt.signing.public_key_jwk missing or not an object");
  const raw = jwkRawKey(jwk);
  if ("reason" in raw) return fail("malformed", `embedded JWK is not a usable Ed25519 key: ${raw.reason}`);
  if (pin) {
    if ("reason" in pin) return fail("malformed", pin.reason);
    if (!rawPublicKey(pin.key).equals(raw.raw)) return fail("tampered", "embedded receipt key does not match the pinned public key");
  }
  const sigText = signing.get("signature_b64");
  if (typeof sigText !== "string") return fail("malformed", "receipt.signing.signature_b64 missing");
  // Stricter than Python (which accepts stray bits in the last character):
  // a signature has one text, so a malleated one is refused, not verified.
  const sig = decodeSignature(sigText);
  if (sig === null) return invalid("receipt.signing.signature_b64 is not canonical Base64 of a 64-byte Ed25519 signature (padded, no whitespace, zero unused bits)");
  if (!verifyEd25519(raw.raw, message, sig)) {
    return fail("tampered", "Ed25519 signature does not verify over the recomputed subject binding", "Ed25519 signature does not verify over the recomputed binding");
  }
  const meta = keyMetadataProblem(signing, jwk, raw.raw);
  if (meta !== null) return invalid(meta);
  const detail = pin ? "Ed25519 over DSSE PAE(binding) with the pinned public key" : "Ed25519 over DSSE PAE(binding) with embedded JWK (trust-on-first-use)";
  return { py: null, outcome: "ok", detail };
}

function summaryOf(f: ReceiptFacts, schemaOk: boolean): Record<string, unknown> {
  const t = f.values;
  const signing = t.get("signing");
  const jwk = isObject(signing) ? signing.get("public_key_jwk") : undefined;
  const kid = isObject(jwk) ? jwk.get("kid") : undefined;
  const keyId = typeof kid === "string" && kid !== "" ? kid : isObject(signing) ? (signing.get("key_id") ?? null) : null;
  const producer = t.get("producer");
  const producerText = isObject(producer)
    ? `${pyStr(producer.get("name"), "")} ${pyStr(producer.get("version"), "")} (${pyStr(producer.get("agent"), "")})`
    : null;
  const hp = t.get(HASH_PROFILE_FIELD);
  return {
    run_id: truthy(t.get("run_id")) ? pyStr(t.get("run_id")) : null,
    schema_version: t.get("schema_version") ?? null,
    hash_profile: hp === undefined ? DEFAULT_PROFILE.name : hp,
    journal_events: schemaOk ? f.journal.count : null,
    spine_entries: schemaOk ? f.spine.count : null,
    audit_events: f.audit.present && f.audit.isObject && f.audit.listOk ? f.audit.count : null,
    key_id: keyId,
    producer: producerText,
    tool_calls: f.journal.toolCalls,
  };
}

/** Verify the run receipt at `path` (a file, or `-` for standard input). */
export async function verifyRunReceipt(path: string, opts: VerifyReceiptOptions = {}): Promise<RunReceiptVerdict> {
  let pin: ReturnType<typeof pinnedKey> | null = null;
  if (opts.publicKeyPath !== undefined) {
    let pem: string;
    try {
      pem = readFileSync(opts.publicKeyPath, "utf8");
    } catch (err) {
      throw new InputError("public_key_unreadable", `Cannot read --public-key: ${(err as Error).message}`, { path: opts.publicKeyPath });
    }
    pin = pinnedKey(pem);
  }
  return withInputFile(path, { what: "receipt" }, async (file) => {
    const input = openInput(file, { what: "receipt" });
    if (input === null) throw new InputError("receipt_not_found", `Cannot read receipt: no such file: ${path}`, { path });
    try {
      return await verifyOpen(input, file, pin, opts.vector === true);
    } finally {
      input.close();
    }
  });
}

function malformedOnly(message: string, f: ReceiptFacts | null, pin: ReturnType<typeof pinnedKey> | null): RunReceiptVerdict {
  const detail = message;
  return {
    ok: false,
    status: "malformed",
    run_id: f && truthy(f.values.get("run_id")) ? pyStr(f.values.get("run_id")) : null,
    journal_events: 0,
    spine_entries: 0,
    divergent_step: null,
    errors: [message],
    verdict: "unverifiable",
    failing_check: "schema",
    checks: [{ name: "schema", outcome: "fail", detail }, ...skippedAfterSchema()],
    summary: f ? summaryOf(f, false) : {},
    receipt_sha256: null,
    receipt_canonical_sha256: null,
    binding: null,
    key_trust: pin ? "pinned" : "embedded",
  };
}

const CHECK_NAMES = ["journal_chain", "journal_head", "spine_chain", "spine_head", "audit_range_head", "audit_range_linkage", "audit_range_hmac", "subject_binding", "signature"];
function skippedAfterSchema(): Check[] {
  return CHECK_NAMES.map((name) => ({ name, outcome: "skipped" as const, detail: "not run: schema failed" }));
}

/** A receipt held in memory (a session vector's `receipt_text`), read like a file. */
function memoryInput(bytes: Uint8Array): OpenInput {
  return {
    path: "<receipt_text>",
    fd: -1,
    stream: false,
    size: bytes.length,
    bytesRead: 0,
    read(buf, off, len, pos) {
      const n = Math.max(0, Math.min(len, bytes.length - pos));
      buf.set(bytes.subarray(pos, pos + n), off);
      this.bytesRead += n;
      return n;
    },
    close() {},
  };
}

async function verifyOpen(input: OpenInput, file: string, pin: ReturnType<typeof pinnedKey> | null, vector = false, whole?: Uint8Array): Promise<RunReceiptVerdict> {
  const f = new ReceiptFacts();
  let scan;
  try {
    if (vector) {
      const v = await scanVector(input, f);
      if (v.embedded !== null) {
        const bytes = new TextEncoder().encode(v.embedded);
        return await verifyOpen(memoryInput(bytes), file, pin, false, bytes);
      }
      scan = v;
    } else scan = await scanReceipt(input, f);
    f.settle();
  } catch (err) {
    if (err instanceof ValueTooLarge) {
      throw new InputError("row_too_large", `a value in receipt ${file} is longer than the limit of ${err.limit} bytes (${rowLimitText(err.limit)}); refusing to read it`, { path: file });
    }
    if (!(err instanceof ScanTrouble)) throw err;
    if (vector) throw new InputError("run_receipt_malformed", `${file} is not a bernstein-mcp vector file ({"name", "input", ...}): ${(err as Error).message}`, { path: file });
    return malformedOnly(`receipt is not valid JSON: ${parseFailure(whole ?? readFileSync(file))}`, null, pin);
  }
  if (scan.notObject) return malformedOnly("receipt is not a JSON object", null, pin);
  const digests = scan.digests ?? (await canonicalDigestsOfFile(input, scan.range));
  const problem = schemaProblem(f);
  if (problem) {
    const r = malformedOnly(problem.py, f, pin);
    r.checks[0]!.detail = problem.mcp;
    r.receipt_sha256 = digests.receipt;
    r.receipt_canonical_sha256 = digests.canonical;
    return r;
  }
  return decide(f, digests, pin);
}

function decide(f: ReceiptFacts, digests: ReceiptDigests, pin: ReturnType<typeof pinnedKey> | null): RunReceiptVerdict {
  const t = f.values;
  const j = f.journal;
  const s = f.spine;
  const a = f.audit;
  const out = new Outcomes();
  const pyFail: { status: Status; message: string; step?: number; code?: "signature_invalid" }[] = [];
  const py = (status: Status, message: string, step?: number, code?: "signature_invalid") => pyFail.push({ status, message, step, code });
  out.add("schema", "ok", "");

  // 12–14: the journal walk, then its stated head and count.
  const d = j.walker.divergence;
  if (d) py("tampered", `journal diverges at step ${d.index}: ${d.error}`, d.index);
  out.add("journal_chain", d ? "fail" : "ok", d ? `step ${d.index}: ${d.error}` : `${j.count} rows`);
  const lastHash = pyStr(j.lastEventHash, "");
  if (memberStr(j.members, "head_hash") !== lastHash) py("tampered", "journal.head_hash does not match the head recomputed from the embedded rows");
  if (!pyEquals(j.members.get("event_count"), int(j.count))) py("tampered", "journal.event_count does not match the embedded rows");
  const headOk = typeof j.members.get("head_hash") === "string" && j.members.get("head_hash") === j.lastEventHash && isJsonInt(j.members.get("event_count"), j.count);
  out.add("journal_head", headOk ? "ok" : "fail", headOk ? "" : "head_hash/event_count do not match embedded rows");

  // 15–17: the spine.
  const sw = s.walker;
  if (sw.error) py("tampered", sw.error);
  out.add("spine_chain", sw.error ? "fail" : "ok", sw.error ?? `${s.count} entries`);
  if (memberStr(s.members, "head_hash") !== sw.head) py("tampered", "spine.head_hash does not match the head recomputed from the embedded entries");
  if (!pyEquals(s.members.get("entry_count"), int(s.count))) py("tampered", "spine.entry_count does not match the embedded entries");
  const spineHeadOk = s.members.get("head_hash") === sw.head && isJsonInt(s.members.get("entry_count"), s.count);
  out.add("spine_head", spineHeadOk ? "ok" : "fail", spineHeadOk ? "" : "head_hash/entry_count do not match embedded entries");

  // 18–20: the audit range, when there is one.
  let auditHead: string | null = null;
  if (!a.present) {
    for (const n of ["audit_range_head", "audit_range_linkage", "audit_range_hmac"]) out.add(n, "skipped", "no audit_range block");
  } else if (!a.isObject || !a.listOk) {
    py("malformed", "receipt.audit_range.events missing or not a list");
    out.add("audit_range_head", "fail", "receipt.audit_range.events missing or not a list of objects");
    out.add("audit_range_linkage", "skipped", "audit_range malformed");
    out.add("audit_range_hmac", "skipped", "audit_range malformed");
  } else {
    auditHead = hex(new Uint8Array(a.hasher.digest()));
    if (memberStr(a.members, "head_sha256") !== auditHead) py("tampered", "audit_range.head_sha256 does not match the head recomputed from the embedded events");
    if (!pyEquals(a.members.get("event_count"), int(a.count))) py("tampered", "audit_range.event_count does not match the embedded events");
    if (a.firstNonObject >= 0) {
      out.add("audit_range_head", "fail", "receipt.audit_range.events missing or not a list of objects");
      out.add("audit_range_linkage", "skipped", "audit_range malformed");
      out.add("audit_range_hmac", "skipped", "audit_range malformed");
    } else {
      const ok = a.members.get("head_sha256") === auditHead && isJsonInt(a.members.get("event_count"), a.count);
      out.add("audit_range_head", ok ? "ok" : "fail", ok ? "" : "head_sha256/event_count do not match embedded events");
      const expectedHead = a.count === 0 ? AUDIT_GENESIS : a.lastHmac;
      const link = a.linkError ?? (a.members.get("head_hmac") !== expectedHead ? "head_hmac != last event hmac" : null);
      out.add("audit_range_linkage", link ? "fail" : "ok", link ?? "prev_hmac chain + head_hmac consistent");
      out.add("audit_range_hmac", "unverifiable", "HMAC-SHA256 keyed by the producing install; no key here");
    }
  }

  // 21: the subject digest over the binding rebuilt from recomputed values.
  const schemaVersion = t.get("schema_version") as string;
  const profileName = (t.get(HASH_PROFILE_FIELD) as string | undefined) ?? DEFAULT_PROFILE.name;
  const block = bindingBlock({
    schemaVersion,
    hashProfile: profileName,
    runId: pyStr(t.get("run_id")),
    journalEventCount: j.count,
    journalHead: lastHash,
    spineEntryCount: s.count,
    spineHead: sw.head,
    endpoints: j.endpoints.sorted(),
    extensions: j.extensions,
    audit: auditHead === null ? null : { headSha256: auditHead, eventCount: a.members.get("event_count"), headHmac: a.members.get("head_hmac"), since: a.members.get("since"), until: a.members.get("until") },
  });
  const bytes = bindingBytes(block, profileName);
  const recomputed = Bun.SHA256.hash(bytes, "hex") as string;
  const subject = t.get("subject");
  let stated = "";
  let statedRaw: PyValue | undefined;
  if (subject !== undefined && subject !== null && !isObject(subject)) py("malformed", "receipt.subject is not an object");
  else {
    const digest = isObject(subject) ? subject.get("digest") : undefined;
    if (digest !== undefined && digest !== null && !isObject(digest)) py("malformed", "receipt.subject.digest is not an object");
    else if (isObject(digest)) {
      statedRaw = digest.get("sha256");
      stated = pyStr(statedRaw, "");
    }
  }
  if (stated !== recomputed) {
    py("tampered", `signed subject ${first16(stated)}... does not match the digest ${first16(recomputed)}... recomputed from the embedded ranges`);
  }
  const bindingOk = statedRaw === recomputed;
  out.add("subject_binding", bindingOk ? "ok" : "fail", bindingOk ? "" : `stated ${first16(typeof statedRaw === "string" ? statedRaw : pyStr(statedRaw, ""))} != recomputed ${first16(recomputed)}`);

  // 22–26: the key and the signature over PAE(binding).
  const message = pae(PAYLOAD_TYPE, bytes);
  const sig = checkSignature(t.get("signing") as PyObject, message, pin);
  if (sig.py) py(sig.py.status, sig.py.message, undefined, sig.py.code);
  out.add("signature", sig.outcome, sig.detail);

  const firstPy = pyFail[0];
  const status: Status = firstPy ? firstPy.status : "ok";
  const failing = out.checks.find((c) => c.outcome === "fail");
  return {
    ok: status === "ok" && !failing,
    status,
    run_id: pyStr(t.get("run_id")),
    journal_events: j.count,
    spine_entries: s.count,
    divergent_step: firstPy?.step ?? null,
    errors: firstPy ? [firstPy.message] : [],
    verdict: failing ? "invalid" : "valid",
    failing_check: failing?.name ?? null,
    checks: out.checks,
    summary: summaryOf(f, true),
    receipt_sha256: digests.receipt,
    receipt_canonical_sha256: digests.canonical,
    binding: { block, bytes_b64: Buffer.from(bytes).toString("base64"), sha256: recomputed, pae_sha256: Bun.SHA256.hash(message, "hex") as string },
    key_trust: pin ? "pinned" : "embedded",
    failure_code: firstPy?.code ?? null,
  };
}

/** Exit code and error code of a verdict: 0 ok, 1 tampered or a failed check, 3 malformed. */
export function receiptOutcome(v: RunReceiptVerdict): { exitCode: 0 | 1 | 3; error: ErrorCode | null; detail: string | null } {
  if (v.ok) return { exitCode: 0, error: null, detail: null };
  if (v.status === "malformed") return { exitCode: 3, error: "run_receipt_malformed", detail: v.errors[0] ?? "" };
  if (v.status === "tampered") return { exitCode: 1, error: v.failure_code ?? "run_receipt_tampered", detail: v.errors[0] ?? "" };
  const failed = v.checks.find((c) => c.outcome === "fail")!;
  return { exitCode: 1, error: "run_receipt_check_failed", detail: `${failed.name}: ${failed.detail}` };
}
