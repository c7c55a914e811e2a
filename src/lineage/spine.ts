import { createHmac } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { InputError } from "../errors/index.ts";
import { compareCodePoints, dumps } from "../pyjson/encode.ts";
import { parse } from "../pyjson/parse.ts";
import { pyEquals, pyInt, pyPrefix, pyRepr, pyStr } from "../pyjson/python.ts";
import { PyNum, type PyObject, type PyValue } from "../pyjson/types.ts";
import type { Identity } from "../journal/model.ts";
import { lineageKey, type AuditKey } from "./key.ts";
import { HASH_PROFILE_FIELD, hashProfile } from "../journal/hash-profiles.ts";

/**
 * The lineage spine of a run (upstream-parity §2): `<sdd>/lineage/<run>/
 * spine.jsonl`, one HMAC-tagged, hash-chained entry per line, and
 * `spine.head`, a tagged snapshot of its count and head.
 *
 * With the audit key every check of upstream's `LineageSpine.verify` runs
 * (links, entry hashes, tags, the head file's tag). Without it only what a
 * keyless reader can check runs (links, entry hashes, the head file's
 * count and head): entry hashes are plain SHA-256, so a consistent keyless
 * spine proves consistency, not authenticity.
 */

export const SPINE_FILE = "spine.jsonl";
export const SPINE_HEAD_FILE = "spine.head";
/** `step_id` prefix of the journal-head seal entry the orchestrator appends at the end of a run. */
export const JOURNAL_HEAD_PREFIX = "replay-journal-head:";
const ATTEMPT_PREFIX = "artifact-attempt:";
const V2_PREFIX = "bernstein:lineage:v2";

const HASHED = ["prev_hash", "artifact_path", "content_hash", "actor", "step_id", "model", "timestamp"] as const;
const OPTIONAL = ["traceparent", "tracestate", "baggage"] as const;
/** Every row carries these (the hashed seven, the version, the hash and the tag). */
export const ROW_FIELDS = [...HASHED, "v", "entry_hash", "hmac"].sort(compareCodePoints);

export type SpineStatus = "no_entries" | "tampered" | "seal_only" | "ok";

export interface SpineSeal {
  /** 1-based line of the entry in spine.jsonl. */
  line: number;
  /** The journal head it seals (the step_id after the prefix). */
  head: string;
  content_hash: string;
  artifact_path: string;
}

export interface SpineVerdict {
  path: string;
  /** True when the HMAC tags were checked with the audit key. */
  keyed: boolean;
  status: SpineStatus;
  /** Lines of spine.jsonl (every line counts, as upstream numbers them). */
  entries: number;
  /** entry_hash of the last line ("" for none). */
  head_hash: string;
  /** The hash_profile spine.head names (null: legacy). */
  hash_profile: string | null;
  /** A profile this verifier cannot check (its rows and tags are RFC 8785): nothing was concluded. */
  unsupported: string | null;
  head_file: "checked" | "missing";
  /** The last journal-head seal entry. */
  seal: SpineSeal | null;
  errors: string[];
}

/** CJ-raw: sorted keys, compact, raw UTF-8 (upstream-parity §0.1). */
export function cjRaw(v: PyValue): string {
  return dumps(v, { sortKeys: true, separators: [",", ":"], ensureAscii: false });
}

function hmacHex(key: Uint8Array, text: string): string {
  return createHmac("sha256", key).update(text, "utf8").digest("hex");
}

const V1 = new PyNum("1", false);
const V2 = new PyNum("2", false);

/**
 * `"sha256:" + hex(SHA-256(prefix + CJ-raw(hashed fields)))`, the strings by
 * Python `str()`, the timestamp by `int()`; null when it cannot be built
 * ("unhashable field types").
 */
export function entryHash(row: PyObject): string | null {
  const ts = pyInt(row.get("timestamp"));
  if (ts === null) return null;
  const body = new Map<string, PyValue>();
  for (const k of HASHED) body.set(k, k === "timestamp" ? new PyNum(ts.toString(), false) : pyStr(row.get(k), "None"));
  for (const k of OPTIONAL) {
    const x = row.get(k);
    if (x !== undefined && x !== null) body.set(k, x);
  }
  const prefix = pyEquals(row.get("v"), V2) ? V2_PREFIX : "";
  return "sha256:" + (Bun.SHA256.hash(prefix + cjRaw(body), "hex") as string);
}

function parseLine(text: string): PyValue | undefined {
  try {
    return parse(text.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, ""));
  } catch {
    return undefined;
  }
}

function listRepr(xs: string[]): string {
  return pyRepr(xs);
}

interface Walk {
  errors: string[];
  prev: string;
  seal: SpineSeal | null;
  /** Every step_id is a seal or an attempt record: no produced-artifact provenance. */
  sealOnly: boolean;
}

function checkRow(n: number, row: PyObject, w: Walk, key: AuditKey | null, k2: Uint8Array | null): void {
  const missing = ROW_FIELDS.filter((f) => !row.has(f) && (key !== null || f !== "hmac"));
  const stored = pyStr(row.get("entry_hash"), "None");
  if (missing.length > 0) {
    w.errors.push(`line ${n}: missing fields ${listRepr(missing)}`);
    w.prev = stored;
    return;
  }
  const v = row.get("v");
  if (!pyEquals(v, V1) && !pyEquals(v, V2)) w.errors.push(`line ${n}: unsupported entry version ${pyRepr(v)}`);
  const prev = pyStr(row.get("prev_hash"), "None");
  if (prev !== w.prev) {
    w.errors.push(`line ${n}: prev_hash break (expected ${pyRepr(pyPrefix(w.prev, 16))}, got ${pyRepr(pyPrefix(prev, 16))})`);
  }
  const computed = entryHash(row);
  if (computed === null) w.errors.push(`line ${n}: unhashable field types`);
  else if (computed !== stored) w.errors.push(`line ${n}: entry_hash mismatch`);
  if (key !== null && k2 !== null) {
    const body = new Map(row);
    body.delete("hmac");
    const tagKey = pyEquals(v, V2) ? k2 : key.master;
    if (pyStr(row.get("hmac"), "None") !== hmacHex(tagKey, cjRaw(body))) w.errors.push(`line ${n}: hmac mismatch`);
  }
  const step = pyStr(row.get("step_id"), "None");
  if (step.startsWith(JOURNAL_HEAD_PREFIX)) {
    w.seal = {
      line: n,
      head: step.slice(JOURNAL_HEAD_PREFIX.length),
      content_hash: pyStr(row.get("content_hash"), "None"),
      artifact_path: pyStr(row.get("artifact_path"), "None"),
    };
  } else if (!step.startsWith(ATTEMPT_PREFIX)) {
    w.sealOnly = false;
  }
  w.prev = stored;
}

function readText(path: string): string | null {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new InputError("input_unreadable", `cannot read the lineage spine ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { path });
  }
  return bytes.toString("utf8");
}

/** The spine directory of a run: `<sdd>/lineage/<run_id>`. */
export function spineDir(sddDir: string, runId: string): string {
  return join(sddDir, "lineage", runId);
}

export function hasSpine(sddDir: string, runId: string): boolean {
  return existsSync(join(spineDir(sddDir, runId), SPINE_FILE));
}

function readHeadFile(dir: string): PyValue | undefined | null {
  const text = readText(join(dir, SPINE_HEAD_FILE));
  return text === null ? null : parseLine(text);
}

/** Check `spine.head` against the walked spine (its tag only with the key). */
function checkHeadFile(head: PyObject, v: SpineVerdict, k2: Uint8Array | null): void {
  if (!pyEquals(head.get("count"), new PyNum(String(v.entries), false))) {
    v.errors.push(`spine.head: count ${pyRepr(head.get("count") ?? null)} does not match the ${v.entries} line(s) of ${SPINE_FILE}`);
  }
  if (pyStr(head.get("head_hash"), "None") !== v.head_hash) v.errors.push(`spine.head: head_hash does not match the last entry_hash of ${SPINE_FILE}`);
  if (k2 !== null) {
    const body = new Map<string, PyValue>([
      ["count", head.get("count") ?? null],
      ["head_hash", head.get("head_hash") ?? null],
    ]);
    if (pyStr(head.get("hmac"), "None") !== hmacHex(k2, cjRaw(body))) v.errors.push("spine.head: hmac mismatch");
  }
}

/**
 * Verify the spine of a run; null when the run has no spine.jsonl. A
 * `jcs-v2` spine (rows and tags in RFC 8785) keeps CJ-raw entry hashes, so
 * its links and hashes are checked; its tags are not (`unsupported`).
 */
export function verifySpine(sddDir: string, runId: string, key: AuditKey | null): SpineVerdict | null {
  const dir = spineDir(sddDir, runId);
  const path = join(dir, SPINE_FILE);
  const text = readText(path);
  if (text === null) return null;
  const head = readHeadFile(dir);
  const errors: string[] = [];
  let profile: string | null = null;
  let unsupported: string | null = null;
  if (head instanceof Map && head.has(HASH_PROFILE_FIELD)) {
    const p = head.get(HASH_PROFILE_FIELD)!;
    profile = pyStr(p);
    const known = hashProfile(p, "spineHead");
    if (known === undefined) errors.push(`unknown hash_profile ${pyRepr(p)}`);
    else if (!known.spineTags) unsupported = known.name;
  }
  const tagKey = unsupported === null ? key : null;
  const k2 = tagKey ? lineageKey(tagKey.master) : null;
  const body = text.replace(/\n+$/, "");
  const lines = body === "" ? [] : body.split("\n");
  const w: Walk = { errors, prev: "", seal: null, sealOnly: true };
  lines.forEach((line, i) => {
    const row = parseLine(line);
    if (row === undefined) w.errors.push(`line ${i + 1}: malformed JSON`);
    else if (!(row instanceof Map)) w.errors.push(`line ${i + 1}: row is not an object`);
    else checkRow(i + 1, row, w, tagKey, k2);
  });
  const v: SpineVerdict = {
    path,
    keyed: tagKey !== null,
    status: "ok",
    entries: lines.length,
    head_hash: lines.length === 0 ? "" : w.prev,
    hash_profile: profile,
    unsupported,
    head_file: head === null ? "missing" : "checked",
    seal: w.seal,
    errors,
  };
  if (head !== null && !(head instanceof Map)) errors.push("spine.head: malformed JSON");
  else if (head instanceof Map && (profile === null || unsupported !== null)) checkHeadFile(head, v, k2);
  v.status = lines.length === 0 ? "no_entries" : errors.length > 0 ? "tampered" : w.sealOnly ? "seal_only" : "ok";
  return v;
}

/** The lineage-spine part of a verify's verdict (identity.ts builds it, report.ts renders it). */
export interface SpineReport {
  spine: SpineVerdict;
  /** The audit key file used, or the path looked at when there was none. */
  key_path: string;
  identity: Identity;
  /** True/false: the sealed content_hash against the journal's bytes now; null when not compared. */
  content_hash_matches: boolean | null;
  checked: string[];
  not_checked: string[];
  /** Negative findings (they make the verdict fail). */
  errors: string[];
  notes: string[];
}
