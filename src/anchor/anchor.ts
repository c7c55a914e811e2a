import { isLowerHex64 } from "../hex.ts";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { InputError, NegativeError, RefusalError, UsageError } from "../errors/index.ts";
import { decodeBase64Canonical } from "../base64.ts";
import { writeFileAtomic } from "../fsutil/atomic.ts";
import { journalPath, runDir } from "../journal/paths.ts";
import { readSealFile, sealPathFor } from "../journal/seal.ts";
import { verifyJournal } from "../journal/verify.ts";
import { dumps } from "../pyjson/encode.ts";
import { parse } from "../pyjson/parse.ts";
import { checkToken, parseBundle, timeStampRequest, tokenOf, tstInfoOf } from "./tsp.ts";

/**
 * External anchoring of a run's journal head (spec §6.2): `seal publish`
 * stores an RFC 3161 time-stamp token over the recomputed head in
 * `<run>/seal_anchor.json`; `seal verify` checks it offline against the
 * journal as it is now and a bundle of trusted TSA roots. The only network
 * path is `publish --tsa-url`.
 */

export const ANCHOR_FILE = "seal_anchor.json";

export interface AnchorRecord {
  anchor_kind: "rfc3161";
  head_sha256: string;
  rfc3161_token_b64: string;
  rfc3161_tsa_url: string | null;
  run_id: string;
  schema_version: "1.0.0";
}

/** The journal's recomputed head, or why there is none to anchor. */
async function recomputedHead(sddDir: string, runId: string): Promise<{ head: string | null; problem: string | null; path: string }> {
  const path = journalPath(sddDir, runId);
  if (!existsSync(path)) return { head: null, problem: "missing", path };
  const r = await verifyJournal(path);
  if (!r.chain_consistent) return { head: null, problem: `the journal chain does not verify (first divergent step ${r.divergent_index})`, path };
  if (r.coverage !== "complete") return { head: null, problem: "the journal has lines that could not be read", path };
  if (!r.head) return { head: null, problem: "the journal is empty", path };
  return { head: r.head, problem: null, path };
}

export interface PublishOptions {
  sddDir: string;
  runId: string;
  tsaUrl?: string;
  tokenPath?: string;
  timeoutSeconds?: number;
  fetchImpl?: typeof fetch;
}

export interface PublishResult {
  record: AnchorRecord;
  path: string;
  /** Set when the run has no seal: the recomputed head was anchored as is. */
  note: string | null;
}

function randomNonce(): bigint {
  const b = crypto.getRandomValues(new Uint8Array(8));
  return BigInt("0x" + Buffer.from(b).toString("hex"));
}

async function askTsa(url: string, imprint: Uint8Array, timeoutSeconds: number, fetchImpl: typeof fetch): Promise<Uint8Array> {
  const nonce = randomNonce();
  let body: Uint8Array;
  try {
    const res = await fetchImpl(url, {
      method: "POST",
      headers: { "Content-Type": "application/timestamp-query", Accept: "application/timestamp-reply" },
      body: timeStampRequest(imprint, nonce),
      signal: AbortSignal.timeout(timeoutSeconds * 1000),
    });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    body = new Uint8Array(await res.arrayBuffer());
  } catch (err) {
    throw new NegativeError("tsa_failed", `time-stamping authority ${url} did not answer: ${(err as Error).message}`, { tsa_url: url });
  }
  let parsed;
  try {
    parsed = tokenOf(body);
  } catch (err) {
    throw new NegativeError("tsa_failed", `time-stamping authority ${url} answered with something that is not a time-stamp response: ${(err as Error).message}`, { tsa_url: url });
  }
  if (parsed.status !== 0 && parsed.status !== 1) throw new NegativeError("tsa_failed", `time-stamping authority ${url} refused the request (PKIStatus ${parsed.status})`, { tsa_url: url });
  const info = tstInfoOf(parsed.token);
  if (info.nonce !== nonce) throw new NegativeError("tsa_failed", `time-stamping authority ${url} did not echo the request's nonce`, { tsa_url: url });
  return parsed.token;
}

function tokenFromFile(path: string): Uint8Array {
  if (!existsSync(path)) throw new InputError("input_missing", `--token file not found: ${path}`, { path });
  let der: Uint8Array;
  try {
    der = new Uint8Array(readFileSync(path));
  } catch (err) {
    throw new InputError("input_unreadable", `cannot read --token ${path}: ${(err as Error).message}`, { path });
  }
  try {
    const t = tokenOf(der);
    if (t.status !== null && t.status !== 0 && t.status !== 1) throw new Error(`the response's PKIStatus is ${t.status} (not granted)`);
    return t.token;
  } catch (err) {
    throw new InputError("anchor_malformed", `--token ${path} is not a DER TimeStampResp or TimeStampToken: ${(err as Error).message}`, { path });
  }
}

/** `seal publish`: anchor the recomputed head with a token (from a file, or from the TSA). */
export async function publishAnchor(o: PublishOptions): Promise<PublishResult> {
  const j = await recomputedHead(o.sddDir, o.runId);
  if (j.problem === "missing") throw new InputError("run_not_found", `No journal for ${o.runId}: ${j.path}`, { run_id: o.runId, path: j.path });
  if (j.head === null) {
    throw new RefusalError("anchor_refused", `Refusing to anchor ${o.runId}: its journal chain does not verify (${j.problem}). Run bernstein replay ${o.runId} --verify for the divergent step.`, { run_id: o.runId });
  }
  const sealPath = sealPathFor(o.sddDir, o.runId);
  let note: string | null = "Note: this run carries no seal; anchoring the recomputed head.";
  if (existsSync(sealPath)) {
    const seal = readSealFile(sealPath);
    if (seal.head !== j.head) throw new RefusalError("anchor_refused", `Refusing to anchor ${o.runId}: the journal recomputes to ${j.head} but the run sealed ${seal.head}.`, { run_id: o.runId });
    note = null;
  }
  const imprint = new Uint8Array(Buffer.from(j.head, "hex"));
  let token: Uint8Array;
  if (o.tokenPath) token = tokenFromFile(o.tokenPath);
  else if (o.tsaUrl) {
    if (!/^https?:\/\//i.test(o.tsaUrl)) throw new UsageError(`--tsa-url must be an http(s) URL (got ${JSON.stringify(o.tsaUrl)})`);
    token = await askTsa(o.tsaUrl, imprint, o.timeoutSeconds ?? 30, o.fetchImpl ?? fetch);
  } else throw new UsageError("Nothing to anchor with. Pass --tsa-url URL (ask a time-stamping authority) or --token FILE (a token obtained elsewhere).", "nothing_to_do");
  let info;
  try {
    info = tstInfoOf(token);
  } catch (err) {
    throw new InputError("anchor_malformed", `the time-stamp token cannot be read: ${(err as Error).message}`);
  }
  if (!Buffer.from(info.imprint).equals(Buffer.from(imprint))) {
    throw new RefusalError("anchor_refused", `Refusing to anchor ${o.runId}: the token witnesses ${Buffer.from(info.imprint).toString("hex")}, not the journal head ${j.head}.`, { run_id: o.runId });
  }
  const record: AnchorRecord = {
    anchor_kind: "rfc3161",
    head_sha256: j.head,
    rfc3161_token_b64: Buffer.from(token).toString("base64"),
    rfc3161_tsa_url: o.tsaUrl ?? null,
    run_id: o.runId,
    schema_version: "1.0.0",
  };
  const path = join(runDir(o.sddDir, o.runId), ANCHOR_FILE);
  writeFileAtomic(path, dumps({ ...record }, { sortKeys: true, indent: 2 }) + "\n");
  return { record, path, note };
}

export type AnchorStatus = "verified" | "mismatched" | "unverifiable" | "invalid";

export interface AnchorVerdict {
  run_id: string;
  status: AnchorStatus;
  head_sha256: string | null;
  anchored_head_sha256: string;
  gen_time: string | null;
  tsa_subject: string | null;
  tsa_url: string | null;
  errors: string[];
}

function loadRecord(path: string, runId: string): AnchorRecord {
  if (!existsSync(path)) throw new InputError("anchor_not_found", `No anchor for ${runId} (${path} does not exist). Create one with bernstein seal publish.`, { run_id: runId, path });
  let v;
  try {
    v = parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new InputError("anchor_malformed", `anchor ${path} is not JSON: ${(err as Error).message}`, { path });
  }
  const bad = (why: string) => new InputError("anchor_malformed", `anchor ${path}: ${why}`, { path });
  if (!(v instanceof Map)) throw bad("not a JSON object");
  for (const k of ["anchor_kind", "head_sha256", "run_id", "schema_version", "rfc3161_token_b64"]) if (typeof v.get(k) !== "string") throw bad(`missing or non-string field ${k}`);
  if (v.get("anchor_kind") !== "rfc3161") throw bad(`unknown anchor_kind ${JSON.stringify(v.get("anchor_kind"))} (this tool checks rfc3161 anchors)`);
  if (!isLowerHex64(v.get("head_sha256") as string)) throw bad("head_sha256 is not 64 lowercase hex characters");
  const url = v.get("rfc3161_tsa_url");
  return { anchor_kind: "rfc3161", head_sha256: v.get("head_sha256") as string, rfc3161_token_b64: v.get("rfc3161_token_b64") as string, rfc3161_tsa_url: typeof url === "string" ? url : null, run_id: v.get("run_id") as string, schema_version: "1.0.0" };
}

/** `seal verify`: the stored anchor against the journal as it is now, offline. */
export async function verifyAnchor(o: { sddDir: string; runId: string; bundlePath?: string }): Promise<AnchorVerdict> {
  const record = loadRecord(join(runDir(o.sddDir, o.runId), ANCHOR_FILE), o.runId);
  let roots = null;
  if (o.bundlePath !== undefined) {
    try {
      roots = parseBundle(readFileSync(o.bundlePath, "utf8"));
    } catch (err) {
      throw new InputError("tsa_bundle_unreadable", `cannot read the trusted TSA bundle ${o.bundlePath}: ${(err as Error).message}`, { path: o.bundlePath });
    }
    if (roots.length === 0) throw new InputError("tsa_bundle_unreadable", `the trusted TSA bundle ${o.bundlePath} holds no PEM certificate`, { path: o.bundlePath });
  }
  const j = await recomputedHead(o.sddDir, o.runId);
  const base = { run_id: o.runId, head_sha256: j.head, anchored_head_sha256: record.head_sha256, tsa_url: record.rfc3161_tsa_url };
  if (j.head !== record.head_sha256) {
    const now = j.head ?? (j.problem === "missing" ? "nothing (the journal is missing)" : `nothing (${j.problem})`);
    return { ...base, status: "mismatched", gen_time: null, tsa_subject: null, errors: [`anchor witnesses head ${record.head_sha256}, artifacts recompute to ${now}`] };
  }
  if (roots === null) return { ...base, status: "unverifiable", gen_time: null, tsa_subject: null, errors: ["no trusted TSA certificates supplied - the timestamp chain was not checked"] };
  const der = decodeBase64Canonical(record.rfc3161_token_b64);
  if (der === null || der.length === 0) {
    return { ...base, status: "invalid", gen_time: null, tsa_subject: null, errors: ["rfc3161 chain: the token is not Base64"] };
  }
  const c = checkToken(der, new Uint8Array(Buffer.from(record.head_sha256, "hex")), roots);
  return { ...base, status: c.ok ? "verified" : "invalid", gen_time: c.genTime, tsa_subject: c.tsaSubject, errors: c.errors.map((e) => `rfc3161 chain: ${e}`) };
}
